/**
 * Distinct fingerprint sets made entirely in a shared memory (streaming verification's set arena,
 * src/parallel/setArena.ts): the text, its symbols and the symbol tables sit in a scratch region of
 * that memory, so symbolizing, hashing and the distinct insert run in one module, and the set is
 * written straight into its block.
 *
 * Why: through the signer's own kernels the fingerprints were made in that module's private memory
 * and copied into the shared one (a copy into a SharedArrayBuffer is word by word), then read again
 * by the distinct kernel: the copy alone was 1.3 µs of 11 µs per 1.5 KB document.
 * @module
 */
import type { SymbolTable } from '../text/symbolizer.js';
import { rollPower } from '../text/symbols.js';
import type { SetKernels } from '../wasm/setKernels.js';
import type { ProbeTable } from '../similarity/probeSet.js';
import { symbolizeSynced, utf8UnitAt } from './symbolizeSynced.js';

/** Writes a text's distinct fingerprint set into shared memory (see the module comment). */
export interface ArenaSetWriter {
  /**
   * Places the text, its symbols and the symbol tables in the `bytes` bytes at byte offset `base`
   * of the kernels' shared memory (tables are copied in again: the region may hold anything).
   */
  place(base: number, bytes: number): void;
  /**
   * What `TextSigner.distinctTo` returns for `text` (the same set, in the same order, at byte
   * address `out`, room for `room` values, left loaded in `table`), or −1 when this route cannot
   * make it: the text is longer than the placed region holds, has a code unit the kernels leave to
   * JavaScript, has at most k symbols, or its set does not fit. The caller then takes the signer's
   * own route.
   */
  distinctTo(text: string, table: ProbeTable, out: number, room: number): number;
  /**
   * {@link ArenaSetWriter.distinctTo} for the text whose UTF-8 bytes (valid UTF-8: the caller's
   * guarantee) are `bytes[start .. end)`, decoded by the kernel: the text is never made a string.
   * Declines more than that: a byte length past the region's units, a character outside the BMP.
   */
  distinctBytesTo(bytes: Uint8Array, start: number, end: number, table: ProbeTable, out: number, room: number): number;
}

/** Bytes of the symbol tables: classes (u8) and symbols (i32) of the 65,536 BMP code units. */
const TABLES = 65536 + 65536 * 4;

/**
 * Region bytes an {@link ArenaSetWriter} needs for texts of up to `units` UTF-16 code units, with a
 * quarter more room, so that texts read as UTF-8 bytes with a few characters past ASCII fit too.
 */
export function arenaTextBytes(units: number): number {
  const room = units + (units >> 2) + 16;
  return 16 + TABLES + 2 * room + 16 + 4 * room + 16;
}

/**
 * Where an {@link ArenaSetWriter} placed at `base` with `bytes` of room keeps its class and symbol
 * tables, the text, and the symbols (16-byte aligned), and how many code units (`cap`) the text holds.
 */
function regionLayout(base: number, bytes: number): { cls: number; sym: number; text: number; cap: number; syms: number } {
  const cls = (base + 15) & ~15;
  const sym = cls + 65536;
  const text = sym + 65536 * 4;
  const cap = Math.max(0, Math.floor((base + bytes - text - 32) / 6));
  const syms = (text + 2 * cap + 16) & ~15;
  return { cls, sym, text, cap, syms };
}

/**
 * An {@link ArenaSetWriter} over `kernels` (made on the shared memory) for character `k`-grams
 * symbolized by `table`.
 */
export function arenaSetWriter(kernels: SetKernels, table: SymbolTable, k: number): ArenaSetWriter {
  const fn = kernels.fn;
  const runs = table.kind === 'lowercase-collapse';
  const symbolize = runs ? fn.symbolizeRuns : fn.symbolizeWs;
  const symbolizeBytes = runs ? fn.symbolizeRuns8 : fn.symbolizeWs8;
  const bk = rollPower(k);
  const built: number[] = [];
  const synced = new Uint8Array(256);
  let cls = 0;
  let sym = 0;
  let text = 0;
  let syms = 0;
  /** Code units the placed region holds. */
  let cap = 0;
  let u8 = new Uint8Array(0);
  let i32 = new Int32Array(0);
  let buf = Buffer.alloc(0);
  const views = (): void => {
    const b = kernels.memory.buffer;
    if (b.byteLength === u8.byteLength) return;
    u8 = new Uint8Array(b);
    i32 = new Int32Array(b);
    buf = Buffer.from(b);
  };
  const copyBlock = (block: number): void => {
    const lo = block << 8;
    u8.set(table.cls.subarray(lo, lo + 256), cls + lo);
    i32.set(table.sym.subarray(lo, lo + 256), (sym >>> 2) + lo);
  };
  const sync = (block: number): void => {
    table.build(block);
    copyBlock(block);
    synced[block] = 1;
    built.push(block);
  };
  /** Symbolizes the `len` units at `text` (copying in the table blocks met), then makes the set. Why these parameters: once per document. */
  const setOf = (
    kernel: (text: number, len: number, cls: number, sym: number, out: number, space: number) => number,
    len: number,
    unitAt: (i: number) => number,
    probe: ProbeTable,
    out: number,
    room: number,
  ): number => {
    const n = symbolizeSynced(() => kernel(text, len, cls, sym, syms, table.spaceSym), unitAt, synced, sync);
    if (n < 0 || n <= k || n - k + 1 > room || !probe.fits(n - k + 1)) return -1;
    return probe.distinctGramsTo(syms, n, k, bk, out);
  };
  return {
    place(base, bytes) {
      cap = 0;
      if (bytes < arenaTextBytes(1)) return; // no room for the tables: every text takes the other route
      views();
      ({ cls, sym, text, cap, syms } = regionLayout(base, bytes));
      // Class 0 sends a code unit back here (see sync below): blocks not copied in yet read as 0.
      u8.fill(0, cls, cls + 65536);
      synced.fill(0);
      for (const block of built) {
        copyBlock(block);
        synced[block] = 1;
      }
    },
    distinctTo(s, probe, out, room) {
      const len = s.length;
      if (len > cap || cap === 0) return -1;
      views();
      buf.write(s, text, len * 2, 'utf16le');
      return setOf(symbolize, len, (i) => s.charCodeAt(i), probe, out, room);
    },
    /** Why these parameters: called once per document read as bytes (the interface's signature), with nothing allocated per call. */
    distinctBytesTo(bytes, start, end, probe, out, room) {
      // At most one code unit per byte: `cap` bytes cannot make more symbols than the region holds.
      const len = end - start;
      if (len > cap || cap === 0 || !symbolizeBytes) return -1;
      views();
      u8.set(bytes.subarray(start, end), text);
      return setOf(symbolizeBytes, len, (i) => utf8UnitAt(bytes, start + i), probe, out, room);
    },
  };
}
