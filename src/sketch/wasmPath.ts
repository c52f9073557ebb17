/**
 * The WebAssembly front half of a text signer's fast path (src/sketch/textSigner.ts): texts (UTF-16 strings, or UTF-8
 * bytes in a block of lines) symbolized in the kernels' memory, with the symbol tables mirrored
 * there on demand.
 * @module
 */
import type { SymbolTable } from '../text/symbolizer.js';
import { rollPower } from '../text/symbols.js';
import { CLS, SYM, type WasmKernels } from '../wasm/wasmKernels.js';
import { symbolizeSynced, utf8UnitAt } from './symbolizeSynced.js';

/** A block of bytes placed in kernel memory, and byte scans over it (addresses in `mem`). */
export interface LoadedBlock {
  /** `mem[base + i]` is the block's byte i (until the next `load`; read `mem` again after signing: memory may grow). */
  readonly mem: Uint8Array;
  base: number;
  /** The address of the first byte in [p, end) below 0x20, a quote or a backslash, or `end`. */
  stringStop(p: number, end: number): number;
  /** The UTF-16 length of the valid UTF-8 bytes `mem[p .. end)`. */
  units(p: number, end: number): number;
}

/** Signing from UTF-8 bytes (see `TextSigner.blockSigner`). */
export interface BlockSigner {
  /**
   * A buffer of `bytes` bytes in kernel memory to read a block into (then `load` of it copies
   * nothing), valid until the next `space` or `load`: signing texts of at most `bytes` code units
   * in the meantime does not move it.
   */
  space(bytes: number): Buffer;
  /** Copies `block` (valid UTF-8) into kernel memory, unless it is the buffer `space` gave. */
  load(block: Uint8Array): LoadedBlock;
  /**
   * `signInto` of the text whose bytes are the loaded block's `[start, end)`: true, false (no
   * shingles), or null when this route declines (a character outside the BMP, a class left to
   * JavaScript, a text of at most k symbols): the caller then signs the decoded string.
   */
  signSpan(start: number, end: number, out: Uint32Array): boolean | null;
  /**
   * The shingle fingerprints (with repeats, in text order) of the text whose bytes are the loaded
   * block's `[start, end)`, as a view of kernel memory valid until the next use of this signer; or
   * null when this route declines, as {@link BlockSigner.signSpan} does (the caller then uses the
   * decoded string). The same fingerprints as the string's: verification makes sets from them.
   */
  fingerprintSpan(start: number, end: number): Uint32Array | null;
}

/** The fingerprints of the n > `shingleK` symbols at SYMS, as a view of kernel memory (valid until the next use of the kernels). */
function fingerprintsAt(k: WasmKernels, n: number, shingleK: number, bk: number): Uint32Array {
  k.fn.fingerprints(k.SYMS, n, shingleK, bk, k.FPS);
  return k.u32.subarray(k.FPS >>> 2, (k.FPS >>> 2) + n - shingleK + 1);
}

/**
 * The WebAssembly front half: copies a text into the kernel memory and symbolizes it there,
 * keeping the wasm mirror of the symbol table in step with the JS table (blocks are copied on
 * first use). `symbolize` returns the symbol count, or -1 when the text needs the JS path.
 */
export function wasmPath(k: WasmKernels, table: SymbolTable, shingleK: number) {
  const synced = new Uint8Array(256);
  const sync = (block: number): void => {
    table.build(block);
    const lo = block << 8;
    k.u8.set(table.cls.subarray(lo, lo + 256), CLS + lo);
    k.i32.set(table.sym.subarray(lo, lo + 256), (SYM >>> 2) + lo);
    synced[block] = 1;
  };
  const bk = rollPower(shingleK);
  const runs = table.kind === 'lowercase-collapse';
  const kernel = runs ? k.fn.symbolizeRuns : k.fn.symbolizeWs;
  const kernel8 = runs ? k.fn.symbolizeRuns8 : k.fn.symbolizeWs8;
  const ofSymbols = (n: number): Uint32Array => fingerprintsAt(k, n, shingleK, bk);
  const symbolize = (text: string): number => {
    const len = text.length;
    k.ensure(len + 1);
    k.buf.write(text, k.TEXT, len * 2, 'utf16le');
    return symbolizeSynced(() => kernel(k.TEXT, len, CLS, SYM, k.SYMS, table.spaceSym), (i) => text.charCodeAt(i), synced, sync);
  };
  return {
    k,
    symbolize,
    /**
     * A {@link BlockSigner} whose spans are symbolized from their bytes in the loaded block, then
     * signed by `fromSymbols` (the n > k symbols at SYMS).
     */
    blockSigner(fromSymbols: (n: number, out: Uint32Array) => boolean): BlockSigner {
      const stringStop = (p: number, end: number): number => k.fn.stringStop(p, end);
      const units = (p: number, end: number): number => k.fn.utf16Units(p, end);
      return {
        space(bytes) {
          k.ensureBlock(bytes);
          // Texts of the block have at most `bytes` units: signing them never grows the memory
          // (which would detach this view).
          k.ensure(bytes + 1);
          return Buffer.from(k.u8.buffer, k.BLOCK, bytes);
        },
        load(block) {
          // A block read into `space` is in place already.
          if (block.buffer !== k.u8.buffer || block.byteOffset !== k.BLOCK) {
            k.ensureBlock(block.length);
            k.u8.set(block, k.BLOCK);
          }
          return {
            get mem() {
              return k.u8;
            },
            base: k.BLOCK,
            stringStop,
            units,
          };
        },
        signSpan(start, end, out) {
          // At most one code unit per byte: `end − start` units of room hold the symbols.
          const len = end - start;
          k.ensure(len + 1);
          const at = k.BLOCK + start;
          const n = symbolizeSynced(() => kernel8(at, len, CLS, SYM, k.SYMS, table.spaceSym), (i) => utf8UnitAt(k.u8, at + i), synced, sync);
          return n < 0 || n <= shingleK ? null : fromSymbols(n, out);
        },
        fingerprintSpan(start, end) {
          const len = end - start;
          k.ensure(len + 1);
          const at = k.BLOCK + start;
          const n = symbolizeSynced(() => kernel8(at, len, CLS, SYM, k.SYMS, table.spaceSym), (i) => utf8UnitAt(k.u8, at + i), synced, sync);
          return n < 0 || n <= shingleK ? null : ofSymbols(n);
        },
      };
    },
    /** Fingerprints into k.FPS; returns their number, or -1 when the JS path must be used. */
    fingerprints(text: string): number {
      const n = symbolize(text);
      return n < 0 || n <= shingleK ? -1 : ofSymbols(n).length;
    },
    /** The fingerprints of the n > k symbols `symbolize` just left at SYMS: a text signed, then made a set, symbolized once. */
    fingerprintsOfSymbols: ofSymbols,
  };
}
