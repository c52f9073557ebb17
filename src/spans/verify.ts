/**
 * Exactness of `neardup spans` (#50): pass 1 counts units by a 64-bit hash, never by text, so two
 * different texts of one hash would count as one unit. {@link UnitVerifier} then sees, in input
 * order, every occurrence of each hash that occurred more than once (the only ones anything is cut
 * for), with its normalized text: the first occurrence's text is kept (one buffer of code units,
 * so memory grows with the repeated distinct units only), every later one is compared with it code
 * unit by code unit, and a different text becomes a unit of its own in a side table keyed by (hash,
 * text), with its own first occurrence and counts; the slot's counts become its first text's alone
 * (the table's less the other texts' occurrences and the documents only they are in: 12 bytes a
 * repeated unit, no counts of its own).
 * Afterwards each unit is named by its slot `i` and side index `s` (−1: the slot's first text), and
 * the accessors here answer for both, so what is cut, the audit, the counts and the top units are
 * those of an ideal collision-free hash. Without a collision (every real run, at 64 bits) the side
 * table stays empty and pass 2 compares nothing.
 * The check also keeps each repeated unit's first code-point and byte starts, met at its first
 * occurrence (the table keeps neither: only a repeated unit's are ever read, for the audit).
 * @module
 */
import type { UnitTable } from './table.js';
import { grown, mapped, shrunk, takenOver } from '../common/roomArrays.js';
import { FirstOffsets } from './offsets.js';

/** Where an occurrence is: document, position (UTF-16 start, or the sharded job's unit index), code-point and UTF-8 byte start. */
export interface Occurrence {
  doc: number;
  pos: number;
  cp: number;
  byte: number;
}

/** Fields of {@link UnitVerifier}'s `rec`, a repeated unit's three i32. */
const AT = 0;
const LEN = 1;
const LAST = 2;
const REC = 3;

/**
 * A repeated unit whose hash another text shares, from the first occurrence of another text on:
 * its first text's counts are the table's less what the other texts took.
 */
interface Collided {
  /** Its slot. */
  slot: number;
  /** Occurrences of the other texts. */
  others: number;
  /** Documents with the other texts and (so far) not the first text. */
  othersOnly: number;
  /** The last document counted in {@link othersOnly}, while the first text may still come in it. */
  pending: number;
}

/** Units that share a hash with a slot's first text but differ from it: plain arrays, as collisions are rare. */
class SideUnits {
  readonly firstDoc: number[] = [];
  readonly firstPos: number[] = [];
  readonly firstCp: number[] = [];
  readonly firstByte: number[] = [];
  readonly count: number[] = [];
  readonly docs: number[] = [];
  readonly lastDoc: number[] = [];
  /** (repeated unit, text) → side index. */
  readonly index = new Map<string, number>();

  get size(): number {
    return this.count.length;
  }

  add(at: Occurrence): number {
    this.firstDoc.push(at.doc);
    this.firstPos.push(at.pos);
    this.firstCp.push(at.cp);
    this.firstByte.push(at.byte);
    this.count.push(1);
    this.docs.push(1);
    this.lastDoc.push(at.doc);
    return this.count.length - 1;
  }

  seen(s: number, doc: number): void {
    this.count[s]!++;
    if (this.lastDoc[s] !== doc) (this.docs[s]!++, (this.lastDoc[s] = doc));
  }
}

/** The side table's key of a text of repeated unit `r`: its code units as Latin-1 pairs (one-to-one, lone surrogates included). */
function sideKey(r: number, key: Uint16Array, len: number): string {
  return `${r}:${Buffer.from(key.buffer, key.byteOffset, 2 * len).toString('latin1')}`;
}

