/**
 * The key table of the in-process store: a 53-bit band key → the head of its chain of postings, by
 * open addressing with linear probing over two typed arrays (keys, heads), at most 7/10 full.
 *
 * It doubles a bit at a time, never all at once. Why: at 10⁷ documents the table holds ~2·10⁸
 * keys, and moving them in one go stopped every add and query for 12 s at 2²⁷ entries and 44 s at
 * 2²⁸ on this machine (~190 ns a key, mostly fresh pages and cache misses). So:
 * - from 60 % full, the next table is made ready: allocated, and marked empty a slice per
 *   {@link STEP} links (marking 2 GiB at once took 7 s);
 * - at 70 % it becomes the current table and takes every key added from then on, and every
 *   {@link STEP} links move the next {@link MOVE_SLICE} entries of the old table over, in entry
 *   order, until none is left. While it drains, a link probes the old table too, unless its
 *   key's home there is behind the cursor: the shorter the drain, the fewer such probes (1M
 *   documents of 32 new keys, alternated: 14.0–14.8 s with 8 entries a link, 12.0–12.4 s with 32,
 *   9.9–10.5 s with 128, whose slices pause 4 times as long).
 * The old table drains long before the next is due (after 0.7 · old size new keys, each a link,
 * against old size / 32 links), so at most two tables exist, and no link waits more than a slice
 * (a few ms at 2²⁷ entries; bench/RESULTS.md, "The key table doubles a slice at a time").
 *
 * A chain's head keeps its entry's index in `prev` (as −2 − index), in whichever table the entry
 * is: growth renumbers nothing (rewriting every head's `prev` at once would cost what it saves), a
 * move rewrites one `prev`, and the posting tells the tables apart (it is the old entry's head or
 * the current one's: {@link KeyTable.entryOfHead}). Elsewhere an entry is named as
 * {@link KeyTable.find} names it: `e` < {@link KeyTable.size} is entry `e` of the current table,
 * `size + o` entry `o` of the old one. A key lives in exactly one of the two tables; lookups try the
 * current table, then the old. The old table gets no new key, so its freed entries are marked
 * {@link MOVED} (probes go on past them) instead of shifted back.
 * @module
 */

/** A free entry (heads), or the end of a chain (next). */
export const EMPTY = -1;
/** An old table's entry whose key moved to the current table or went away: probes go past it. */
const MOVED = -3;
/** Links between two slices of a growth's work. */
const STEP = 512;
/** Old entries looked at (and moved when in use) per {@link STEP} links: 32 a link. */
const MOVE_SLICE = 16384;
/** Entries of the next table marked empty per {@link STEP} links: 32 a link, done before 70 %. */
const FILL_SLICE = 16384;

/** `prev` of a chain's head: its key table entry's index `i`, as −2 − i (−1 is a posting on no chain). */
export const headOf = (e: number): number => -2 - e;

/** The entry where a probe for `key` starts in a table of `mask + 1` entries. */
export function homeOf(key: number, mask: number): number {
  // The top 32 bits of a key are a murmur3 finalizer output: already well mixed.
  return (key / 2097152) & mask;
}

/** Band key → chain head, growing by gradual doubling (see the module's doc). */
export class KeyTable {
  /** Keys in both tables. */
  used: number;
  private key: Float64Array<ArrayBuffer>;
  private head: Int32Array<ArrayBuffer>;
  private mask: number;
  private oldKey: Float64Array | null = null;
  private oldHead: Int32Array | null = null;
  private oldMask = 0;
  /** The next old entry to move. */
  private cursor = 0;
  /** The next table, made ready from 60 % full, and how much of its heads is marked empty. */
  private spareKey: Float64Array<ArrayBuffer> | null = null;
  private spareHead: Int32Array<ArrayBuffer> | null = null;
  private spareReady = 0;
  /** Links, counted for {@link STEP}. */
  private links = 0;
  /** Whether growth slices are held back ({@link KeyTable.hold}). */
  private held = false;

  /** A table of `key`/`head` (power-of-two length, as {@link KeyTable.arrays} gave them) holding `used` keys. */
  constructor(key = new Float64Array(1024), head = new Int32Array(1024).fill(EMPTY), used = 0) {
    this.key = key;
    this.head = head;
    this.mask = head.length - 1;
    this.used = used;
  }

  /** Entries of the current table (old entries are numbered from here). */
  get size(): number {
    return this.mask + 1;
  }

