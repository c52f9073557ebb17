/**
 * Exactness of `neardup spans` (#50): pass 1 counts units by a 64-bit hash, never by text, so two
 * different texts of one hash would count as one unit. {@link UnitVerifier} then sees, in input
 * order, every occurrence of each hash that occurred more than once (the only ones anything is cut
 * for), with its normalized text: the first occurrence's text is kept (one buffer of code units,
 * so memory grows with the repeated distinct units only), every later one is compared with it code
 * unit by code unit, and a different text becomes a unit of its own in a side table keyed by (hash,
 * text), with its own first occurrence and counts; the slot's counts become its first text's alone.
 * Afterwards each unit is named by its slot `i` and side index `s` (−1: the slot's first text), and
 * the accessors here answer for both, so what is cut, the audit, the counts and the top units are
 * those of an ideal collision-free hash. Without a collision (every real run, at 64 bits) the side
 * table stays empty and pass 2 compares nothing.
 * The check also keeps each repeated unit's first code-point and byte starts, met at its first
 * occurrence (the table keeps neither: only a repeated unit's are ever read, for the audit).
 * @module
 */
import type { UnitTable } from './table.js';

/** Where an occurrence is: document, position (UTF-16 start, or the sharded job's unit index), code-point and UTF-8 byte start. */
export interface Occurrence {
  doc: number;
  pos: number;
  cp: number;
  byte: number;
}

