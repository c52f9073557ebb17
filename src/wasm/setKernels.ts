/**
 * The WebAssembly kernels of exact verification (distinct, load, count over an open-addressing
 * table) and their memory layout. A {@link SetKernels} is one table: either with an instance and
 * memory of its own, so a table stays loaded while a signer's kernels work on the next document,
 * or in a region of a shared memory that also holds the sets it is probed with (streaming
 * verification's workers: src/parallel/setArena.ts), which the kernels then read in place.
 * @module
 */
import { kernelsModule } from './wasmKernels.js';
import { SET_KERNELS_SHARED_WASM_BASE64 } from './kernelsBinary.js';

interface Exports {
  distinct(input: number, m: number, tab: number, mask: number, out: number, zf: number): number;
  load(input: number, m: number, tab: number, mask: number, zf: number): void;
  count(input: number, m: number, tab: number, mask: number, zero: number, need: number): number;
  distinctGrams(syms: number, n: number, k: number, bk: number, tab: number, mask: number, out: number, zf: number): number;
  symbolizeWs(text: number, len: number, cls: number, sym: number, out: number, space: number): number;
  symbolizeRuns(text: number, len: number, cls: number, sym: number, out: number, space: number): number;
  /** symbolizeWs over UTF-8 bytes (shared module only). */
  symbolizeWs8?(text: number, len: number, cls: number, sym: number, out: number, space: number): number;
  /** symbolizeRuns over UTF-8 bytes (shared module only). */
  symbolizeRuns8?(text: number, len: number, cls: number, sym: number, out: number, space: number): number;
}

/** Bytes before the table's slots in its region: the flag word that says whether 0 is in the table. */
const HEAD = 64;

let sharedCompiled: WebAssembly.Module | null | undefined;

/** The shared-memory set kernels module, or null without WebAssembly SIMD and threads. */
function sharedModule(): WebAssembly.Module | null {
  if (sharedCompiled === undefined) {
    try {
      if (!kernelsModule()) throw new Error('no kernels');
      sharedCompiled = new WebAssembly.Module(Buffer.from(SET_KERNELS_SHARED_WASM_BASE64, 'base64'));
    } catch {
      sharedCompiled = null;
    }
  }
  return sharedCompiled;
}

/** One table's kernels: a table of `cap` slots at {@link SetKernels.TAB}, then an input buffer. */
export class SetKernels {
  readonly fn: Exports;
  readonly memory: WebAssembly.Memory;
  /** Byte offset of the zero flag word. */
  ZF = 0;
  /** Byte offset of the table's slots. */
  TAB = HEAD;
  /** Table slots the region holds. */
  cap = 0;
  /** Byte offset of the input buffer (right after the table). */
  IN = HEAD;
  /** Values the input buffer holds. */
  inCap = 0;
  /** End of the region (shared memory), or Infinity (own memory, which grows). */
  private end = Infinity;
  /** Views, renewed whenever the memory grows. */
  u32!: Uint32Array;
  i32!: Int32Array;

  private constructor(fn: Exports, memory: WebAssembly.Memory) {
    this.fn = fn;
    this.memory = memory;
    this.views();
  }

  /** Kernels with their own memory, or null when this runtime has no WebAssembly SIMD (or NEARDUP_NO_WASM is set). */
  static create(): SetKernels | null {
    const mod = kernelsModule();
    if (!mod) return null;
    const x = new WebAssembly.Instance(mod, {}).exports as unknown as Exports & { memory: WebAssembly.Memory };
    return new SetKernels(x, x.memory);
  }

  /**
   * Kernels over the shared `memory` (made by a {@link SetArena}), or null without WebAssembly SIMD
   * and threads. Give them a region with {@link SetKernels.region} before use.
   */
  static shared(memory: WebAssembly.Memory): SetKernels | null {
    const mod = sharedModule();
    if (!mod) return null;
    return new SetKernels(new WebAssembly.Instance(mod, { env: { memory } }).exports as unknown as Exports, memory);
  }

  /** Places the table in the `bytes` bytes at byte offset `base` of the shared memory (empty, no room yet). */
  region(base: number, bytes: number): void {
    this.ZF = base;
    this.TAB = base + HEAD;
    this.IN = this.TAB;
    this.cap = 0;
    this.inCap = 0;
    this.end = base + bytes;
    if (this.end > this.u32.byteLength) this.views();
  }

  /** Region bytes that a table for `n` values needs (shared memory; see {@link SetKernels.ensure}). */
  static regionBytes(n: number): number {
    return HEAD + (slotsFor(n) + n + 4) * 4 + Math.max(n, 16) * 4;
  }

  private views(): void {
    const buf = this.memory.buffer;
    this.u32 = new Uint32Array(buf);
    this.i32 = new Int32Array(buf);
  }

  /**
   * Makes room for a table of `cap` slots (home slots and the runs spilling past them) and `m` input
   * values; false when a region of shared memory is too small. A table that already fits keeps its
   * place (and contents); growing it moves the input buffer, whose contents are scratch.
   */
  ensure(cap: number, m: number): boolean {
    if (cap <= this.cap && m <= this.inCap) return true;
    const c = Math.max(cap, this.cap);
    const inputs = Math.max(m, this.inCap, this.end === Infinity ? 4096 : 16);
    const input = this.TAB + c * 4;
    const end = input + inputs * 4;
    if (end > this.end) return false;
    const mem = this.memory;
    if (end > mem.buffer.byteLength) {
      mem.grow(Math.ceil((end - mem.buffer.byteLength) / 65536));
      this.views();
    }
    this.cap = c;
    this.IN = input;
    this.inCap = inputs;
    return true;
  }

  /** Copies `values` into the input buffer (room made by {@link SetKernels.ensure}). */
  put(values: Uint32Array | Int32Array): void {
    if (values instanceof Int32Array) this.i32.set(values, this.IN >>> 2);
    else this.u32.set(values, this.IN >>> 2);
  }
}

/** Home slots of a table for `n` values (load ≤ 1/2, at least 16). */
export function slotsFor(n: number): number {
  let cap = 16;
  while (cap < 2 * n) cap *= 2;
  return cap;
}
