/**
 * A growable hash set of document pairs (a < b) in typed arrays, in insertion order.
 * @module
 */
import { fmix32 } from '../hash/mix.js';

/** A set of (a, b) pairs of uint32 doc ids. */
export class PairSet {
  /** The hash table: slot s holds (a, b) at [2s, 2s + 1] (a = −1: empty), one cache line per probe. */
  private slots: Int32Array;
  private mask: number;
  /** First members, in insertion order (length ≥ size). */
  a: Int32Array;
  /** Second members, in insertion order (length ≥ size). */
  b: Int32Array;
  /** Number of pairs. */
  size = 0;

  constructor(expected = 1024) {
    let cap = 16;
    while (cap < expected * 2) cap *= 2;
    this.slots = new Int32Array(2 * cap).fill(-1);
    this.mask = cap - 1;
    this.a = new Int32Array(Math.max(16, expected));
    this.b = new Int32Array(Math.max(16, expected));
  }

  /** Adds the pair (a, b), a < b; returns true if it was new. */
  add(a: number, b: number): boolean {
    // Load up to 3/4 (linear probing stays within a line or two of the home slot): the 1.49M
    // candidates of 1M documents fit the table sized for 1M without a rehash (lsh 0.93-1.02 s ->
    // 0.78-0.86 s on 2 workers).
    if ((this.size + 1) * 4 > (this.mask + 1) * 3) this.grow();
    const slots = this.slots;
    let slot = fmix32((Math.imul(a, 0x9e3779b1) ^ b) >>> 0) & this.mask;
    for (;;) {
      const sa = slots[2 * slot]!;
      if (sa === -1) break;
      if (sa === a && slots[2 * slot + 1] === b) return false;
      slot = (slot + 1) & this.mask;
    }
    slots[2 * slot] = a;
    slots[2 * slot + 1] = b;
    if (this.size === this.a.length) {
      const na = new Int32Array(this.a.length * 2);
      na.set(this.a);
      this.a = na;
      const nb = new Int32Array(this.b.length * 2);
      nb.set(this.b);
      this.b = nb;
    }
    this.a[this.size] = a;
    this.b[this.size] = b;
    this.size++;
    return true;
  }

  private grow(): void {
    const cap = (this.mask + 1) * 2;
    const slots = (this.slots = new Int32Array(2 * cap).fill(-1));
    this.mask = cap - 1;
    for (let i = 0; i < this.size; i++) {
      const a = this.a[i]!;
      const b = this.b[i]!;
      let slot = fmix32((Math.imul(a, 0x9e3779b1) ^ b) >>> 0) & this.mask;
      while (slots[2 * slot] !== -1) slot = (slot + 1) & this.mask;
      slots[2 * slot] = a;
      slots[2 * slot + 1] = b;
    }
  }
}
