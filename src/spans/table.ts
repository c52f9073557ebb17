/**
 * The table of `neardup spans`' first pass: for each distinct unit, by its 64-bit hash, where it
 * first occurs (document and UTF-16 start), in how many documents, and how many times. No string
 * per unit. Two arrays:
 * - the records, 20 bytes a unit (five 32-bit fields side by side), numbered in the order the units
 *   were first met: a unit's id never changes, and the records of new units are written in order,
 *   so that a record array sized for the most units that can come costs memory only for those
 *   that came (its pages untouched till then);
 * - an open-addressing index from the hash to the id, 8 bytes a slot (the hash's high half, to
 *   pass over other units without reading their records, and the id + 1, 0 in an empty slot).
 * (a unit's first document is not in its record: ids are numbered in document order, so 4 bytes a
 *   document tell it, where 4 bytes a unit did);
 * Where the table was 36 bytes a slot at most half full, it is 8 bytes a slot and 20 a unit: a
 * lookup reads an index slot, then one record (the records of a repeated passage's windows are
 * side by side, in the order its second occurrence asks for them).
 * The first occurrence's code-point and byte starts are not here: the check (./verify.ts) finds
 * them for the repeated units alone.
 * @module
 */
import { grown, mapped, release, shrunk } from '../common/roomArrays.js';

/** A record's fields in {@link UnitTable}'s `rec`, in this order. */
const LO = 0;
const COUNT = 1;
const DOCS = 2;
const LAST_DOC = 3;
const FIRST_POS = 4;
const STRIDE = 5;

/** Open-addressing hash table from a unit's 64-bit hash to its first occurrence and counts; units are numbered 0, 1, 2… as first met. */
export class UnitTable {
  /** Index slots (any number: a hash's home is its scaled high bits, not its low bits masked). */
  private cap: number;
  /** cap / 2³², which scales a 32-bit hash to its home slot. */
  private scale: number;
  /** Distinct units held: their ids are 0 to size − 1. */
  size = 0;
  /** Per index slot: the hash's high half, then its unit's id + 1 (0: empty). */
  private index: Int32Array;
  /** The units' fields, {@link STRIDE} a unit, by id. */
  private rec: Int32Array;
  /** Units held before the next {@link add} of a new one grows the index: a fraction ({@link maxLoad}) of its slots. */
  private limit: number;
  /** The fraction of index slots held at most (1/2 unless {@link reserve} says otherwise). */
  private maxLoad = 0.5;
  /**
   * Per document d up to {@link lastDoc}: the first id of a unit first met in d or after (units
   * come in document order, so ids are numbered in the order of their first documents): a unit's
   * first document is found here, 4 bytes a document, not kept in its record, 4 bytes a unit.
   */
  private idAt = mapped(Int32Array, 1024, 1 << 28);
  /** The last document added to (−1: none). */
  private lastDoc = -1;
  /** The last document {@link firstDoc} found, for its next call (ids are often asked for in order). */
  private near = 0;

  constructor(capacity = 1 << 12) {
    this.cap = Math.max(16, Math.ceil(capacity));
    this.scale = this.cap / 2 ** 32;
    this.index = mapped(Int32Array, 2 * this.cap);
    this.limit = Math.floor(this.cap / 2);
    this.rec = mapped(Int32Array, STRIDE * this.limit);
  }

  /** Index slots in all. */
  get slots(): number {
    return this.cap;
  }

  /** The document of unit `i`'s first occurrence: the last document whose first id is at most `i`. */
  firstDoc(i: number): number {
    const at = this.idAt;
    const last = this.lastDoc;
    let d = this.near;
    if (d <= last && at[d]! <= i && (d === last || at[d + 1]! > i)) return d;
    let lo = 0;
    let hi = last;
    while (lo < hi) {
      const m = (lo + hi + 1) >>> 1;
      if (at[m]! <= i) lo = m;
      else hi = m - 1;
    }
    d = lo;
    this.near = d;
    return d;
  }

