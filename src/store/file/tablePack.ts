/**
 * The parts of the band table that the checkpoint (src/store/file/checkpoint.ts) does not
 * store as they are in memory, and how open makes them again:
 * - the key table is written packed: a bitmap of its occupied entries, then only those entries'
 *   keys and chain heads, in table order. Open reads the packed keys and heads into the tail of
 *   the full-size arrays and spreads them forward, in place, to their entries (one sequential pass;
 *   no hashing, no probing). Why: the table is a power of two at most 70 % full, so 30–60 % of its
 *   12 bytes per entry were empty slots (~170 B per document at 10^6 documents).
 * - the forward posting links (`next`) are not written: they follow from the backward ones
 *   (`next[prev[p]] = p` for every posting with a predecessor, -1 for a chain's last, -2 for a
 *   posting on no chain), one pass over the postings, 128 B per document saved with 32 keys. The
 *   backward links are the ones written because a chain's head holds its key table entry there
 *   (-2 − entry): made again from the forward links, each head's would be a random write into a
 *   2 GB array (16.7 s for 190M heads at 12.4M documents, where the rest of the open took 12 s).
 * @module
 */
import type { FileHandle } from 'node:fs/promises';
import { PendingWrites, writeAt } from './manifest.js';

const EMPTY = -1;
/** `next` of a posting on no chain (src/store/memory/store.ts). */
const UNLINKED = -2;

/** 2^21: a key is `hi · 2^21 + lo`, `lo` 21 bits, and its home entry is `hi & (tableSize - 1)`. */
const LO = 2097152;
/** Key tables of at least this many entries may code keys in 32 bits (the 32 - log2(size) high bits of hi and lo's 21). */
const CODED_MIN = 1 << 21;
/** The farthest a key may sit past its home for its distance to be coded (one byte). */
const MAX_DISTANCE = 255;

/**
 * How a table of `size` entries writes its keys first: `u32` (each key as a 32-bit code beside its
 * entry's distance from its home, one byte: the home gives log2(size) bits of the key) from 2^21
 * entries, else `f64` (the keys as they are). A `u32` write that meets a key more than 255 entries
 * past its home (measured: at most 79 at 10^6 documents) stops, and the table is written `f64`.
 */
export const firstCoding = (size: number): 'u32' | 'f64' => (size >= CODED_MIN ? 'u32' : 'f64');

/** Key `key`'s 32-bit code in a table of 2^bits entries: hi's bits above the home's, then lo (`u32` coding). */
export function keyCode(key: number, bits: number): number {
  const hi = Math.floor(key / LO);
  return (hi >>> bits) * LO + (key - hi * LO);
}

/** How far entry `h` is past the home of `key` (a table of `mask + 1` entries). */
export const homeDistance = (key: number, h: number, mask: number): number => (h - ((key / LO) & mask)) & mask;

/** A key table to write packed: its keys and heads, its entries in use, how its keys are coded, the bitmap to fill. */
export interface PackedKeys {
  tKey: Float64Array;
  tHead: Int32Array;
  used: number;
  coding: 'u32' | 'f64';
  /** Zeroed, `size / 8` bytes: bit h of byte h >> 3 set for each occupied entry h. */
  bits: Uint8Array;
}

/** A key table read packed, to spread: the bitmap, the arrays with the packed elements at their ends, the entries in use, the distances (`u32`). */
export interface SpreadKeys {
  bits: Uint8Array;
  tKey: Float64Array;
  tHead: Int32Array;
  used: number;
  dist?: Uint8Array | undefined;
}

/**
 * Writes the packed key table's distances (`u32` only), keys and heads, the sections from byte
 * `pos` of `f` in that order, in one pass over the table through `buf` (each chunk's three parts
 * written at their places), and fills the bitmap of occupied entries. False, part-written, when a
 * `u32` key sits more than 255 entries past its home (write the table `f64` instead).
 */
