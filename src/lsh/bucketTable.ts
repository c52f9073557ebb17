/**
 * An open-addressing hash table from 64-bit band keys to buckets of document ids, held entirely in
 * typed arrays: a bucket is a singly linked list threaded through `next`, indexed by doc id.
 * @module
 */

/** Buckets of one band: key → the doc ids that share it. */
export class BucketTable {
  /**
   * Slot s is [4s] key hi, [4s+1] key lo, [4s+2] head doc (−1: empty), [4s+3] bucket size: one
   * cache line per probe. With four separate arrays, each insert into a million-doc table missed
   * the cache four times, which was most of the LSH stage (issue #14).
   */
  private slots: Int32Array;
  private mask: number;
  private used = 0;
  /**
   * The slots in use, in the order their buckets were made: clearing and visiting cost one step per
   * bucket, not per slot (scanning every slot of a table sized for a band was most of LSH).
   */
  private order: Int32Array;
  /** created[s]: the index in `order` of the bucket in slot s. */
  private created: Int32Array;
  /**
   * Bit k is set once the k-th bucket made has a second doc: the shared buckets can be listed in
   * the order they were made without visiting the singletons, which are most buckets of a band.
   */
  private sharedBits: Int32Array;
  private sharedList: Int32Array;
  /** next[doc] is the next doc of the same bucket, or -1. */
  next: Int32Array;

  /** @param expectedDocs capacity hint; the table grows when needed. */
  constructor(expectedDocs: number) {
    let cap = 16;
    while (cap < expectedDocs * 2) cap *= 2;
    this.slots = BucketTable.empty(cap);
    this.mask = cap - 1;
    this.order = new Int32Array(cap >>> 1);
    this.created = new Int32Array(cap);
    this.sharedBits = new Int32Array((cap >>> 6) + 1);
    this.sharedList = new Int32Array(cap >>> 1);
    this.next = new Int32Array(Math.max(16, expectedDocs)).fill(-1);
  }

  private static empty(cap: number): Int32Array {
    const slots = new Int32Array(cap * 4);
    for (let i = 2; i < slots.length; i += 4) slots[i] = -1;
    return slots;
  }

  /** Adds `doc` to the bucket of key (hi, lo). Docs added in increasing order keep buckets sorted descending. */
  add(hi: number, lo: number, doc: number): void {
    if (doc >= this.next.length) {
      const grown = new Int32Array(Math.max(doc + 1, this.next.length * 2)).fill(-1);
      grown.set(this.next);
      this.next = grown;
    }
    if ((this.used + 1) * 2 > this.mask + 1) this.grow();
    const slots = this.slots;
    const h32 = hi | 0;
    const l32 = lo | 0;
    let s = lo & this.mask;
    for (;;) {
      const i = s << 2;
      const h = slots[i + 2]!;
      if (h === -1) {
        slots[i] = h32;
        slots[i + 1] = l32;
        slots[i + 2] = doc;
        slots[i + 3] = 1;
        this.next[doc] = -1;
        this.created[s] = this.used;
        this.order[this.used++] = s;
        return;
      }
      if (slots[i + 1] === l32 && slots[i] === h32) {
        this.next[doc] = h;
        slots[i + 2] = doc;
        if (slots[i + 3]!++ === 1) {
          const k = this.created[s]!;
          this.sharedBits[k >>> 5]! |= 1 << (k & 31);
        }
        return;
      }
      s = (s + 1) & this.mask;
    }
  }

  private grow(): void {
    const old = this.slots;
    const cap = (this.mask + 1) * 2;
    const slots = BucketTable.empty(cap);
    const mask = cap - 1;
    const order = new Int32Array(cap >>> 1);
    const created = new Int32Array(cap);
    for (let k = 0; k < this.used; k++) {
      const i = this.order[k]! << 2;
      let s = old[i + 1]! & mask;
      while (slots[(s << 2) + 2] !== -1) s = (s + 1) & mask;
      slots.set(old.subarray(i, i + 4), s << 2);
      order[k] = s;
      created[s] = k;
    }
    const bits = new Int32Array((cap >>> 6) + 1);
    bits.set(this.sharedBits);
    this.slots = slots;
    this.mask = mask;
    this.order = order;
    this.created = created;
    this.sharedBits = bits;
    this.sharedList = new Int32Array(cap >>> 1);
  }

  /** Empties the table (keeping its capacity) for the next band. */
  clear(): void {
    const slots = this.slots;
    const order = this.order;
    for (let k = 0; k < this.used; k++) slots[(order[k]! << 2) + 2] = -1;
    this.sharedBits.fill(0, 0, (this.used >>> 5) + 1);
    this.used = 0;
  }

  /**
   * The buckets of ≥ 2 docs, as indices k (for {@link sizeAt}, {@link headAt}) in the order they
   * were made: a view valid until the next {@link add} or {@link clear}.
   */
  shared(): Int32Array {
    const bits = this.sharedBits;
    const list = this.sharedList;
    let m = 0;
    for (let w = 0, words = (this.used >>> 5) + 1; w < words; w++) {
      for (let x = bits[w]!; x !== 0; x &= x - 1) list[m++] = (w << 5) | (31 - Math.clz32(x & -x));
    }
    return list.subarray(0, m);
  }

  /** Size of the k-th bucket made (0 ≤ k < {@link bucketCount}). */
  sizeAt(k: number): number {
    return this.slots[(this.order[k]! << 2) + 3]!;
  }

  /** The last doc added to the k-th bucket made: walk the bucket from it with `next`. */
  headAt(k: number): number {
    return this.slots[(this.order[k]! << 2) + 2]!;
  }

  /**
   * Writes the k-th bucket's entries as `ids[base + entry]` into `out[0 .. size)`, in the order they
   * were added (its chain runs from the last added, so it fills from the back), and returns its size.
   * `out` must hold {@link sizeAt}(k) values.
   */
  membersAt(k: number, ids: Int32Array, base: number, out: Int32Array): number {
    const size = this.sizeAt(k);
    const next = this.next;
    let i = size;
    for (let e = this.headAt(k); e !== -1; e = next[e]!) out[--i] = ids[base + e]!;
    return size;
  }

  /** Number of distinct keys (buckets). */
  get bucketCount(): number {
    return this.used;
  }
}
