/**
 * The table of `neardup spans`' first pass: for each distinct unit, by its 64-bit hash, where it
 * first occurs (document, UTF-16, code-point and byte offset), in how many documents, and how many
 * times. Typed arrays in open addressing: 36 bytes a slot (nine 32-bit columns), at most half full, no string per unit.
 * @module
 */

const EMPTY = -1;

/** Open-addressing hash table from a unit's 64-bit hash to its first occurrence and counts. */
export class UnitTable {
  private mask: number;
  /** Distinct units held. */
  size = 0;
  hi: Uint32Array;
  lo: Uint32Array;
  /** The document of the first occurrence; −1: empty slot. */
  firstDoc: Int32Array;
  /** The first occurrence's UTF-16 start in its document's text. */
  firstPos: Uint32Array;
  /** The first occurrence's code-point start. */
  firstCp: Uint32Array;
  /** The first occurrence's UTF-8 byte start. */
  firstByte: Uint32Array;
  /** Distinct documents the unit occurs in. */
  docs: Int32Array;
  /** The last document seen (to count documents once each). */
  lastDoc: Int32Array;
  /** Occurrences in all. */
  count: Int32Array;

  constructor(capacity = 1 << 12) {
    let cap = 16;
    while (cap < capacity) cap *= 2;
    this.mask = cap - 1;
    this.hi = new Uint32Array(cap);
    this.lo = new Uint32Array(cap);
    this.firstDoc = new Int32Array(cap).fill(EMPTY);
    this.firstPos = new Uint32Array(cap);
    this.firstCp = new Uint32Array(cap);
    this.firstByte = new Uint32Array(cap);
    this.docs = new Int32Array(cap);
    this.lastDoc = new Int32Array(cap);
    this.count = new Int32Array(cap);
  }

  /** Slots in all (for scans). */
  get capacity(): number {
    return this.mask + 1;
  }

  private home(hi: number, lo: number): number {
    return (Math.imul(hi ^ (lo >>> 15), 0x9e3779b1) ^ lo) & this.mask;
  }

  /** The slot of hash (hi, lo), or −1. */
  find(hi: number, lo: number): number {
    for (let i = this.home(hi, lo); ; i = (i + 1) & this.mask) {
      if (this.firstDoc[i] === EMPTY) return -1;
      if (this.hi[i] === hi && this.lo[i] === lo) return i;
    }
  }

  /**
   * Counts one occurrence of hash (hi, lo) in document `doc` at the given offsets; returns its slot.
   * Why these parameters: called once per unit in the hot loop, where an options object would be an allocation per unit.
   */
  add(hi: number, lo: number, doc: number, pos: number, cp: number, byte: number): number {
    if ((this.size + 1) * 2 > this.capacity) this.grow();
    let i = this.home(hi, lo);
    for (; ; i = (i + 1) & this.mask) {
      if (this.firstDoc[i] === EMPTY) break;
      if (this.hi[i] === hi && this.lo[i] === lo) {
        this.count[i]!++;
        if (this.lastDoc[i] !== doc) {
          this.docs[i]!++;
          this.lastDoc[i] = doc;
        }
        return i;
      }
    }
    this.size++;
    this.hi[i] = hi;
    this.lo[i] = lo;
    this.firstDoc[i] = doc;
    this.firstPos[i] = pos;
    this.firstCp[i] = cp;
    this.firstByte[i] = byte;
    this.docs[i] = 1;
    this.lastDoc[i] = doc;
    this.count[i] = 1;
    return i;
  }

  private grow(): void {
    const old = this.capacity;
    const { hi, lo, firstDoc, firstPos, firstCp, firstByte, docs, lastDoc, count } = this;
    const next = new UnitTable(old * 2);
    for (let j = 0; j < old; j++) {
      if (firstDoc[j] === EMPTY) continue;
      let i = next.home(hi[j]!, lo[j]!);
      while (next.firstDoc[i] !== EMPTY) i = (i + 1) & next.mask;
      next.hi[i] = hi[j]!;
      next.lo[i] = lo[j]!;
      next.firstDoc[i] = firstDoc[j]!;
      next.firstPos[i] = firstPos[j]!;
      next.firstCp[i] = firstCp[j]!;
      next.firstByte[i] = firstByte[j]!;
      next.docs[i] = docs[j]!;
      next.lastDoc[i] = lastDoc[j]!;
      next.count[i] = count[j]!;
    }
    this.mask = next.mask;
    this.hi = next.hi;
    this.lo = next.lo;
    this.firstDoc = next.firstDoc;
    this.firstPos = next.firstPos;
    this.firstCp = next.firstCp;
    this.firstByte = next.firstByte;
    this.docs = next.docs;
    this.lastDoc = next.lastDoc;
    this.count = next.count;
  }
}