  /** Where {@link KeyTable.touch} leaves what it read, so that its loads are not optimised away. */
  sink = 0;

  /**
   * Reads the current table's entries where `keys` start their probes, all before any is used.
   * Why: in a table of gigabytes each is a cache and TLB miss; loads that do not depend on one
   * another wait for memory together, where links, each after the last, wait in turn
   * (4M documents of 32 keys linked: 35.6–40.9 s with it, 56.5–60.2 s without).
   */
  touch(keys: Float64Array): void {
    const { key: k, head, mask } = this;
    let acc = 0;
    for (let j = 0; j < keys.length; j++) {
      const s = homeOf(keys[j]!, mask);
      acc += head[s]! + k[s]!;
    }
    this.sink = acc;
  }

  /** Whether an old table is still being moved over. */
  get growing(): boolean {
    return this.oldHead !== null;
  }

  /** The key's entry, or −1. */
  find(key: number): number {
    const { key: keys, head, mask } = this;
    for (let s = homeOf(key, mask);; s = (s + 1) & mask) {
      if (head[s] === EMPTY) break;
      if (keys[s] === key) return s;
    }
    if (!this.mayBeOld(key)) return -1;
    const o = this.findOld(key);
    return o < 0 ? -1 : this.size + o;
  }

  /**
   * Whether `key` may still be in the old table. Not if its home there is before the cursor: every
   * entry before the cursor has moved, and the entry just before it is empty, so the run a key
   * with such a home is in (from its home to the next empty entry) lies wholly before the cursor.
   * (Most adds are of new keys: a probe of the old table was a third of a link's cost.)
   */
  private mayBeOld(key: number): boolean {
    return this.oldHead !== null && homeOf(key, this.oldMask) >= this.cursor;
  }

  private findOld(key: number): number {
    const keys = this.oldKey!;
    const head = this.oldHead!;
    const mask = this.oldMask;
    for (let s = homeOf(key, mask);; s = (s + 1) & mask) {
      const h = head[s]!;
      if (h === EMPTY) return -1;
      if (h !== MOVED && keys[s] === key) return s;
    }
  }

  /**
   * The entry (numbered as {@link KeyTable.find} numbers them) of the chain that posting `p` heads,
   * from the index `i` its `prev` keeps (as −2 − i).
   */
  entryOfHead(p: number, i: number): number {
    const old = this.oldHead;
    return old !== null && i < old.length && old[i] === p ? this.size + i : i;
  }

  /** The head of entry `e`'s chain. */
  headAt(e: number): number {
    return e < this.size ? this.head[e]! : this.oldHead![e - this.size]!;
  }

  /** The key of entry `e`. */
  keyAt(e: number): number {
    return e < this.size ? this.key[e]! : this.oldKey![e - this.size]!;
  }

  /** Makes posting `p` the head of entry `e`'s chain. */
  setHead(e: number, p: number): void {
    if (e < this.size) this.head[e] = p;
    else this.oldHead![e - this.size] = p;
  }

  /**
   * Puts posting `p` at the head of `key`'s chain (the key added when new), threading it through
   * `next` and `prev`: the store's posting links, which this table's moves update (`prev` of heads).
   */
  link(key: number, p: number, next: Int32Array, prev: Int32Array): void {
    if ((++this.links & (STEP - 1)) === 0 && !this.held) this.step(prev);
    if ((this.used + 1) * 10 > this.size * 7) this.grow(prev);
    if (this.mayBeOld(key)) {
      const o = this.findOld(key);
      if (o >= 0) this.moveOld(o, prev);
    }
    const { key: keys, head, mask } = this;
    let s = homeOf(key, mask);
    for (;;) {
      const h = head[s]!;
      if (h === EMPTY) {
        keys[s] = key;
        head[s] = p;
        next[p] = EMPTY;
        prev[p] = headOf(s);
        this.used++;
        return;
      }
      if (keys[s] === key) {
        next[p] = h;
        prev[p] = headOf(s);
        prev[h] = p;
        head[s] = p;
        return;
      }
      s = (s + 1) & mask;
    }
  }

