/**
 * An open-addressing hash table from 64-bit band keys to buckets of document ids, held entirely in
 * typed arrays: a bucket is a singly linked list threaded through `next`, indexed by doc id.
 * @module
 */

/** Buckets of one band: key → the doc ids that share it. */
export class BucketTable {
  private keyHi: Uint32Array;
  private keyLo: Uint32Array;
  private head: Int32Array;
  private size: Int32Array;
  private mask: number;
  private used = 0;
  /** next[doc] is the next doc of the same bucket, or -1. */
  next: Int32Array;

  /** @param expectedDocs capacity hint; the table grows when needed. */
  constructor(expectedDocs: number) {
    let cap = 16;
    while (cap < expectedDocs * 2) cap *= 2;
    this.keyHi = new Uint32Array(cap);
    this.keyLo = new Uint32Array(cap);
    this.head = new Int32Array(cap).fill(-1);
    this.size = new Int32Array(cap);
    this.mask = cap - 1;
    this.next = new Int32Array(Math.max(16, expectedDocs)).fill(-1);
  }

  /** Adds `doc` to the bucket of key (hi, lo). Docs added in increasing order keep buckets sorted descending. */
  add(hi: number, lo: number, doc: number): void {
    if (doc >= this.next.length) {
      const grown = new Int32Array(Math.max(doc + 1, this.next.length * 2)).fill(-1);
      grown.set(this.next);
      this.next = grown;
    }
    if ((this.used + 1) * 2 > this.mask + 1) this.grow();
    let slot = lo & this.mask;
    for (;;) {
      const h = this.head[slot]!;
      if (h === -1) {
        this.keyHi[slot] = hi;
        this.keyLo[slot] = lo;
        this.head[slot] = doc;
        this.size[slot] = 1;
        this.next[doc] = -1;
        this.used++;
        return;
      }
      if (this.keyLo[slot] === lo && this.keyHi[slot] === hi) {
        this.next[doc] = h;
        this.head[slot] = doc;
        this.size[slot]!++;
        return;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  private grow(): void {
    const { keyHi, keyLo, head, size } = this;
    const cap = (this.mask + 1) * 2;
    this.keyHi = new Uint32Array(cap);
    this.keyLo = new Uint32Array(cap);
    this.head = new Int32Array(cap).fill(-1);
    this.size = new Int32Array(cap);
    this.mask = cap - 1;
    for (let s = 0; s < head.length; s++) {
      if (head[s] === -1) continue;
      let slot = keyLo[s]! & this.mask;
      while (this.head[slot] !== -1) slot = (slot + 1) & this.mask;
      this.keyHi[slot] = keyHi[s]!;
      this.keyLo[slot] = keyLo[s]!;
      this.head[slot] = head[s]!;
      this.size[slot] = size[s]!;
    }
  }

  /** Calls `fn(head, size)` for every bucket holding at least `minSize` docs; walk it with `next`. */
  forEachBucket(minSize: number, fn: (head: number, size: number) => void): void {
    const { head, size } = this;
    for (let s = 0; s < head.length; s++) {
      if (head[s] !== -1 && size[s]! >= minSize) fn(head[s]!, size[s]!);
    }
  }

  /** Number of distinct keys. */
  get bucketCount(): number {
    return this.used;
  }
}
