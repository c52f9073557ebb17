/**
 * A full check of a band table's postings (`neardup index check` on the stores that keep one: the
 * file store, Redis's log layout): every key table entry reachable from its home, every chain
 * walked once with its backward links, each posting holding its entry's key at its place in its
 * document's record, and every key of every live document on a chain. Why: a table rebuilt wrong
 * at open (keys lost by a worker thread) answered lookups without an error and passed a check that
 * compared each document's keys with themselves. O(entries + postings), one bit per posting.
 * @module
 */

const EMPTY = -1;

/** The table's arrays, and how a slot's keys are found in its record. */
export interface PostingTable {
  tKey: Float64Array;
  tHead: Int32Array;
  next: Int32Array;
  prev: Int32Array;
  /** Postings per slot (`slot · keysPerSlot + j` is key j's posting). */
  keysPerSlot: number;
  /** Slots in use (live or free). */
  slots: number;
  recOff: Float64Array;
  recLen: Uint32Array;
  arena: Uint8Array;
  /** Bytes of each record before its keys (8 bytes each, little-endian doubles, to the record's end). */
  keyOffset: number;
  /** Whether a slot holds a live document. */
  live: (slot: number) => boolean;
  /** A live slot's id (for messages). */
  idOf: (slot: number) => string | undefined;
}

/** The first `max` problems found (and a count of the rest), none when the postings hold together. */
export function postingErrors(t: PostingTable, max = 20): string[] {
  const errors: string[] = [];
  let count = 0;
  const fail = (m: string) => (count++ < max ? errors.push(m) : 0);
  const view = new DataView(t.arena.buffer, t.arena.byteOffset, t.arena.byteLength);
  const keysIn = (s: number) => (t.live(s) ? (t.recLen[s]! - t.keyOffset) / 8 : -1);
  const keyAt = (s: number, j: number) => view.getFloat64(t.recOff[s]! + t.keyOffset + 8 * j, true);
  const seen = new Uint8Array(Math.ceil((t.slots * t.keysPerSlot) / 8));
  entriesReachable(t, fail);
  for (let h = 0; h < t.tHead.length; h++) {
    const key = t.tKey[h]!;
    for (let p = t.tHead[h]!, before = EMPTY; p !== EMPTY; before = p, p = t.next[p]!) {
      const s = Math.floor(p / t.keysPerSlot);
      const j = p % t.keysPerSlot;
      if (!(p >= 0 && s < t.slots) || seen[p >> 3]! & (1 << (p & 7))) {
        fail(`key table entry ${h}: its chain ${p < 0 || s >= t.slots ? `points outside the postings (${p})` : `meets posting ${p} twice`}`);
        break;
      }
      seen[p >> 3]! |= 1 << (p & 7);
      if (t.prev[p] !== before) fail(`posting ${p} (key table entry ${h}): its backward link is ${t.prev[p]}, not ${before}`);
      if (j >= keysIn(s)) fail(`key table entry ${h}: posting ${p} is not a key of a live document`);
      else if (keyAt(s, j) !== key) fail(`document "${t.idOf(s)}": its key ${j} is ${keyAt(s, j)}, but it is on the chain of key ${key}`);
    }
  }
  for (let s = 0; s < t.slots; s++) {
    const n = keysIn(s);
    for (let j = 0, p = s * t.keysPerSlot; j < n; j++, p++) {
      if (!(seen[p >> 3]! & (1 << (p & 7)))) fail(`document "${t.idOf(s)}": its key ${j} (${keyAt(s, j)}) is on no chain of the key table`);
    }
  }
  if (count > max) errors.push(`… ${count} posting errors in all`);
  return errors;
}

/**
 * Every used entry of the linear-probing key table lies within the run of used entries that starts
 * at or before its home (homes: the key's top 32 bits, as the memory store's), else a lookup from
 * its home stops at an empty entry first.
 */
function entriesReachable(t: Pick<PostingTable, 'tKey' | 'tHead'>, fail: (m: string) => void): void {
  const size = t.tHead.length;
  const mask = size - 1;
  const empty = t.tHead.indexOf(EMPTY);
  if (empty < 0) return fail('the key table has no empty entry');
  // From an empty entry on, around the table: `run` used entries end at h.
  for (let i = 1, run = 0; i <= size; i++) {
    const h = (empty + i) & mask;
    if (t.tHead[h] === EMPTY) {
      run = 0;
      continue;
    }
    run++;
    const home = (t.tKey[h]! / 2097152) & mask;
    if (((h - home) & mask) >= run) fail(`key table entry ${h}: key ${t.tKey[h]} cannot be found from its home entry ${home}`);
  }
}