  /** Whether unit `i` was first met in document `doc`. */
  firstIn(i: number, doc: number): boolean {
    if (doc > this.lastDoc || doc < 0) return false;
    return this.idAt[doc]! <= i && (doc === this.lastDoc ? i < this.size : i < this.idAt[doc + 1]!);
  }

  /** Starts document `doc` (documents come in order). */
  private enter(doc: number): void {
    if (doc < this.lastDoc) throw new Error(`the table's documents must come in order (${doc} after ${this.lastDoc})`);
    if (doc + 2 > this.idAt.length) this.idAt = grown(this.idAt, doc + 2);
    for (let d = this.lastDoc + 1; d <= doc; d++) this.idAt[d] = this.size;
    this.lastDoc = doc;
  }

  /** Whether the index was given up ({@link releaseIndex}): units are then found by id only. */
  private released = false;

  /**
   * Gives up the index once units are no longer added nor found by hash (pass 1 over, when every
   * later pass finds its units by id: line, paragraph and sentence units, ../repeats.ts): calls
   * `each(id, hi)` with each unit's high half (which only the index held), then returns the
   * index's memory, every page of it touched, for the check's texts (./verify.ts), which took as
   * much fresh memory again (a page's first touch is dear: 12–20 µs on this machine).
   */
  releaseIndex(each: (id: number, hi: number) => void): ArrayBuffer {
    const old = this.index;
    for (let j = 0; j < old.length; j += 2) {
      const id = old[j + 1]!;
      if (id !== 0) each(id - 1, old[j]!);
    }
    this.released = true;
    this.index = new Int32Array(0);
    // The next add of a new unit grows the index, which throws.
    this.limit = -1;
    return old.buffer as ArrayBuffer;
  }

  /** The low half of unit `i`'s hash. */
  low(i: number): number {
    return this.rec[i * STRIDE + LO]!;
  }

  /** Whether unit `i` has hash (hi, lo). */
  holds(i: number, hi: number, lo: number): boolean {
    return i >= 0 && i < this.size && this.rec[i * STRIDE + LO] === (lo | 0) && this.find(hi, lo) === i;
  }

  /** The first occurrence's UTF-16 start in its document's text (the sharded job: its unit index). */
  firstPos(i: number): number {
    return this.rec[i * STRIDE + FIRST_POS]!;
  }

  /** Occurrences in all. */
  count(i: number): number {
    return this.rec[i * STRIDE + COUNT]!;
  }

  /** Distinct documents the unit occurs in. */
  docs(i: number): number {
    return this.rec[i * STRIDE + DOCS]!;
  }

  /**
   * After the counting, the record's field of the last document seen is free: exactness
   * (./verify.ts) keeps a number there (its repeated unit's index + 1), so as to need no column of its own.
   */
  tag(i: number): number {
    return this.rec[i * STRIDE + LAST_DOC]!;
  }

  /** Sets {@link tag}; only once no more occurrences are added. */
  setTag(i: number, v: number): void {
    this.rec[i * STRIDE + LAST_DOC] = v;
  }

  /** Sets unit `i`'s counts to those of its first occurrence's text alone (./verify.ts: other texts of its hash counted apart). */
  setCounts(i: number, count: number, docs: number): void {
    this.rec[i * STRIDE + COUNT] = count;
    this.rec[i * STRIDE + DOCS] = docs;
  }

  /**
   * Room for `units` distinct units before the index first grows, when the table is still empty (a
   * hint: it grows as needed anyway), the index then holding at most `load` of its slots (1/2 by
   * default; more is more probes per lookup, in a smaller index; it grows by half when fuller than
   * 1/2, so as to stay between 2/3 of `load` and `load`); and records for `most` units (at least
   * `units`), which take memory only as units come.
   */
  reserve(units: number, load = 0.5, most = units): void {
    if (this.size > 0) return;
    this.maxLoad = load;
    const cap = Math.max(this.cap, Math.ceil(units / load));
    this.limit = Math.floor(cap * load);
    if (cap !== this.cap) {
      this.cap = cap;
      this.scale = cap / 2 ** 32;
      this.index = mapped(Int32Array, 2 * cap);
    }
    const records = Math.max(units, most, this.limit);
    // Room for them all, taken an eighth at a time: a buffer cut down later ({@link dropSingles}) has
    // its cut part zeroed first, so pages never touched would be touched then (50.9 MB: 46 MB at once).
    if (records * STRIDE > this.rec.length) this.rec = mapped(Int32Array, Math.max(this.rec.length, STRIDE * (records >>> 3)), records * STRIDE);
  }

