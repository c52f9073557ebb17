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
import type { MemoryTableImage } from '../memory/store.js';
import { writeAll } from './manifest.js';

const EMPTY = -1;
const FREE = -1;

/** The bitmap of the key table's occupied entries (bit h of byte h >> 3). */
export function occupiedBits(tHead: Int32Array): Uint8Array {
  const bits = new Uint8Array(Math.ceil(tHead.length / 8));
  for (let h = 0; h < tHead.length; h++) if (tHead[h] !== EMPTY) bits[h >> 3]! |= 1 << (h & 7);
  return bits;
}

/** Writes `of`'s elements at the occupied entries of `tHead`, in table order, through `buf`. */
export async function writeOccupied(f: FileHandle, tHead: Int32Array, of: Float64Array | Int32Array, buf: Uint8Array<ArrayBuffer>): Promise<void> {
  const Ctor = of instanceof Float64Array ? Float64Array : Int32Array;
  const out = new Ctor(buf.buffer, buf.byteOffset, Math.floor(buf.byteLength / of.BYTES_PER_ELEMENT));
  let n = 0;
  for (let h = 0; h < tHead.length; h++) {
    if (tHead[h] === EMPTY) continue;
    if (n === out.length) {
      await writeAll(f, new Uint8Array(out.buffer, out.byteOffset, n * of.BYTES_PER_ELEMENT));
      n = 0;
    }
    out[n++] = of[h]!;
  }
  await writeAll(f, new Uint8Array(out.buffer, out.byteOffset, n * of.BYTES_PER_ELEMENT));
}

/**
 * Spreads the `used` packed keys and heads, read into the last `used` elements of `tKey` and
 * `tHead`, to the entries `bits` marks, in place (the packed element of entry h is never before h,
 * so none is overwritten before it is moved); the other entries become empty. False when the
 * bitmap does not mark exactly `used` entries.
 */
export function spreadKeyTable(bits: Uint8Array, tKey: Float64Array, tHead: Int32Array, used: number): boolean {
  const size = tHead.length;
  let src = size - used;
  for (let h = 0; h < size; h++) {
    if ((bits[h >> 3]! >> (h & 7)) & 1) {
      if (src >= size) return false;
      tKey[h] = tKey[src]!;
      tHead[h] = tHead[src++]!;
    } else {
      tKey[h] = 0;
      tHead[h] = EMPTY;
    }
  }
  return src === size;
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

/** Bytes of the packed key table: bitmap, keys, heads. */
export function packedSizes(img: Pick<MemoryTableImage, 'tHead' | 'used'>): [bits: number, keys: number, heads: number] {
  return [Math.ceil(img.tHead.length / 8), 8 * img.used, 4 * img.used];
}
