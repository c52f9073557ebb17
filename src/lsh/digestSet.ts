/**
 * A set of 53-bit digests held as pairs of 32-bit halves in typed arrays: what the candidate
 * generator uses to skip a bucket whose member list already appeared in an earlier band. A JS
 * `Set<number>` of millions of doubles cost more than building the buckets (issue #14).
 * @module
 */

/** An open-addressing set of (hi, lo) digest pairs; `hi` < 2^32, `lo` < 2^21 (any 32-bit value works). */
export class DigestSet {
  private his: Int32Array;
  private los: Int32Array;
  private used: Uint8Array;
  private mask: number;
  /** Digests in the set. */
  size = 0;

  constructor(expected = 1024) {
    let cap = 16;
    while (cap < expected * 2) cap *= 2;
    this.his = new Int32Array(cap);
    this.los = new Int32Array(cap);
    this.used = new Uint8Array(cap);
    this.mask = cap - 1;
  }

  /** Adds the digest (hi, lo); false when it was there already. */
  add(hi: number, lo: number): boolean {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    const h = hi | 0;
    const l = lo | 0;
    // hi is a murmur hash: its low bits index the table.
    let s = (h ^ Math.imul(l, 0x9e3779b1)) & this.mask;
    for (;;) {
      if (this.used[s] === 0) break;
      if (this.his[s] === h && this.los[s] === l) return false;
      s = (s + 1) & this.mask;
    }
    this.used[s] = 1;
    this.his[s] = h;
    this.los[s] = l;
    this.size++;
    return true;
  }

  private grow(): void {
    const { his, los, used } = this;
    const cap = (this.mask + 1) * 2;
    this.his = new Int32Array(cap);
    this.los = new Int32Array(cap);
    this.used = new Uint8Array(cap);
    this.mask = cap - 1;
    for (let i = 0; i < used.length; i++) {
      if (used[i] === 0) continue;
      let s = (his[i]! ^ Math.imul(los[i]!, 0x9e3779b1)) & this.mask;
      while (this.used[s] !== 0) s = (s + 1) & this.mask;
      this.used[s] = 1;
      this.his[s] = his[i]!;
      this.los[s] = los[i]!;
    }
  }
}