export async function writePackedKeys(f: FileHandle, pos: number, t: PackedKeys, buf: Uint8Array<ArrayBuffer>): Promise<boolean> {
  const { tKey, tHead, used, coding, bits: map } = t;
  const mask = tHead.length - 1;
  const bits = Math.log2(tHead.length);
  const u32 = coding === 'u32';
  const kb = u32 ? 4 : 8;
  // Two halves of `buf`: one is packed here while the other's write runs on libuv's threads. Each
  // holds a bitmap byte's 8 entries at least (16 bytes an element): a smaller `buf` (a test's) is not used.
  const room = buf.byteLength >= 256 ? buf : new Uint8Array(256);
  const halves = [packHalf(room, 0, u32), packHalf(room, 1, u32)] as const;
  const at = { dist: pos, keys: pos + (u32 ? used : 0), heads: pos + (u32 ? used : 0) + kb * used };
  const writes = new PendingWrites();
  let half = 0;
  // Branchless over the bitmap's bytes, as the spreads below are (the occupied bits are random):
  // every entry is packed at `slot.n`, which moves on only past an occupied one. An empty entry's
  // key is whatever was left there, coded and then overwritten, never written out.
  const { keys, heads, dist } = halves[0];
  const slot: PackSlot = { tKey, tHead, map, keys, heads, dist, n: 0, far: 0, mask, bits };
  /** Starts the write of the half packed; returns the write of the other, awaited before it is packed again. */
  const flush = () => {
    const { n } = slot;
    const c = halves[half]!;
    const to = { ...at };
    [at.dist, at.keys, at.heads] = [at.dist + n, at.keys + kb * n, at.heads + 4 * n];
    c.written = writes.add(writeHalf(f, { c, n, kb, to }));
    half ^= 1;
    const next = halves[half]!;
    Object.assign(slot, { keys: next.keys, heads: next.heads, dist: next.dist, n: 0 });
    return next.written;
  };
  try {
    for (let i = 0; i < map.length;) {
      i = u32 ? packCoded(slot, i) : packPlain(slot, i);
      // A `u32` key too far from its home stops the write: it is made again `f64`.
      if (slot.far !== 0) return false;
      await flush();
    }
  } finally {
    await writes.done();
  }
  return true;
}

/**
 * What {@link packCoded} and {@link packPlain} pack from and into: the table's keys, heads and
 * bitmap, the half's arrays, its next element, whether a `u32` key sat too far, the table's mask
 * and log2 size.
 */
interface PackSlot {
  tKey: Float64Array;
  tHead: Int32Array;
  map: Uint8Array;
  keys: Uint32Array | Float64Array;
  heads: Int32Array;
  dist: Uint8Array;
  n: number;
  /** Not 0 once an occupied entry's distance from its home passed {@link MAX_DISTANCE}. */
  far: number;
  mask: number;
  bits: number;
}

/** 1 when a head is not {@link EMPTY}, else 0, without a branch. */
const isUsed = (head: number): number => ((head + 1) | -(head + 1)) >>> 31;

// Both pack the entries of the bitmap's bytes from byte `i` on, until the half is full (room for
// fewer than 8 more) or a `u32` key sits too far, and return the next byte to pack.

/** Packs entries as `u32` codes with their distances. */
function packCoded(s: PackSlot, i: number): number {
  const { tKey, tHead, map, dist, mask, bits } = s;
  const keys = s.keys as Uint32Array;
  const heads = s.heads;
  const room = heads.length - 8;
  const size = mask + 1;
  let { n, far } = s;
  for (; i < map.length && n <= room && far === 0; i++) {
    let b = 0;
    const h0 = i << 3;
    const end = Math.min(h0 + 8, size);
    for (let h = h0; h < end; h++) {
      const head = tHead[h]!;
      const o = isUsed(head);
      const key = tKey[h]!;
      const d = homeDistance(key, h, mask);
      far |= d & ~MAX_DISTANCE & -o; // not 0 when d > MAX_DISTANCE (255, one less than a power of two)
      keys[n] = keyCode(key, bits);
      dist[n] = d;
      heads[n] = head;
      b |= o << (h - h0);
      n += o;
    }
    map[i] = b;
  }
  s.n = n;
  s.far = far;
  return i;
}

