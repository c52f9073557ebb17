/**
 * The windows' sweep of ./byteWindows.ts in WebAssembly (`sweep` of src/wasm/kernels.wat): the
 * same windows and anchors as its JavaScript loop, which took a quarter of a substring run's CPU
 * (two hashes and two deques per gram, in a loop V8 keeps bounds-checking). The token stream is
 * copied into the kernel's memory per document (13 bytes a token, a memcpy), the windows are read
 * back as views of it.
 * @module
 */
import { kernelsModule } from '../wasm/wasmKernels.js';

/** The kernel's one export used here (the module's other kernels are not). */
interface SweepExports {
  sweep(base: number, cap: number, n: number, G: number, L: number, nw: number): number;
  sweepAll(base: number, cap: number, n: number, G: number, L: number): number;
  memory: WebAssembly.Memory;
}

/** One document's token stream, as ByteWindows holds it. */
export interface TokenStream {
  /** Tokens. */
  n: number;
  /** Normalized code units. */
  m: number;
  byteAt: Int32Array;
  codeAt: Int32Array;
  first: Uint8Array;
  p0: Uint32Array;
  pow0: Uint32Array;
}

/** What a sweep leaves: `w` windows (first token, end, anchor run), each run's anchor hash in `ah`. */
export interface Swept {
  w: number;
  wa: Int32Array<ArrayBuffer>;
  we: Int32Array<ArrayBuffer>;
  wj: Int32Array<ArrayBuffer>;
  ah: Uint32Array<ArrayBuffer>;
}

/** Regions of 4·cap bytes each, in the kernel's order (scripts/build-wasm.mjs, SWEEP_REGIONS); `first` is last. */
const REGION = { byteAt: 0, codeAt: 1, p0: 2, pow0: 3, ah: 8, wa: 9, we: 10, wj: 11, walk: 12, first: 13 } as const;
/** Regions of i32 (`first`, of u8, after them). */
const I32_REGIONS = 13;

/** The sweep kernel in an instance of its own, or nothing where the runtime has no WebAssembly SIMD ({@link SweepKernel.make}). */
export class SweepKernel {
  /** Elements each region holds. */
  private cap = 0;
  /** pow0's elements already in the kernel's memory (they do not change from document to document). */
  private pows = 0;

  private constructor(private readonly fn: SweepExports) {}

  /** The kernel, or null without the kernels (NEARDUP_NO_WASM, no SIMD): the caller's JavaScript loop then. */
  static make(): SweepKernel | null {
    const mod = kernelsModule();
    return mod ? new SweepKernel(new WebAssembly.Instance(mod, {}).exports as unknown as SweepExports) : null;
  }

  /**
   * The windows of `s` for windows of `L` UTF-8 bytes and grams of `G` code points: all of them, or
   * with `walk` only its first `nw` (window indices, ascending), written in that order; `w` counts
   * them all either way.
   */
  run(s: TokenStream, o: { G: number; L: number; walk?: Int32Array; nw?: number }): Swept {
    this.room(Math.max(s.n, s.m) + 1);
    const cap = this.cap;
    const ab = this.fn.memory.buffer as ArrayBuffer;
    const i32 = new Int32Array(ab);
    const u32 = new Uint32Array(ab);
    i32.set(s.byteAt.subarray(0, s.n + 1), REGION.byteAt * cap);
    i32.set(s.codeAt.subarray(0, s.n + 1), REGION.codeAt * cap);
    u32.set(s.p0.subarray(0, s.m + 1), REGION.p0 * cap);
    if (this.pows < s.m + 1) {
      this.pows = Math.min(cap, s.pow0.length);
      u32.set(s.pow0.subarray(0, this.pows), REGION.pow0 * cap);
    }
    new Uint8Array(ab).set(s.first.subarray(0, s.n), REGION.first * 4 * cap);
    const nw = o.walk ? o.nw! : -1;
    if (o.walk) i32.set(o.walk.subarray(0, nw), REGION.walk * cap);
    const w = nw < 0 ? this.fn.sweepAll(0, cap, s.n, o.G, o.L) : this.fn.sweep(0, cap, s.n, o.G, o.L, nw);
    const len = nw < 0 ? w : nw;
    const view = (r: number) => i32.subarray(r * cap, r * cap + len);
    return { w, wa: view(REGION.wa), we: view(REGION.we), wj: view(REGION.wj), ah: u32.subarray(REGION.ah * cap, REGION.ah * cap + len) };
  }

  /** Room for `elements` per region (the memory grown, the regions laid out again). */
  private room(elements: number): void {
    if (elements <= this.cap) return;
    let cap = Math.max(this.cap, 4096);
    while (cap < elements) cap *= 2;
    // The i32 regions, first (u8), then sweepAll's two arrays of i64.
    const bytes = I32_REGIONS * 4 * cap + cap + 8 + 16 * cap;
    const mem = this.fn.memory;
    if (bytes > mem.buffer.byteLength) mem.grow(Math.ceil((bytes - mem.buffer.byteLength) / 65536));
    this.cap = cap;
    this.pows = 0;
  }
}