  /** Hash (hi, lo)'s home slot: a 32-bit mix of it, scaled to the slots (below `cap`: (2³² − 1) · cap / 2³² rounds below cap). */
  private home(hi: number, lo: number): number {
    return Math.floor(((Math.imul(hi ^ (lo >>> 15), 0x9e3779b1) ^ lo) >>> 0) * this.scale);
  }

  /**
   * Reads hash (hi, lo)'s home slot and the record it names, and returns a field of it, so that an
   * {@link add} or {@link find} of it soon after finds both cached: a loop of these over a batch of
   * hashes has their cache misses run side by side, where the adds, each waiting on its own, ran
   * them one at a time.
   */
  peek(hi: number, lo: number): number {
    const s = 2 * this.home(hi, lo);
    const id = this.index[s + 1]!;
    // The record only where the slot's high half matches: a new unit (most, in pass 1) never reads one, and its read was a cache miss for nothing.
    return id === 0 || this.index[s] !== (hi | 0) ? id : this.rec[(id - 1) * STRIDE + LO]!;
  }

  /** The id of hash (hi, lo), or −1. */
  find(hi: number, lo: number): number {
    if (this.released) throw new Error('the table gave its index up: no unit is found by hash');
    const { index, rec } = this;
    const h = hi | 0;
    const l = lo | 0;
    for (let i = this.home(hi, lo);; i = i + 1 === this.cap ? 0 : i + 1) {
      const id = index[2 * i + 1]!;
      if (id === 0) return -1;
      if (index[2 * i] === h && rec[(id - 1) * STRIDE + LO] === l) return id - 1;
    }
  }

  /**
   * Counts one occurrence of hash (hi, lo) in document `doc` at UTF-16 start `pos`; returns its id.
   * Why these parameters: called once per unit in the hot loop, where an options object would be an allocation per unit.
   */
  add(hi: number, lo: number, doc: number, pos: number): number {
    if (doc !== this.lastDoc) this.enter(doc);
    if (this.size >= this.limit) this.grow();
    const { index, rec } = this;
    const h = hi | 0;
    const l = lo | 0;
    let i = this.home(hi, lo);
    for (;; i = i + 1 === this.cap ? 0 : i + 1) {
      const id = index[2 * i + 1]!;
      if (id === 0) break;
      const o = (id - 1) * STRIDE;
      if (index[2 * i] === h && rec[o + LO] === l) {
        rec[o + COUNT]!++;
        if (rec[o + LAST_DOC] !== doc) {
          rec[o + DOCS]!++;
          rec[o + LAST_DOC] = doc;
        }
        return id - 1;
      }
    }
    const id = this.size++;
    index[2 * i] = h;
    index[2 * i + 1] = id + 1;
    if (id * STRIDE === rec.length) this.growRecords();
    const r = this.rec;
    const o = id * STRIDE;
    r[o + LO] = l;
    r[o + COUNT] = 1;
    r[o + DOCS] = 1;
    r[o + LAST_DOC] = doc;
    r[o + FIRST_POS] = pos;
    return id;
  }

  /** Twice the records (the units' ids stay). */
  private growRecords(): void {
    const n = this.rec.length + STRIDE;
    this.rec = grown(this.rec, n, n + STRIDE * Math.max(1024, Math.ceil(this.rec.length / STRIDE / 8)));
  }

  /** Units counted once that {@link dropSingles} dropped: distinct units no longer held. */
  dropped = 0;