/** Packs entries with their keys as they are (`f64`). */
function packPlain(s: PackSlot, i: number): number {
  const { tKey, tHead, map } = s;
  const keys = s.keys as Float64Array;
  const heads = s.heads;
  const room = heads.length - 8;
  const size = s.mask + 1;
  let n = s.n;
  for (; i < map.length && n <= room; i++) {
    let b = 0;
    const h0 = i << 3;
    const end = Math.min(h0 + 8, size);
    for (let h = h0; h < end; h++) {
      const head = tHead[h]!;
      const o = isUsed(head);
      keys[n] = tKey[h]!;
      heads[n] = head;
      b |= o << (h - h0);
      n += o;
    }
    map[i] = b;
  }
  s.n = n;
  return i;
}

/** One half of the packed key table's write buffer: its elements' arrays, and the write of what it held last. */
interface PackHalf {
  keys: Uint32Array | Float64Array;
  heads: Int32Array;
  dist: Uint8Array;
  written: Promise<void>;
}

/** Half `i` of `buf` as a {@link PackHalf} (16 bytes an element at most: a key, a head, a distance). */
function packHalf(buf: Uint8Array<ArrayBuffer>, i: number, u32: boolean): PackHalf {
  const bytes = Math.floor(buf.byteLength / 32) * 16;
  const E = bytes / 16;
  const off = buf.byteOffset + i * bytes;
  const keys = u32 ? new Uint32Array(buf.buffer, off, E) : new Float64Array(buf.buffer, off, E);
  return { keys, heads: new Int32Array(buf.buffer, off + 8 * E, E), dist: new Uint8Array(buf.buffer, off + 12 * E, E), written: Promise.resolve() };
}

/** Writes the first `n` elements of half `c` at their places `to` (the distances only when keys take 4 bytes: `u32`). */
async function writeHalf(f: FileHandle, o: { c: PackHalf; n: number; kb: number; to: { dist: number; keys: number; heads: number } }): Promise<void> {
  const { c, n, kb, to } = o;
  if (kb === 4) await writeAt(f, c.dist.subarray(0, n), to.dist);
  await writeAt(f, new Uint8Array(c.keys.buffer, c.keys.byteOffset, kb * n), to.keys);
  await writeAt(f, new Uint8Array(c.heads.buffer, c.heads.byteOffset, 4 * n), to.heads);
}

/**
 * Spreads the `used` packed keys and heads to the entries `bits` marks, in place: the heads were
 * read into the last `used` elements of `tHead`; the keys into the last `used` elements of `tKey`
 * (`f64`), or as 32-bit codes into its last `4 · used` bytes with their distances in `dist`
 * (`u32`). A packed element is never overwritten before it is moved (it lies at or after the
 * place of the entry it goes to). Entries not marked become empty (their key is whatever was
 * there: an empty entry's key is never read). False when the bitmap does not mark exactly `used`
 * entries.
 */
export function spreadKeyTable(t: SpreadKeys): boolean {
  const { bits, tKey, tHead, used, dist } = t;
  const size = tHead.length;
  const [r, h] = dist ? spreadCoded(t, dist, new Uint32Array(tKey.buffer, tKey.byteOffset + 8 * size - 4 * used, used)) : spreadPlain(t);
  for (let k = h; k < size; k++) if ((bits[k >> 3]! >> (k & 7)) & 1) return false;
  tHead.fill(EMPTY, h);
  return r === used;
}