/** Fields of {@link UnitVerifier}'s `rec`, a repeated unit's 8 i32 (the first two are its `at`). */
const LEN = 2;
const COUNTS = 3;
const DOCS = 4;
const LAST = 5;
const COLLIDED = 6;

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
  private slot: Int32Array;
  /**
   * Per repeated unit r, 32 bytes in one cache line (a column per field cost a cache miss per field
   * per occurrence): where its first text is in {@link text} (−1 until seen; `at[4r]`), then in
   * `rec[8r + …]` its length ({@link LEN}), its first text's counts ({@link COUNTS}, {@link DOCS},
   * {@link LAST}), and 1 when another text shares its hash ({@link COLLIDED}).
   */
  private at: Float64Array;
  private rec: Int32Array;
  /** Per repeated unit r, its first text's code-point and byte starts (`offs[2r]`, `offs[2r + 1]`); kept after {@link end}. */
  private offs: Int32Array;
  /** Whether the first occurrences' offsets are read (keep-first's audit); without, {@link check} does not ask for them. */
  offsets = true;
  private text = new Uint16Array(1024);
  private used = 0;
  /**
   * Overlapping windows (byte windows: each a few code units after the one before): a first text
   * that begins with the end of the text stored last is stored as its continuation, so a repeated
   * passage costs its own length once, not once per window. Where the last text was stored.
   */
  chain = false;
  private lastAt = 0;
  private lastLen = 0;
  private readonly side = new SideUnits();

  constructor(private readonly t: UnitTable) {
    let n = 0;
    for (let i = 0; i < t.size; i++) t.setTag(i, t.count(i) > 1 ? ++n : 0);
    this.repeated = n;
    this.slot = new Int32Array(n);
    for (let i = 0; i < t.size; i++) if (t.tag(i) > 0) this.slot[t.tag(i) - 1] = i;
    this.offs = new Int32Array(2 * n);
    const buf = new ArrayBuffer(32 * n);
    this.at = new Float64Array(buf);
    this.rec = new Int32Array(buf);
    for (let r = 0; r < n; r++) this.at[4 * r] = -1;
  }

  /** The first documents of the repeated units (the occurrences {@link check} must see start there). */
  firstDocs(each: (doc: number) => void): void {
    for (let r = 0; r < this.repeated; r++) each(this.t.firstDoc(this.slot[r]!));
  }

  /** Whether slot `i` counted more than once, so {@link check} needs its occurrences' texts. */
  isRepeated(i: number): boolean {
    return this.t.tag(i) > 0;
  }

  /** One occurrence of repeated slot `i`, in input order, its normalized text `key[0, len)`; returns its side index, or −1 for the slot's first text. */
  check(i: number, key: Uint16Array, len: number, at: Occurrence): number {
    const r = this.t.tag(i) - 1;
    if (r < 0) return -1;
    const o = 8 * r;
    const rec = this.rec;
    if (this.at[4 * r]! < 0) {
      // The first occurrence of the hash (input order): its text and offsets are the slot's.
      if (this.offsets) {
        this.offs[2 * r] = at.cp;
        this.offs[2 * r + 1] = at.byte;
      }
      if (this.chain && this.continues(r, key, len)) {
        rec[o + COUNTS] = 1;
        rec[o + DOCS] = 1;
        rec[o + LAST] = at.doc;
        return -1;
      }
      if (this.text.length < this.used + len) this.growText(this.used + len);
      this.text.set(key.subarray(0, len), this.used);
      this.at[4 * r] = this.used;
      rec[o + LEN] = len;
      this.lastAt = this.used;
      this.lastLen = len;
      this.used += len;
      rec[o + COUNTS] = 1;
      rec[o + DOCS] = 1;
      rec[o + LAST] = at.doc;
      return -1;
    }
    if (this.same(r, key, len)) {
      rec[o + COUNTS]!++;
      if (rec[o + LAST] !== at.doc) (rec[o + DOCS]!++, (rec[o + LAST] = at.doc));
      return -1;
    }
    rec[o + COLLIDED] = 1;
    const k = sideKey(r, key, len);
    let s = this.side.index.get(k);
    if (s === undefined) this.side.index.set(k, s = this.side.add(at));
    else this.side.seen(s, at.doc);
    return s;
  }

  /**
   * Reads what {@link check} of slot `i` will read (its record, and its first text's first code
   * unit), and returns a value of it, so that a loop of these over a batch runs their cache misses side by side.
   */
  peek(i: number): number {
    const r = this.t.tag(i) - 1;
    if (r < 0 || this.rec.length === 0) return 0;
    const a = this.at[4 * r]!;
    return a < 0 ? this.rec[8 * r + LEN]! : this.text[a]!;
  }

  /** Ends the checks: each repeated slot's counts become its first text's; the texts are dropped unless a hash collided. */
  end(): void {
    for (let r = 0; r < this.repeated; r++) if (this.at[4 * r]! >= 0) this.t.setCounts(this.slot[r]!, this.rec[8 * r + COUNTS]!, this.rec[8 * r + DOCS]!);
    if (this.side.size > 0) return;
    this.text = new Uint16Array(0);
    this.at = new Float64Array(0);
    this.rec = new Int32Array(0);
  }

  /** Whether occurrences of slot `i` may be of several texts (then {@link resolve} tells which). */
  collides(i: number): boolean {
    const r = this.t.tag(i) - 1;
    return r >= 0 && this.side.size > 0 && this.rec[8 * r + COLLIDED] === 1;
  }

  /** The side index of an occurrence of slot `i` with normalized text `key[0, len)`, or −1 when it is the slot's first text. */
  resolve(i: number, key: Uint16Array, len: number): number {
    const r = this.t.tag(i) - 1;
    if (r < 0 || this.side.size === 0 || this.rec[8 * r + COLLIDED] !== 1 || this.same(r, key, len)) return -1;
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

  /** Every unit occurring more than once, as (slot, side index) pairs in `each` (a side unit's slot is −1: the accessors do not read it). */
  eachRepeated(each: (i: number, s: number) => void): void {
    for (let r = 0; r < this.repeated; r++) if (this.t.count(this.slot[r]!) > 1) each(this.slot[r]!, -1);
    for (let s = 0; s < this.side.size; s++) if (this.side.count[s]! > 1) each(-1, s);
  }

  firstDoc(i: number, s: number): number {
    return s < 0 ? this.t.firstDoc(i) : this.side.firstDoc[s]!;
  }

  firstPos(i: number, s: number): number {
    return s < 0 ? this.t.firstPos(i) : this.side.firstPos[s]!;
  }

  firstCp(i: number, s: number): number {
    return s < 0 ? this.offs[2 * (this.t.tag(i) - 1)]! : this.side.firstCp[s]!;
  }

  firstByte(i: number, s: number): number {
    return s < 0 ? this.offs[2 * (this.t.tag(i) - 1) + 1]! : this.side.firstByte[s]!;
  }

  count(i: number, s: number): number {
    return s < 0 ? this.t.count(i) : this.side.count[s]!;
  }

  docs(i: number, s: number): number {
    return s < 0 ? this.t.docs(i) : this.side.docs[s]!;
  }

  /**
   * Stores `key[0, len)` as repeated unit `r`'s first text where it begins with the last stored
   * text less its first 1–4 code units, appending only the rest; false, storing nothing, otherwise.
   */
  private continues(r: number, key: Uint16Array, len: number): boolean {
    const pa = this.lastAt;
    const plen = this.lastLen;
    if (plen === 0 || pa + plen !== this.used) return false;
    const text = this.text;
    for (let d = 1; d <= 4 && d < plen; d++) {
      const overlap = plen - d;
      if (overlap > len) continue;
      let j = 0;
      while (j < overlap && text[pa + d + j] === key[j]) j++;
      if (j < overlap) continue;
      if (text.length < this.used + len - overlap) this.growText(this.used + len - overlap);
      this.text.set(key.subarray(overlap, len), this.used);
      this.used += len - overlap;
      this.at[4 * r] = pa + d;
      this.rec[8 * r + LEN] = len;
      this.lastAt = pa + d;
      this.lastLen = len;
      return true;
    }
    return false;
  }

  private same(r: number, key: Uint16Array, len: number): boolean {
    if (this.rec[8 * r + LEN] !== len) return false;
    const text = this.text;
    const a = this.at[4 * r]!;
    for (let j = 0; j < len; j++) if (text[a + j] !== key[j]) return false;
    return true;
  }

  private growText(n: number): void {
    const t = new Uint16Array(Math.max(n, 2 * this.text.length));
    t.set(this.text.subarray(0, this.used));
    this.text = t;
  }
}
