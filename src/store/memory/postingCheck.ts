/**
 * A full check of a band table's postings (`neardup index check` on the stores that keep one: the
 * file store, Redis's log layout): every key table entry reachable from its home, every chain
 * walked once with its backward links (a chain's head holding its entry as -2 − entry), each
 * posting on a chain belonging to a live document, and each live document's linked postings
 * (a prefix of its slot's) all on chains. That each document is linked under the keys its record
 * gives is the index check's part (`hasPostings`, from the chains). Why: a table rebuilt wrong at
 * open (keys lost by a worker thread) answered lookups without an error. O(entries + postings),
 * one bit per posting.
 * @module
 */

const EMPTY = -1;
/** `next` of a posting on no chain (src/store/memory/store.ts). */
const UNLINKED = -2;

/** The table's arrays. */
export interface PostingTable {
  tKey: Float64Array;
  tHead: Int32Array;
  next: Int32Array;
  prev: Int32Array;
  /** Postings per slot (`slot · keysPerSlot + j` is key j's posting). */
  keysPerSlot: number;
  /** Slots in use (live or free). */
  slots: number;
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
  const K = t.keysPerSlot;
  const seen = new Uint8Array(Math.ceil((t.slots * K) / 8));
  entriesReachable(t, fail);
  for (let h = 0; h < t.tHead.length; h++) {
    for (let p = t.tHead[h]!, before = -2 - h; p !== EMPTY; before = p, p = t.next[p]!) {
      const s = Math.floor(p / K);
      if (!(p >= 0 && s < t.slots) || seen[p >> 3]! & (1 << (p & 7))) {
        fail(`key table entry ${h}: its chain ${p < 0 || s >= t.slots ? `points outside the postings (${p})` : `meets posting ${p} twice`}`);
        break;
      }
      seen[p >> 3]! |= 1 << (p & 7);
      if (t.prev[p] !== before) fail(`posting ${p} (key table entry ${h}): its backward link is ${t.prev[p]}, not ${before}`);
      if (!t.live(s)) fail(`key table entry ${h}: posting ${p} is not a key of a live document`);
    }
  }
  for (let s = 0; s < t.slots; s++) {
    if (!t.live(s)) continue;
    let linked = true;
    for (let j = 0, p = s * K; j < K; j++, p++) {
      const on = (seen[p >> 3]! & (1 << (p & 7))) !== 0;
      if (t.prev[p] === EMPTY) {
        linked = false;
        if (t.next[p] !== UNLINKED) fail(`document "${t.idOf(s)}": its posting ${j} is on no chain but links to ${t.next[p]}`);
      } else if (!linked) fail(`document "${t.idOf(s)}": its key ${j} follows a position with no key`);
      else if (!on) fail(`document "${t.idOf(s)}": its key ${j} is on no chain of the key table`);
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
