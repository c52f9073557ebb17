/**
 * The parts of the band table that checkpoint format 4 (src/store/file/checkpoint.ts) does not
 * store as they are in memory, and how open makes them again:
 * - the key table is written packed: a bitmap of its occupied entries, then only those entries'
 *   keys and chain heads, in table order. Open reads the packed keys and heads into the tail of
 *   the full-size arrays and spreads them forward, in place, to their entries (one sequential pass;
 *   no hashing, no probing). Why: the table is a power of two at most 70 % full, so 30–60 % of its
 *   12 bytes per entry were empty slots (~170 B per document at 10^6 documents).
 * - the backward posting links (`prev`) are not written: they follow from the forward links
 *   (`prev[next[p]] = p` for every linked posting), one pass over the postings (~0.4 s at 10^6
 *   documents on a loaded 2-core machine), 128 B per document saved with 32 keys.
 * @module
 */
import type { FileHandle } from 'node:fs/promises';
import { writeAll } from './manifest.js';

const EMPTY = -1;
const FREE = -1;

/** The bitmap of the key table's occupied entries (bit h of byte h >> 3). */
export function occupiedBits(tHead: Int32Array): Uint8Array {
  const bits = new Uint8Array(Math.ceil(tHead.length / 8));
  for (let h = 0; h < tHead.length; h++) if (tHead[h] !== EMPTY) bits[h >> 3]! |= 1 << (h & 7);
  return bits;
}

/** One column of the packed key table: per occupied entry h, `at(h)`, as an element of `Ctor`. */
export interface Column {
  Ctor: Float64ArrayConstructor | Int32ArrayConstructor | Uint32ArrayConstructor | Uint8ArrayConstructor;
  at: (h: number) => number;
}

/** Writes `col` at the occupied entries of `tHead`, in table order, through `buf`. */
export async function writeOccupied(f: FileHandle, tHead: Int32Array, col: Column, buf: Uint8Array<ArrayBuffer>): Promise<void> {
  const size = col.Ctor.BYTES_PER_ELEMENT;
  const out = new col.Ctor(buf.buffer, buf.byteOffset, Math.floor(buf.byteLength / size));
  let n = 0;
  for (let h = 0; h < tHead.length; h++) {
    if (tHead[h] === EMPTY) continue;
    if (n === out.length) {
      await writeAll(f, new Uint8Array(out.buffer, out.byteOffset, n * size));
      n = 0;
    }
    out[n++] = col.at(h);
  }
  await writeAll(f, new Uint8Array(out.buffer, out.byteOffset, n * size));
}

/** 2^21: a key is `hi · 2^21 + lo`, `lo` 21 bits, and its home entry is `hi & (tableSize - 1)`. */
const LO = 2097152;
/** Key tables of at least this many entries may code keys in 32 bits (the 32 - log2(size) high bits of hi and lo's 21). */
const CODED_MIN = 1 << 21;
/** The farthest a key may sit past its home for its distance to be coded (one byte). */
const MAX_DISTANCE = 255;

/**
 * How the packed keys are written: `u32` (each key as a 32-bit code beside its entry's distance
 * from its home, one byte: the home gives log2(size) bits of the key) when the table has at least
 * 2^21 entries and no key sits more than 255 entries past its home (measured: at most 79 at 10^6
 * documents), else `f64` (the keys as they are).
 */
export function keyCoding(tKey: Float64Array, tHead: Int32Array): 'u32' | 'f64' {
  const size = tHead.length;
  if (size < CODED_MIN) return 'f64';
  const mask = size - 1;
  for (let h = 0; h < size; h++) if (tHead[h] !== EMPTY && ((h - ((tKey[h]! / LO) & mask)) & mask) > MAX_DISTANCE) return 'f64';
  return 'u32';
}

/** The columns of the packed key table, in file order: distances (`u32` only), keys, heads. */
export function keyColumns(tKey: Float64Array, tHead: Int32Array, coding: 'u32' | 'f64'): Column[] {
  const size = tHead.length;
  const mask = size - 1;
  const bits = Math.log2(size);
  const heads: Column = { Ctor: Int32Array, at: (h) => tHead[h]! };
  if (coding === 'f64') return [{ Ctor: Float64Array, at: (h) => tKey[h]! }, heads];
  const code = (h: number) => {
    const hi = Math.floor(tKey[h]! / LO);
    return (hi >>> bits) * LO + (tKey[h]! - hi * LO);
  };
  return [{ Ctor: Uint8Array, at: (h) => (h - ((tKey[h]! / LO) & mask)) & mask }, { Ctor: Uint32Array, at: code }, heads];
}

/**
 * Spreads the `used` packed keys and heads to the entries `bits` marks, in place: the heads were
 * read into the last `used` elements of `tHead`; the keys into the last `used` elements of `tKey`
 * (`f64`), or as 32-bit codes into its last `4 · used` bytes with their distances in `dist`
 * (`u32`). A packed element is never overwritten before it is moved (it lies at or after the
 * place of the entry it goes to). Entries not marked become empty (their key is left as it is: an
 * empty entry's key is never read). False when the bitmap does not mark exactly `used` entries.
 */
export function spreadKeyTable(bits: Uint8Array, tKey: Float64Array, tHead: Int32Array, used: number, dist?: Uint8Array): boolean {
  const size = tHead.length;
  const mask = size - 1;
  const codes = dist ? new Uint32Array(tKey.buffer, tKey.byteOffset + 8 * size - 4 * used, used) : null;
  const from = size - used;
  let r = 0;
  for (let h = 0; h < size; h++) {
    if (((bits[h >> 3]! >> (h & 7)) & 1) === 0) {
      tHead[h] = EMPTY;
      continue;
    }
    if (r === used) return false;
    if (codes) {
      const c = codes[r]!;
      tKey[h] = ((c >>> 21) * size + ((h - dist![r]!) & mask)) * LO + (c & (LO - 1));
    } else tKey[h] = tKey[from + r]!;
    tHead[h] = tHead[from + r++]!;
  }
  return r === used;
}

/** What {@link prevFromNext} walks: each live slot's keys are its record's bytes after `keyOffset`, 8 each. */
export interface Postings {
  slots: number;
  keysPerSlot: number;
  keyOffset: number;
  recLen: Uint32Array;
  /** Per slot: -1 for a free slot. */
  idLen: Int32Array;
  next: Int32Array;
}

/**
 * The backward links of the posting chains, from the forward ones, into `prev` (all -1 on entry):
 * only the postings a live slot has linked are walked (a reused slot's unused positions may hold
 * stale links). False when a link points outside the postings.
 */
export function prevFromNext(p: Postings, prev: Int32Array): boolean {
  const K = p.keysPerSlot;
  const end = p.slots * K;
  for (let s = 0; s < p.slots; s++) {
    if (p.idLen[s] === FREE) continue;
    const keys = (p.recLen[s]! - p.keyOffset) / 8;
    for (let q = s * K, last = q + keys; q < last; q++) {
      const n = p.next[q]!;
      if (n === EMPTY) continue;
      if (n < 0 || n >= end) return false;
      prev[n] = q;
    }
  }
  return true;
}

/** Bytes of the packed key table's sections: bitmap, distances, keys, heads. */
export function packedSizes(tableSize: number, used: number, coding: 'u32' | 'f64'): [bits: number, dist: number, keys: number, heads: number] {
  return [Math.ceil(tableSize / 8), coding === 'u32' ? used : 0, (coding === 'u32' ? 4 : 8) * used, 4 * used];
}
