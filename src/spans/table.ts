/**
 * The table of `neardup spans`' first pass: for each distinct unit, by its 64-bit hash, where it
 * first occurs (document, UTF-16, code-point and byte offset), in how many documents, and how many
 * times. Open addressing, at most half full, no string per unit: 36 bytes a slot, eight 32-bit
 * fields side by side (one 32-byte run, so a probe and its update touch one cache line, where a
 * column per field cost a cache miss per field at a million units) and the byte offset apart.
 * @module
 */

const EMPTY = -1;
/** A slot's fields in {@link UnitTable}'s `s`, in this order. */
const HI = 0;
const LO = 1;
const FIRST_DOC = 2;
const COUNT = 3;
const DOCS = 4;
const LAST_DOC = 5;
const FIRST_POS = 6;
const FIRST_CP = 7;
const STRIDE = 8;

/** Open-addressing hash table from a unit's 64-bit hash to its first occurrence and counts. */
export class UnitTable {
  private mask: number;
  /** Distinct units held. */
  size = 0;
  /** The slots' fields, {@link STRIDE} a slot; the document of the first occurrence is −1 in an empty slot. */
  private s: Int32Array;
  /** The first occurrence's UTF-8 byte start, per slot. */
  private byte: Int32Array;
  /** Units held before the next {@link add} of a new one grows the table: a fraction ({@link maxLoad}) of the slots. */
  private limit: number;
  /** The fraction of slots held at most (1/2 unless {@link reserve} says otherwise). */
  private maxLoad = 0.5;
  /** Told, when the table grows, where each old slot went (`moved[old]`, −1 for an empty one): slots held elsewhere follow. */
  onGrow: ((moved: Int32Array) => void) | undefined;

  constructor(capacity = 1 << 12) {
    let cap = 16;
    while (cap < capacity) cap *= 2;
    this.mask = cap - 1;
    this.s = new Int32Array(cap * STRIDE);
    for (let i = 0; i < cap; i++) this.s[i * STRIDE + FIRST_DOC] = EMPTY;
    this.byte = new Int32Array(cap);
    this.limit = cap / 2;
  }

  /** Slots in all (for scans). */
  get capacity(): number {
    return this.mask + 1;
  }

  /** Whether slot `i` holds a unit. */
  used(i: number): boolean {
    return this.s[i * STRIDE + FIRST_DOC]! !== EMPTY;
  }

  /** The document of the unit's first occurrence. */
  firstDoc(i: number): number {
    return this.s[i * STRIDE + FIRST_DOC]!;
  }

  /** Whether slot `i` holds hash (hi, lo). */
  holds(i: number, hi: number, lo: number): boolean {
    return this.s[i * STRIDE + HI] === (hi | 0) && this.s[i * STRIDE + LO] === (lo | 0);
  }

  /** The first occurrence's UTF-16 start in its document's text (the sharded job: its unit index). */
  firstPos(i: number): number {
    return this.s[i * STRIDE + FIRST_POS]!;
  }

  /** The first occurrence's code-point start. */
  firstCp(i: number): number {
    return this.s[i * STRIDE + FIRST_CP]!;
  }

  /** The first occurrence's UTF-8 byte start. */
  firstByte(i: number): number {
    return this.byte[i]!;
  }

  /** Occurrences in all. */
  count(i: number): number {
    return this.s[i * STRIDE + COUNT]!;
  }

  /** Distinct documents the unit occurs in. */
  docs(i: number): number {
    return this.s[i * STRIDE + DOCS]!;
  }

  /**
   * After the counting, the slot's field of the last document seen is free: exactness
   * (./verify.ts) keeps a number there (its repeated unit's index + 1), so as to need no column of its own.
   */
  tag(i: number): number {
    return this.s[i * STRIDE + LAST_DOC]!;
  }

  /** Sets {@link tag}; only once no more occurrences are added. */
  setTag(i: number, v: number): void {
    this.s[i * STRIDE + LAST_DOC] = v;
  }

  /** Sets the first occurrence's code-point and UTF-8 byte starts (`neardup spans` finds them in pass 2, for the repeated units alone). */
  setFirstOffsets(i: number, cp: number, byte: number): void {
    this.s[i * STRIDE + FIRST_CP] = cp;
    this.byte[i] = byte;
  }

  /** Sets the slot's counts to those of its first occurrence's text alone (./verify.ts: other texts of its hash counted apart). */
  setCounts(i: number, count: number, docs: number): void {
    this.s[i * STRIDE + COUNT] = count;
    this.s[i * STRIDE + DOCS] = docs;
  }