// Both loops run without branches on the bitmap (its bits are random: a branch on each was
// mispredicted half the time, ~35 % of the pass): every entry takes the next packed key (an empty
// one keeps it, never read, and it lies before the next packed element, so nothing unread is
// overwritten) and the next packed head or -1; the next packed element is the next entry's only
// when this one was marked. One loop per coding, over the bitmap's bytes: a coding test inside
// the loop made it 1.5x slower at 2^28 entries. A byte's entries past the last packed element read
// past the packed arrays (undefined): they are unmarked, so they become empty, and the check after
// the loop refuses a bitmap that marks any of them. Each returns [elements moved, entries done].

/** {@link spreadKeyTable} of `u32` codes with their distances. */
function spreadCoded(t: SpreadKeys, dist: Uint8Array, codes: Uint32Array): [number, number] {
  const { bits, tKey, tHead, used } = t;
  const size = tHead.length;
  const mask = size - 1;
  const from = size - used;
  let r = 0;
  let h = 0;
  for (let i = 0; i < bits.length && r < used; i++) {
    const b = bits[i]!;
    for (let k = 0; k < 8; k++, h++) {
      const o = (b >> k) & 1;
      const c = codes[r]!;
      tKey[h] = ((c >>> 21) * size + ((h - dist[r]!) & mask)) * LO + (c & (LO - 1));
      tHead[h] = (tHead[from + r]! & -o) | (o - 1);
      r += o;
    }
  }
  return [r, Math.min(h, size)];
}

/** {@link spreadKeyTable} of keys as they are (`f64`). */
function spreadPlain(t: SpreadKeys): [number, number] {
  const { bits, tKey, tHead, used } = t;
  const size = tHead.length;
  const from = size - used;
  let r = 0;
  let h = 0;
  for (let i = 0; i < bits.length && r < used; i++) {
    const b = bits[i]!;
    for (let k = 0; k < 8; k++, h++) {
      const o = (b >> k) & 1;
      tKey[h] = tKey[from + r]!;
      tHead[h] = (tHead[from + r]! & -o) | (o - 1);
      r += o;
    }
  }
  return [r, Math.min(h, size)];
}

/** What {@link nextFromPrev} walks: the backward links of `count` postings (those of every slot, live or free). */
export interface Postings {
  count: number;
  prev: Int32Array;
}

/**
 * The forward links of the posting chains, from the backward ones, into `next`: a predecessor's
 * successor, -1 for a chain's last, -2 for a posting on no chain. False when a link points
 * outside the postings.
 */
export function nextFromPrev(p: Postings, next: Int32Array): boolean {
  const { count, prev } = p;
  // Sequential first: the pages mapped in order, and every chain's last left at -1.
  next.fill(EMPTY, 0, count);
  for (let q = 0; q < count; q++) {
    const b = prev[q]!;
    if (b >= 0) {
      if (b >= count) return false;
      next[b] = q;
    } else if (b === EMPTY) next[q] = UNLINKED;
  }
  return true;
}

/** Bytes of the packed key table's sections: bitmap, distances, keys, heads. */
export function packedSizes(tableSize: number, used: number, coding: 'u32' | 'f64'): [bits: number, dist: number, keys: number, heads: number] {
  return [Math.ceil(tableSize / 8), coding === 'u32' ? used : 0, (coding === 'u32' ? 4 : 8) * used, 4 * used];
}

/**
 * What open makes again: the packed key table spread, or the forward links (in a worker thread
 * each from 2^18 documents: src/store/file/rebuildWorker.ts).
 */
export type RebuildJob = { kind: 'spread'; keys: SpreadKeys } | { kind: 'next'; postings: Postings; next: Int32Array };

/** Runs a {@link RebuildJob}; false when what it read does not hold together. */
export function runJob(job: RebuildJob): boolean {
  if (job.kind === 'spread') return spreadKeyTable(job.keys);
  return nextFromPrev(job.postings, job.next);
}