/** Checks the occurrences of a {@link UnitTable}'s repeated hashes against their first texts; see the module comment. */
export class UnitVerifier {
  /** Repeated units (slots counted more than once), numbered in slot order; the table's tag of such a slot is its number + 1. */
  readonly repeated: number;
  /**
   * Per repeated unit r, `rec[3r + …]`: where its first text is in {@link text} ({@link AT}, −1
   * until seen), its length ({@link LEN}), and the last document its first text was seen in
   * ({@link LAST}). 12 bytes: the first text's counts are not counted again here, they are the
   * table's (less the other texts', for a hash that collided: {@link collided}).
   */
  private rec: Int32Array;
  /** Per repeated unit r, its first text's code-point and byte starts, packed (./offsets.ts); kept after {@link end}. */
  private offs: FirstOffsets;
  /** Whether the first occurrences' offsets are read (keep-first's audit); without, {@link check} does not ask for them. */
  offsets = true;
  /** Grown in place (src/common/roomArrays.ts): its old copies, when doubled, stayed in the heap beside it. */
  private text = mapped(Uint16Array, 1024, 1 << 30);
  /**
   * After {@link takeIndex}: the index's memory, the first texts from 0 to {@link base}; {@link text}
   * holds those from {@link base} on (at `position − base`), so that texts beyond it are not copied
   * into a larger buffer, all of it fresh memory again (sentence windows of 526 MB: 42 MB).
   */
  private head: Uint16Array | undefined;
  private base = 0;
  /** Where the next first text goes (a position over {@link head} then {@link text}). */
  private used = 0;
  /**
   * Overlapping windows (byte windows: each a few code units after the one before; word windows: a
   * word after): a first text that begins with the end of the text stored last is stored as its
   * continuation, so a repeated passage costs its own length once, not once per window (word
   * windows of 50 words each took their whole text: 81 MB of the 50.9 MB corpus's 289 MB peak).
   * Where the last text was stored.
   */
  chain = false;
  private lastAt = 0;
  private lastLen = 0;
  private readonly side = new SideUnits();
  /** The repeated units another text of their hash was found for (in practice none), by number. */
  private readonly collided = new Map<number, Collided>();
  private ended = false;

  constructor(private readonly t: UnitTable) {
    let n = 0;
    for (let i = 0; i < t.size; i++) t.setTag(i, t.count(i) > 1 ? ++n : 0);
    this.repeated = n;
    this.offs = new FirstOffsets(n);
    this.rec = mapped(Int32Array, REC * n);
    for (let r = 0; r < n; r++) this.rec[REC * r + AT] = -1;
  }

  /** The first documents of the repeated units (the occurrences {@link check} must see start there). */
  firstDocs(each: (doc: number) => void): void {
    const t = this.t;
    for (let i = 0; i < t.size; i++) if (t.tag(i) > 0) each(t.firstDoc(i));
  }

  /**
   * Per repeated unit, its hash's high half, once the table gave its index up ({@link takeIndex}):
   * what {@link holds} compares.
   */
  private high: Int32Array | undefined;

  /**
   * Takes the table's index ({@link UnitTable.releaseIndex}) when no pass after pass 1 finds a unit
   * by hash (units listed by ../repeats.ts): the repeated units' high halves kept here, 4 bytes each,
   * and the index's memory, all of it touched already, taken for the first texts, which took as much
   * fresh memory (526 MB of lines: 43 MB, 10,500 pages first touched at 12–20 µs each).
   */
  takeIndex(): void {
    // Chained texts (substring windows) are read across one buffer.
    if (this.used > 0 || this.high || this.chain) throw new Error('takeIndex: before the check, once, not with chained texts');
    const t = this.t;
    const high = (this.high = mapped(Int32Array, this.repeated));
    // The repeated units as bits, read in order: a record read per unit of the index was a cache miss each (526 MB of lines: 3.6M).
    const bits = new Uint8Array((t.size + 7) >>> 3);
    for (let i = 0; i < t.size; i++) if (t.tag(i) > 0) bits[i >>> 3]! |= 1 << (i & 7);
    const buf = t.releaseIndex((id, hi) => {
      if ((bits[id >>> 3]! & (1 << (id & 7))) !== 0) high[t.tag(id) - 1] = hi;
    });
    this.head = takenOver(Uint16Array, buf);
    this.base = this.head.length;
  }

  /** Stores `key[from, len)` as the first text at {@link used}, or at {@link base} where the head's rest is too short; returns where. */
  private store(key: Uint16Array, from: number, len: number): number {
    let at = this.used;
    const n = len - from;
    if (at < this.base && at + n > this.base) at = this.base;
    if (at < this.base) this.head!.set(key.subarray(from, len), at);
    else {
      if (this.text.length < at - this.base + n) this.growText(at - this.base + n);
      this.text.set(key.subarray(from, len), at - this.base);
    }
    this.used = at + n;
    return at;
  }

