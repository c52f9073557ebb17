/**
 * The WebAssembly kernels of exact verification (distinct, load, count over an open-addressing
 * table) and their memory layout. One {@link SetKernels} per probe table: its own instance and
 * memory, so a table stays loaded while a signer's kernels work on the next document.
 * @module
 */
import { kernelsModule } from './wasmKernels.js';

interface Exports {
  memory: WebAssembly.Memory;
  distinct(input: number, m: number, tab: number, mask: number, out: number, zf: number): number;
  load(input: number, m: number, tab: number, mask: number, zf: number): void;
  count(input: number, m: number, tab: number, mask: number, zero: number, need: number): number;
}

/** Byte offset of the flag word that says whether the value 0 is in the table. */
export const ZERO_FLAG = 0;
/** Byte offset of the table's slots. */
export const TAB = 64;

/** One instance of the set kernels: a table of `cap` slots at {@link TAB}, then an input buffer. */
export class SetKernels {
  readonly fn: Exports;
  /** Table slots the memory holds. */
  cap = 0;
  /** Byte offset of the input buffer (right after the table). */
  IN = TAB;
  /** Values the input buffer holds. */
  inCap = 0;
  /** Views, renewed whenever the memory grows. */
  u32!: Uint32Array;
  i32!: Int32Array;

  constructor(mod: WebAssembly.Module) {
    this.fn = new WebAssembly.Instance(mod, {}).exports as unknown as Exports;
    this.views();
  }

  /** The kernels, or null when this runtime has no WebAssembly SIMD (or NEARDUP_NO_WASM is set). */
  static create(): SetKernels | null {
    const mod = kernelsModule();
    return mod ? new SetKernels(mod) : null;
  }

  private views(): void {
    const buf = this.fn.memory.buffer;
    this.u32 = new Uint32Array(buf);
    this.i32 = new Int32Array(buf);
  }

  /**
   * Makes room for a table of `cap` slots (home slots and the runs spilling past them) and `m` input values. A table that already fits keeps its
   * place (and contents); growing it moves the input buffer, whose contents are scratch.
   */
  ensure(cap: number, m: number): void {
    if (cap <= this.cap && m <= this.inCap) return;
    const c = Math.max(cap, this.cap);
    const inputs = Math.max(m, this.inCap, 4096);
    const input = TAB + c * 4;
    const end = input + inputs * 4;
    const mem = this.fn.memory;
    if (end > mem.buffer.byteLength) {
      mem.grow(Math.ceil((end - mem.buffer.byteLength) / 65536));
      this.views();
    }
    this.cap = c;
    this.IN = input;
    this.inCap = inputs;
  }

  /** Copies `values` into the input buffer (room made by {@link SetKernels.ensure}). */
  put(values: Uint32Array | Int32Array): void {
    if (values instanceof Int32Array) this.i32.set(values, this.IN >>> 2);
    else this.u32.set(values, this.IN >>> 2);
  }
}
