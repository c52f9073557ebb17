/**
 * The normalized texts a spans-text task writes (./text.ts), as one stream of UTF-16 code units
 * per shard group, each text a range of it. Substring windows overlap: the next window of a
 * document is the last one's text but its first character (or word), plus as much at its end. So
 * a text that continues the last one written is written as its new end only, and a repeated
 * passage costs 2 bytes a character in all, not 2·L bytes a window; a text the group wrote before
 * (the same hash and code units) is not written again.
 * @module
 */
import { grown, mapped } from '../../common/roomArrays.js';

/** Shifts tried for a text that continues the last one written: a character, or a word and its separator, is shorter. */
const MAX_SHIFT = 64;

/** Full comparisons tried at most per text (shifts whose first code unit matched): bounds a text like `aaa…ab`. */
const MAX_TRIES = 8;

/** The texts of one group: {@link add} gives where each starts in {@link units}. */
export class KeyStream {
  /** The code units, [0, {@link used}) filled. */
  units: Uint16Array = mapped(Uint16Array, 1 << 16, 1 << 30);
  used = 0;
  /** The last text appended, which ends the stream (its start; length). */
  private tailAt = 0;
  private tailLen = 0;
  /** Texts written, by their hash: where each starts and its length. */
  private readonly seen = new TextIndex();

  /** Where text `t` (the hash `hi`, `lo`) starts in the stream, written if need be. */
  add(hi: number, lo: number, t: Uint16Array): number {
    const s = this.seen;
    for (let e = s.first(hi, lo); e >= 0; e = s.next[e]!) if (s.len[e] === t.length && this.equal(s.at[e]!, t, t.length)) return s.at[e]!;
    const at = this.place(t);
    s.add(hi, lo, at, t.length);
    return at;
  }

  /** Writes `t` as the continuation of the last text when it is one, else whole at the end; returns where it starts. */
  private place(t: Uint16Array): number {
    const n = t.length;
    if (n === 0) return 0;
    let tries = 0;
    for (let s = 1; s <= Math.min(MAX_SHIFT, this.tailLen) && tries < MAX_TRIES; s++) {
      const at = this.tailAt + s;
      if (this.units[at] !== t[0]) continue;
      tries++;
      const overlap = Math.min(n, this.tailLen - s);
      if (!this.equal(at, t, overlap)) continue;
      if (overlap < n) this.append(t.subarray(overlap));
      if (at + n === this.used) {
        this.tailAt = at;
        this.tailLen = n;
      }
      return at;
    }
    const at = this.used;
    this.append(t);
    this.tailAt = at;
    this.tailLen = n;
    return at;
  }

  private append(t: Uint16Array): void {
    if (this.units.length < this.used + t.length) this.units = grown(this.units, this.used + t.length);
    this.units.set(t, this.used);
    this.used += t.length;
  }

  /** Whether the stream from `at` holds the first `n` code units of `t`. */
  private equal(at: number, t: Uint16Array, n: number): boolean {
    const u = this.units;
    for (let i = 0; i < n; i++) if (u[at + i] !== t[i]) return false;
    return true;
  }

  /** The stream as the bytes of `keys.u32`: two code units to a uint32 (the last one padded). */
  bytes(): Buffer {
    const n = 2 * Math.ceil(this.used / 2);
    // The stream as it is, not a copy (nothing is written past `used`: the padding is a zero).
    if (this.units.length < n) this.units = grown(this.units, n);
    return Buffer.from(this.units.buffer, this.units.byteOffset, 2 * n);
  }
}

/**
 * The texts a {@link KeyStream} wrote, by hash: typed arrays behind an open-addressing index, the
 * texts of one hash (a collision: in practice none) chained. A Map of an array per text took
 * 300 MB of heap for 2.2M texts of a 52 MB input's byte windows; this takes 28 bytes a text.
 */
class TextIndex {
  /** Per text: its hash, where it starts, its length, the next text of its hash (−1: none). */
  hi = mapped(Int32Array, 1024, 1 << 28);
  lo = mapped(Int32Array, 1024, 1 << 28);
  at = mapped(Uint32Array, 1024, 1 << 28);
  len = mapped(Uint32Array, 1024, 1 << 28);
  next = mapped(Int32Array, 1024, 1 << 28);
  private size = 0;
  /** Per slot: the first text of a hash, + 1 (0: empty). */
  private slots = mapped(Int32Array, 2048, 1 << 29);

  private home(hi: number, lo: number): number {
    return (Math.imul(hi ^ Math.imul(lo, 0x9e3779b1), 0x85ebca6b) >>> 0) & (this.slots.length - 1);
  }

  /** The slot of hash (hi, lo): the one holding it, or the empty one where it goes. */
  private slot(hi: number, lo: number): number {
    const mask = this.slots.length - 1;
    for (let i = this.home(hi, lo);; i = (i + 1) & mask) {
      const e = this.slots[i]! - 1;
      if (e < 0 || (this.hi[e] === (hi | 0) && this.lo[e] === (lo | 0))) return i;
    }
  }

  /** The first text of hash (hi, lo), or −1 (the others follow {@link next}). */
  first(hi: number, lo: number): number {
    return this.slots[this.slot(hi, lo)]! - 1;
  }

  /** Records a text of hash (hi, lo) written at `at`, `len` code units long. */
  add(hi: number, lo: number, at: number, len: number): void {
    if (2 * (this.size + 1) > this.slots.length) this.rehash();
    if (this.size === this.hi.length) this.grow();
    const e = this.size++;
    this.hi[e] = hi;
    this.lo[e] = lo;
    this.at[e] = at;
    this.len[e] = len;
    const i = this.slot(hi, lo);
    // A hash already held: the new text goes second in its chain, the slot keeps the first.
    const head = this.slots[i]! - 1;
    if (head >= 0) {
      this.next[e] = this.next[head]!;
      this.next[head] = e;
    } else {
      this.next[e] = -1;
      this.slots[i] = e + 1;
    }
  }

  private grow(): void {
    // In place where the buffers can grow (src/common/roomArrays.ts): a doubled copy beside each old array was the stage's peak.
    const n = 2 * this.hi.length;
    this.hi = grown(this.hi, n);
    this.lo = grown(this.lo, n);
    this.at = grown(this.at, n);
    this.len = grown(this.len, n);
    this.next = grown(this.next, n);
  }

  /** Twice the slots, each hash's first text placed again. */
  private rehash(): void {
    this.slots = grown(this.slots, 2 * this.slots.length).fill(0);
    for (let e = 0; e < this.size; e++) {
      const i = this.slot(this.hi[e]!, this.lo[e]!);
      if (this.slots[i] === 0) this.slots[i] = e + 1;
    }
  }
}
