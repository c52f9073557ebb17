/**
 * The WebAssembly (SIMD) kernels behind the fast signing path, with their memory layout.
 * One {@link WasmKernels} per signer: its memory holds a mirror of the signer's symbol table, the
 * classic parameters, and scratch buffers for one document.
 * @module
 */
import { KERNELS_WASM_BASE64 } from './kernelsBinary.js';

interface Exports {
  memory: WebAssembly.Memory;
  /**
   * Fused normalization + symbol lookup of the UTF-16 text at `text` (`len` code units) through the
   * class table at `cls` and symbol table at `sym`, symbols written at `out`: their count, or
   * −(i+1) at the first code unit i the kernel does not handle. For tables with classes 1 (one
   * symbol) and 2 (whitespace, collapsed and trimmed): every preset but lowercase-collapse.
   */
  symbolizeWs(text: number, len: number, cls: number, sym: number, out: number, space: number): number;
  /** The same for lowercase-collapse tables: classes 1, 5 (space) and 6 (newline), runs collapsed. */
  symbolizeRuns(text: number, len: number, cls: number, sym: number, out: number, space: number): number;
  /** {@link Exports.symbolizeWs} over the UTF-8 bytes at `text` (`len` bytes, valid UTF-8); −(i+1) at byte i. */
  symbolizeWs8(text: number, len: number, cls: number, sym: number, out: number, space: number): number;
  /** {@link Exports.symbolizeRuns} over UTF-8 bytes. */
  symbolizeRuns8(text: number, len: number, cls: number, sym: number, out: number, space: number): number;
  /** The address of the first byte in [p, end) below 0x20, a quote or a backslash; `end` when none. */
  stringStop(p: number, end: number): number;
  /** The UTF-16 length of the valid UTF-8 bytes in [p, end). */
  utf16Units(p: number, end: number): number;
  oph(syms: number, n: number, k: number, bk: number, pre: number, bins: number, np: number, shift: number): void;
  fingerprints(syms: number, n: number, k: number, bk: number, out: number): void;
  /**
   * OPH's fill rounds for the empty bins of the np u32 at `bins`, from the m ≥ 1 fingerprints at
   * `fps` (premixed in place with `pre`); `round`: np i32 of scratch. See ophFillRounds.
   */
  ophFill(fps: number, m: number, pre: number, bins: number, np: number, round: number): void;
  classic(fps: number, n: number, pre: number, a: number, b: number, out: number, np: number): void;
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled module, or null when this runtime has no WebAssembly SIMD (callers then use JS). */
export function kernelsModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      if (process.env['NEARDUP_NO_WASM']) throw new Error('disabled');
      compiled = new WebAssembly.Module(Buffer.from(KERNELS_WASM_BASE64, 'base64'));
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

/** Byte offsets of the fixed regions. */
export const CLS = 0;
/** Symbol table: 65,536 int32. */
export const SYM = 65536;
const FIXED = SYM + 65536 * 4;

/** One instance of the kernels and its memory layout for `numPerm` slots. */
export class WasmKernels {
  readonly fn: Exports;
  /**
   * Byte offsets: classic a, classic b, bins (numPerm u32 each), then a block of lines read as bytes
   * (see {@link WasmKernels.ensureBlock}), text, symbols, fingerprints.
   */
  readonly A: number;
  readonly B: number;
  readonly BINS: number;
  readonly BLOCK: number;
  /** Bytes the block region holds. */
  blockCapacity = 0;
  TEXT = 0;
  SYMS = 0;
  FPS = 0;
  /** Code units the text buffer holds. */
  capacity = 0;
  /** Views, renewed whenever the memory grows. */
  u8!: Uint8Array;
  i32!: Int32Array;
  u32!: Uint32Array;
  buf!: Buffer;
  /** The numPerm u32 at BINS. */
  bins!: Uint32Array;

  constructor(
    mod: WebAssembly.Module,
    readonly numPerm: number,
  ) {
    this.fn = new WebAssembly.Instance(mod, {}).exports as unknown as Exports;
    this.A = FIXED;
    this.B = this.A + numPerm * 4;
    this.BINS = this.B + numPerm * 4;
    this.BLOCK = (this.BINS + numPerm * 4 + 15) & ~15;
    this.ensure(8192);
  }

  /**
   * Makes room for a block of `bytes` bytes at BLOCK (the text, symbol and fingerprint regions move
   * past it: they are per-document scratch). A block stays where it is when the text regions grow.
   */
  ensureBlock(bytes: number): void {
    if (bytes <= this.blockCapacity) return;
    let cap = Math.max(this.blockCapacity, 1 << 16);
    while (cap < bytes) cap *= 2;
    this.blockCapacity = cap;
    const len = this.capacity;
    this.capacity = 0;
    this.ensure(len);
  }

  /** Makes room for a text of `len` code units (its symbols and fingerprints included). */
  ensure(len: number): void {
    // The memory only grows here, so the views stay valid until the next growth.
    if (len <= this.capacity) return;
    let cap = Math.max(this.capacity, 8192);
    while (cap < len) cap *= 2;
    const text = (this.BLOCK + this.blockCapacity + 15) & ~15;
    const syms = text + ((cap * 2 + 16) & ~15);
    const fps = syms + cap * 4 + 16;
    const end = fps + cap * 4 + 16;
    const mem = this.fn.memory;
    if (end > mem.buffer.byteLength) mem.grow(Math.ceil((end - mem.buffer.byteLength) / 65536));
    this.TEXT = text;
    this.SYMS = syms;
    this.FPS = fps;
    this.capacity = cap;
    this.u8 = new Uint8Array(mem.buffer);
    this.i32 = new Int32Array(mem.buffer);
    this.u32 = new Uint32Array(mem.buffer);
    this.buf = Buffer.from(mem.buffer);
    this.bins = this.u32.subarray(this.BINS >>> 2, (this.BINS >>> 2) + this.numPerm);
  }
}
