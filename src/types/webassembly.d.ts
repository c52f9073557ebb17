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
    readonly buffer: ArrayBuffer;
    grow(pages: number): number;
  }
}
type BufferSource = ArrayBufferView | ArrayBuffer;
