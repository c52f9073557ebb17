// The few WebAssembly globals neardup uses: the project's lib setting (ES2022, no DOM) has none.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: BufferSource);
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    /** A memory of `initial` 64 KiB pages, up to `maximum`; `shared` ones are seen by every worker they are posted to. */
    constructor(descriptor: { initial: number; maximum?: number; shared?: boolean });
    /** The bytes (a SharedArrayBuffer for a shared memory; renewed when the memory grows). */
    readonly buffer: ArrayBuffer;
    grow(pages: number): number;
  }
}
type BufferSource = ArrayBufferView | ArrayBuffer;