  /**
   * Room for `units` distinct units before the first growth, when the table is still empty (a hint:
   * it grows as needed anyway), the table then holding at most `load` of its slots (1/2 by default;
   * more is more probes per lookup, in a smaller table).
   */
  reserve(units: number, load = 0.5): void {
    if (this.size > 0) return;
    this.maxLoad = load;
    let cap = this.capacity;
    while (cap * load < units) cap *= 2;
    this.limit = Math.floor(cap * load);
    if (cap === this.capacity) return;
    const next = new UnitTable(cap);
    this.mask = next.mask;
    this.s = next.s;
    this.byte = next.byte;
  }

  private home(hi: number, lo: number): number {
    return (Math.imul(hi ^ (lo >>> 15), 0x9e3779b1) ^ lo) & this.mask;
  }

  /**
   * Reads hash (hi, lo)'s home slot and returns a field of it, so that an {@link add} of it soon
   * after finds the slot cached: a loop of these over a batch of hashes has their cache misses run
   * side by side, where the adds, each waiting on its own, ran them one at a time.
   */
  peek(hi: number, lo: number): number {
    return this.s[this.home(hi, lo) * STRIDE + FIRST_DOC]!;
  }

  /** {@link peek}, and the home slot's byte offset too (pass 1 of byte windows writes it for every new unit). */
  peekWithByte(hi: number, lo: number): number {
    const i = this.home(hi, lo);
    return this.s[i * STRIDE + FIRST_DOC]! | this.byte[i]!;
  }

  /** The slot of hash (hi, lo), or −1. */
  find(hi: number, lo: number): number {
    const s = this.s;
    const h = hi | 0;
    const l = lo | 0;
    for (let i = this.home(hi, lo);; i = (i + 1) & this.mask) {
      const o = i * STRIDE;
      if (s[o + FIRST_DOC] === EMPTY) return -1;
      if (s[o + HI] === h && s[o + LO] === l) return i;
    }
  }

  /**
   * Counts one occurrence of hash (hi, lo) in document `doc` at the given offsets; returns its slot.
   * Why these parameters: called once per unit in the hot loop, where an options object would be an allocation per unit.
   */
  add(hi: number, lo: number, doc: number, pos: number, cp: number, byte: number): number {
    if (this.size >= this.limit) this.grow();
    const s = this.s;
    const h = hi | 0;
    const l = lo | 0;
    let i = this.home(hi, lo);
    for (;; i = (i + 1) & this.mask) {
      const o = i * STRIDE;
      if (s[o + FIRST_DOC] === EMPTY) break;
      if (s[o + HI] === h && s[o + LO] === l) {
        s[o + COUNT]!++;
        if (s[o + LAST_DOC] !== doc) {
          s[o + DOCS]!++;
          s[o + LAST_DOC] = doc;
        }
        return i;
      }
    }
    this.size++;
    const o = i * STRIDE;
    s[o + HI] = h;
    s[o + LO] = l;
    s[o + FIRST_DOC] = doc;
    s[o + COUNT] = 1;
    s[o + DOCS] = 1;
    s[o + LAST_DOC] = doc;
    s[o + FIRST_POS] = pos;
    s[o + FIRST_CP] = cp;
    // A slot is never emptied, so a new one's is 0 already: pass 1 of keep-first gives 0 (its offsets come in pass 2), and skips a cache miss.
    if (byte !== 0) this.byte[i] = byte;
    return i;
  }

  /** Units the table takes before its next growth. */
  get room(): number {
    return this.limit - this.size;
  }

  /**
   * Grows the table now, so that `units` distinct units fit (at least twice the slots): one growth
   * to the size the caller projects, instead of a doubling, a rehash and fresh memory each time.
   */
  growFor(units: number): void {
    let cap = this.capacity * 2;
    while (cap * this.maxLoad < units) cap *= 2;
    this.grow(cap);
  }

  private grow(cap = this.capacity * 2): void {
    const old = this.capacity;
    const { s, byte } = this;
    const next = new UnitTable(cap);
    const moved = this.onGrow ? new Int32Array(old).fill(-1) : undefined;
    for (let j = 0; j < old; j++) {
      const o = j * STRIDE;
      if (s[o + FIRST_DOC] === EMPTY) continue;
      let i = next.home(s[o + HI]! >>> 0, s[o + LO]! >>> 0);
      while (next.s[i * STRIDE + FIRST_DOC] !== EMPTY) i = (i + 1) & next.mask;
      if (moved) moved[j] = i;
      const n = i * STRIDE;
      for (let f = 0; f < STRIDE; f++) next.s[n + f] = s[o + f]!;
      next.byte[i] = byte[j]!;
    }
    this.mask = next.mask;
    this.s = next.s;
    this.byte = next.byte;
    this.limit = Math.floor((this.mask + 1) * this.maxLoad);
    if (moved) this.onGrow!(moved);
  }
}
