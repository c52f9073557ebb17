/**
 * The normalized texts a spans-text task writes (./text.ts), as one stream of UTF-16 code units
 * per shard group, each text a range of it. Substring windows overlap: the next window of a
 * document is the last one's text but its first character (or word), plus as much at its end. So
 * a text that continues the last one written is written as its new end only, and a repeated
 * passage costs 2 bytes a character in all, not 2·L bytes a window; a text the group wrote before
 * (the same hash and code units) is not written again.
 * @module
 */
import { grown } from '../../spans/unitHash.js';

/** Shifts tried for a text that continues the last one written: a character, or a word and its separator, is shorter. */
const MAX_SHIFT = 64;

/** Full comparisons tried at most per text (shifts whose first code unit matched): bounds a text like `aaa…ab`. */
const MAX_TRIES = 8;

/** The texts of one group: {@link add} gives where each starts in {@link units}. */
export class KeyStream {
  /** The code units, [0, {@link used}) filled. */
  units: Uint16Array = new Uint16Array(1 << 16);
  used = 0;
  /** The last text appended, which ends the stream (its start; length). */
  private tailAt = 0;
  private tailLen = 0;
  /** Texts written, by a 53-bit key of their hash: starts and lengths, two numbers a text. */
  private readonly seen = new Map<number, number[]>();

  /** Where text `t` (the hash `hi`, `lo`) starts in the stream, written if need be. */
  add(hi: number, lo: number, t: Uint16Array): number {
    const key = hi + (lo & 0x1fffff) * 0x100000000;
    const known = this.seen.get(key);
    if (known) {
      for (let i = 0; i < known.length; i += 2) if (known[i + 1] === t.length && this.equal(known[i]!, t, t.length)) return known[i]!;
    }
    const at = this.place(t);
    if (known) known.push(at, t.length);
    else this.seen.set(key, [at, t.length]);
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
    const all = new Uint16Array(2 * Math.ceil(this.used / 2));
    all.set(this.units.subarray(0, this.used));
    return Buffer.from(all.buffer, all.byteOffset, all.byteLength);
  }
}