  /**
   * Drops the units counted once, once the counting is over (substring windows: a third of the
   * units walked, which then matter to nothing but the summary's count of distinct units,
   * {@link dropped}): the others keep their order, renumbered 0, 1, 2…, and the index is rebuilt for
   * them alone, smaller ones in fresh memory once the old is given back (each one's high half waits
   * in its record's field of the last document seen, free after the counting). A unit not found after is
   * one counted once. 50.9 MB of 100-byte windows: 1.04M of 3.20M units dropped, 35 MB given back.
   */
  dropSingles(): void {
    if (this.released) throw new Error('the table gave its index up: dropSingles before releaseIndex');
    const { index, rec } = this;
    for (let j = 0; j < index.length; j += 2) {
      const id = index[j + 1]!;
      if (id !== 0) rec[(id - 1) * STRIDE + LAST_DOC] = index[j]!;
    }
    const at = this.idAt;
    let d = 0;
    let n = 0;
    for (let i = 0; i < this.size; i++) {
      while (d <= this.lastDoc && at[d]! <= i) at[d++] = n;
      if (rec[i * STRIDE + COUNT]! < 2) continue;
      if (n !== i) { for (let f = 0; f < STRIDE; f++) rec[n * STRIDE + f] = rec[i * STRIDE + f]!; }
      n++;
    }
    while (d <= this.lastDoc) at[d++] = n;
    this.dropped += this.size - n;
    this.size = n;
    this.near = 0;
    const cap = Math.max(16, Math.ceil(n / this.maxLoad) + 1);
    // The old index goes before the records are cut (a copy, for a moment beside them), and a new one comes after.
    const smaller = cap < this.cap;
    if (smaller) release(index);
    this.rec = shrunk(rec, Math.max(STRIDE, n * STRIDE));
    if (smaller) {
      this.cap = cap;
      this.scale = cap / 2 ** 32;
      this.index = mapped(Int32Array, 2 * cap);
      this.limit = Math.floor(cap * this.maxLoad);
    }
    const idx = smaller ? this.index : this.index.fill(0);
    const r = this.rec;
    const cap2 = this.cap;
    for (let id = 0; id < n; id++) {
      const o = id * STRIDE;
      const hi = r[o + LAST_DOC]!;
      let i = this.home(hi >>> 0, r[o + LO]! >>> 0);
      while (idx[2 * i + 1] !== 0) i = i + 1 === cap2 ? 0 : i + 1;
      idx[2 * i] = hi;
      idx[2 * i + 1] = id + 1;
      r[o + LAST_DOC] = 0;
    }
  }

  /** Units the table takes before its index next grows. */
  get room(): number {
    return this.limit - this.size;
  }

  /**
   * Grows the table now, so that `units` distinct units fit (at least the next growth): one growth
   * to the size the caller projects, instead of one after another, each a rehash into fresh memory;
   * and records for them, which take memory only as units come.
   */
  growFor(units: number): void {
    this.grow(Math.max(this.nextCap(), Math.ceil(units / this.maxLoad)));
    if (units * STRIDE > this.rec.length) this.rec = grown(this.rec, units * STRIDE);
  }

  /** The index's slots after its next growth: twice, or half again above a load of 1/2. */
  private nextCap(): number {
    return Math.ceil(this.cap * (this.maxLoad > 0.5 ? 1.5 : 2));
  }

  /** More index slots ({@link nextCap}, or `cap`): each unit placed again from its hash (the high half in the old index, the low in its record). */
  private grow(cap = this.nextCap()): void {
    if (this.released) throw new Error('the table gave its index up: no unit is added');
    const old = this.index;
    const index = mapped(Int32Array, 2 * cap);
    this.cap = cap;
    this.scale = cap / 2 ** 32;
    for (let j = 0; j < old.length; j += 2) {
      const id = old[j + 1]!;
      if (id === 0) continue;
      let i = this.home(old[j]! >>> 0, this.rec[(id - 1) * STRIDE + LO]! >>> 0);
      while (index[2 * i + 1] !== 0) i = i + 1 === cap ? 0 : i + 1;
      index[2 * i] = old[j]!;
      index[2 * i + 1] = id;
    }
    this.index = index;
    this.limit = Math.floor(cap * this.maxLoad);
  }
}