  /** Whether slot `i`, a repeated unit, has hash (hi, lo): after {@link takeIndex}, from the high half kept here; else the table's. */
  holds(i: number, hi: number, lo: number): boolean {
    if (!this.high) return this.t.holds(i, hi, lo);
    if (i < 0 || i >= this.t.size) return false;
    const r = this.t.tag(i) - 1;
    return r >= 0 && this.t.low(i) === (lo | 0) && this.high[r] === (hi | 0);
  }

  /** Whether slot `i` counted more than once, so {@link check} needs its occurrences' texts. */
  isRepeated(i: number): boolean {
    return this.t.tag(i) > 0;
  }

  /** One occurrence of repeated slot `i`, in input order, its normalized text `key[0, len)`; returns its side index, or −1 for the slot's first text. */
  check(i: number, key: Uint16Array, len: number, at: Occurrence): number {
    const r = this.t.tag(i) - 1;
    if (r < 0) return -1;
    const o = REC * r;
    const rec = this.rec;
    if (rec[o + AT]! < 0) {
      // The first occurrence of the hash (input order): its text and offsets are the slot's.
      if (this.offsets) {
        this.offs.set(r, at.cp, at.byte);
      }
      rec[o + LAST] = at.doc;
      if (this.chain && this.continues(r, key, len)) return -1;
      const a = this.store(key, 0, len);
      rec[o + AT] = a;
      rec[o + LEN] = len;
      this.lastAt = a;
      this.lastLen = len;
      return -1;
    }
    if (this.same(r, key, len)) {
      if (rec[o + LAST] !== at.doc) {
        if (this.collided.size > 0) this.firstIn(r, at.doc);
        rec[o + LAST] = at.doc;
      }
      return -1;
    }
    this.otherIn(i, r, at.doc);
    const k = sideKey(r, key, len);
    let s = this.side.index.get(k);
    if (s === undefined) this.side.index.set(k, s = this.side.add(at));
    else this.side.seen(s, at.doc);
    return s;
  }

  /** Repeated unit r's first text, in document `doc` for the first time: a document counted as the other texts' alone is not. */
  private firstIn(r: number, doc: number): void {
    const c = this.collided.get(r);
    if (c && c.pending === doc) {
      c.othersOnly--;
      c.pending = -1;
    }
  }

  /** Another text than repeated unit r's (slot `i`'s) first, in document `doc`. */
  private otherIn(i: number, r: number, doc: number): void {
    let c = this.collided.get(r);
    if (!c) this.collided.set(r, c = { slot: i, others: 0, othersOnly: 0, pending: -1 });
    c.others++;
    // A document without the first text so far: the other texts' alone, unless the first comes later in it.
    if (this.rec[REC * r + LAST] !== doc && c.pending !== doc) {
      c.othersOnly++;
      c.pending = doc;
    }
  }

  /**
   * Reads what {@link check} of slot `i` will read (its record, and its first text's first code
   * unit), and returns a value of it, so that a loop of these over a batch runs their cache misses side by side.
   */
  peek(i: number): number {
    const r = this.t.tag(i) - 1;
    if (r < 0 || this.rec.length === 0) return 0;
    const a = this.rec[REC * r + AT]!;
    return a < 0 ? this.rec[REC * r + LEN]! : a < this.base ? this.head![a]! : this.text[a - this.base]!;
  }

  /** Ends the checks: each repeated slot's counts become its first text's; the texts are dropped unless a hash collided. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const t = this.t;
    for (const c of this.collided.values()) t.setCounts(c.slot, t.count(c.slot) - c.others, t.docs(c.slot) - c.othersOnly);
    if (this.side.size > 0) return;
    shrunk(this.text, 0);
    if (this.head) shrunk(this.head, 0);
    this.head = undefined;
    this.base = 0;
    shrunk(this.rec, 0);
    this.text = new Uint16Array(0);
    this.rec = new Int32Array(0);
  }

  /** Whether occurrences of slot `i` may be of several texts (then {@link resolve} tells which). */
  collides(i: number): boolean {
    const r = this.t.tag(i) - 1;
    return r >= 0 && this.side.size > 0 && this.collided.has(r);
  }

  /** The side index of an occurrence of slot `i` with normalized text `key[0, len)`, or −1 when it is the slot's first text. */
  resolve(i: number, key: Uint16Array, len: number): number {
    const r = this.t.tag(i) - 1;
    if (r < 0 || this.side.size === 0 || !this.collided.has(r) || this.same(r, key, len)) return -1;
    const s = this.side.index.get(sideKey(r, key, len));
    if (s === undefined) throw new Error('a unit that was not checked: the input changed between the passes');
    return s;
  }