  /** Frees entry `e`, whose chain is now empty (`prev` as for {@link KeyTable.link}). */
  drop(e: number, prev: Int32Array): void {
    this.used--;
    if (e >= this.size) {
      this.oldHead![e - this.size] = MOVED;
      return;
    }
    // Backward-shift deletion keeps linear probing correct without tombstones.
    const { key: keys, head, mask } = this;
    let i = e;
    for (;;) {
      let j = i;
      for (;;) {
        j = (j + 1) & mask;
        if (head[j] === EMPTY) {
          head[i] = EMPTY;
          return;
        }
        const k = homeOf(keys[j]!, mask);
        // Entry j may move to i only if its home is not cyclically within (i, j].
        const within = i <= j ? i < k && k <= j : i < k || k <= j;
        if (!within) break;
      }
      keys[i] = keys[j]!;
      head[i] = head[j]!;
      prev[head[i]!] = headOf(i);
      i = j;
    }
  }

  /** Moves what is left of the old table over, so that the current table holds every key. */
  settle(prev: Int32Array): void {
    if (this.oldHead !== null) this.moveSome(prev, Infinity);
  }

  /** The current table's arrays (call {@link KeyTable.settle} first for all the keys). */
  arrays(): { tKey: Float64Array<ArrayBuffer>; tHead: Int32Array<ArrayBuffer> } {
    return { tKey: this.key, tHead: this.head };
  }

  /**
   * Holds the slices of a growth's work back (`true`) until told otherwise (`false`): links go on,
   * and a table at 70 % still becomes the next one at once. Why: a restart's fold (the file store's
   * open) links a log's tail before the store answers anything; the slices it skips run over the
   * adds after it, where they run anyway (1.4 s of an 8 s restart at 2.3M, bench/RESULTS.md).
   */
  hold(on: boolean): void {
    this.held = on;
  }

  /** A slice of a growth's work: moving old entries over, or making the next table ready. */
  private step(prev: Int32Array): void {
    if (this.oldHead !== null) {
      this.moveSome(prev, MOVE_SLICE);
      return;
    }
    if (this.spareHead === null) {
      if (this.used * 10 < this.size * 6) return;
      // Zeroed pages come from the system as they are first touched: only the heads need marking.
      this.spareKey = new Float64Array(this.size * 2);
      this.spareHead = new Int32Array(this.size * 2);
      this.spareReady = 0;
    }
    // Behind (slices held back, or a table read past 60 %): a larger slice, so as to be ready at 70 % (a link adds a key at most).
    const left = this.spareHead.length - this.spareReady;
    const links = Math.max(1, Math.floor(this.size * 0.7) - this.used);
    const end = this.spareReady + Math.min(left, Math.max(FILL_SLICE, Math.ceil((left / links) * STEP)));
    this.spareHead.fill(EMPTY, this.spareReady, end);
    this.spareReady = end;
  }

  private grow(prev: Int32Array): void {
    this.settle(prev);
    const cap = this.size * 2;
    // Made ready from 60 % full (what is left of it now); a table read whole from a checkpoint past 60 % has none yet.
    const key = this.spareKey ?? new Float64Array(cap);
    const head = this.spareHead ?? new Int32Array(cap);
    head.fill(EMPTY, this.spareHead === null ? 0 : this.spareReady);
    this.spareKey = null;
    this.spareHead = null;
    this.oldKey = this.key;
    this.oldHead = this.head;
    this.oldMask = this.mask;
    this.cursor = 0;
    this.key = key;
    this.head = head;
    this.mask = cap - 1;
    // Slices held back: the old table moves over now, or every link until the next growth would probe it too.
    if (this.held) this.settle(prev);
  }

  /**
   * Moves `n` old entries over, in entry order, and on to the end of the run they stop in (so that
   * the entry before {@link KeyTable.cursor} is empty: see {@link KeyTable.mayBeOld}); drops the
   * old table once all have moved.
   */
  private moveSome(prev: Int32Array, n: number): void {
    const head = this.oldHead!;
    const stop = Math.min(head.length, this.cursor + n);
    let o = this.cursor;
    for (; o < head.length && (o < stop || head[o - 1] !== EMPTY); o++) if (head[o]! >= 0) this.moveOld(o, prev);
    this.cursor = o;
    if (o === head.length) {
      this.oldKey = null;
      this.oldHead = null;
    }
  }

  private moveOld(o: number, prev: Int32Array): void {
    const key = this.oldKey![o]!;
    const h = this.oldHead![o]!;
    const { key: keys, head, mask } = this;
    let s = homeOf(key, mask);
    while (head[s] !== EMPTY) s = (s + 1) & mask;
    keys[s] = key;
    head[s] = h;
    prev[h] = headOf(s);
    this.oldHead![o] = MOVED;
  }
}