  /** Texts found sharing a hash with a slot's first text (0 in practice). */
  get collisions(): number {
    return this.side.size;
  }

  /** Distinct units: the table's slots and the other texts of their hashes. */
  get distinct(): number {
    return this.t.size + this.side.size;
  }

  /** Whether unit (slot `i`, side index `s`) occurs more than once (a unit {@link eachRepeated} gives). */
  repeatedUnit(i: number, s: number): boolean {
    return s < 0 ? this.t.tag(i) > 0 && this.t.count(i) > 1 : this.side.count[s]! > 1;
  }

  /** Every unit occurring more than once, as (slot, side index) pairs in `each` (a side unit's slot is −1: the accessors do not read it). */
  eachRepeated(each: (i: number, s: number) => void): void {
    const t = this.t;
    for (let i = 0; i < t.size; i++) if (t.tag(i) > 0 && t.count(i) > 1) each(i, -1);
    for (let s = 0; s < this.side.size; s++) if (this.side.count[s]! > 1) each(-1, s);
  }

  firstDoc(i: number, s: number): number {
    return s < 0 ? this.t.firstDoc(i) : this.side.firstDoc[s]!;
  }

  /** Whether unit (slot `i`, side index `s`) first occurs at position `pos` of document `doc`. */
  isFirst(i: number, s: number, doc: number, pos: number): boolean {
    return s < 0 ? this.t.firstIn(i, doc) && this.t.firstPos(i) === pos : this.side.firstDoc[s] === doc && this.side.firstPos[s] === pos;
  }

  firstPos(i: number, s: number): number {
    return s < 0 ? this.t.firstPos(i) : this.side.firstPos[s]!;
  }

  firstCp(i: number, s: number): number {
    return s < 0 ? this.offs.cp(this.t.tag(i) - 1) : this.side.firstCp[s]!;
  }

  firstByte(i: number, s: number): number {
    return s < 0 ? this.offs.byte(this.t.tag(i) - 1) : this.side.firstByte[s]!;
  }

  count(i: number, s: number): number {
    return s < 0 ? this.t.count(i) : this.side.count[s]!;
  }

  docs(i: number, s: number): number {
    return s < 0 ? this.t.docs(i) : this.side.docs[s]!;
  }

  /**
   * Stores `key[0, len)` as repeated unit `r`'s first text where it begins with the last stored
   * text less its first 1–4 code units (a code point on), or less its first word and the separator
   * after it (code unit 1: a word on), appending only the rest; false, storing nothing, otherwise.
   */
  private continues(r: number, key: Uint16Array, len: number): boolean {
    const pa = this.lastAt;
    const plen = this.lastLen;
    if (plen === 0 || pa + plen !== this.used) return false;
    const text = this.text;
    for (let c = 1; c <= 5; c++) {
      let d = c;
      if (c === 5) {
        // Past the first word's separator (code unit 1, which no word holds).
        d = 0;
        while (d < plen && text[pa + d] !== 1) d++;
        if (++d <= 4) continue;
      }
      if (d >= plen) continue;
      const overlap = plen - d;
      if (overlap > len) continue;
      let j = 0;
      while (j < overlap && text[pa + d + j] === key[j]) j++;
      if (j < overlap) continue;
      // No head with chained texts (takeIndex): the rest goes right after the last text.
      this.store(key, overlap, len);
      this.rec[REC * r + AT] = pa + d;
      this.rec[REC * r + LEN] = len;
      this.lastAt = pa + d;
      this.lastLen = len;
      return true;
    }
    return false;
  }

  private same(r: number, key: Uint16Array, len: number): boolean {
    if (this.rec[REC * r + LEN] !== len) return false;
    let a = this.rec[REC * r + AT]!;
    const text = a < this.base ? this.head! : this.text;
    if (a >= this.base) a -= this.base;
    for (let j = 0; j < len; j++) if (text[a + j] !== key[j]) return false;
    return true;
  }

  private growText(n: number): void {
    // Where a first text starts is an i32 of {@link rec}.
    if (this.base + n > 0x7fffffff) throw new Error('the check: more than 2³¹ code units of repeated texts');
    this.text = grown(this.text, n);
  }
}
