/**
 * {@link RepeatLists}: where pass 1 met the units that occur more than once, so that pass 2 (and
 * the check) visit those units alone, by index, instead of hashing every unit of a document again.
 * Per document, in input order: its later occurrences (a unit whose hash pass 1 had counted
 * before: unit index and table slot, 8 bytes each), and, once pass 1 has ended, the first
 * occurrences of the hashes counted more than once (their slots, by UTF-16 start). Nothing is kept
 * for a unit seen once.
 * @module
 */
import type { UnitTable } from './table.js';
import type { Units } from './units.js';

/** A copy of `a` with room for at least `n` entries (doubling). */
function grownInt(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(Math.max(n, 2 * a.length));
  b.set(a);
  return b;
}

/** The later occurrences and first occurrences of repeated units, per document; see the module comment. */
export class RepeatLists {
  /** Per document: where its later occurrences start in {@link laterK} / {@link laterSlot} (one more entry after {@link end}). */
  private laterAt: Int32Array = new Int32Array(1024);
  private laterK: Int32Array = new Int32Array(4096);
  private laterSlot: Int32Array = new Int32Array(4096);
  private n = 0;
  private docs = 0;
  /** Per document: where its first occurrences start in {@link firstSlot} (after {@link end}). */
  private firstAt: Int32Array = new Int32Array(1);
  private firstSlot: Int32Array = new Int32Array(0);

  /** Starts document `doc` of pass 1 (0, 1, 2… in order). */
  begin(doc: number): void {
    if (doc + 2 > this.laterAt.length) this.laterAt = grownInt(this.laterAt, doc + 2);
    this.laterAt[doc] = this.n;
    this.docs = doc + 1;
  }

  /** Unit `k` of the current document is a later occurrence of slot `i`'s hash. */
  later(k: number, i: number): void {
    if (this.n === this.laterK.length) {
      this.laterK = grownInt(this.laterK, this.n + 1);
      this.laterSlot = grownInt(this.laterSlot, this.n + 1);
    }
    this.laterK[this.n] = k;
    this.laterSlot[this.n++] = i;
  }

  /** Ends pass 1: the first occurrences of the slots of `t` counted more than once, by document, then by start. */
  end(t: UnitTable): void {
    this.laterAt[this.docs] = this.n;
    const at = new Int32Array(this.docs + 1);
    let m = 0;
    for (let i = 0; i < t.size; i++) {
      if (t.count(i) > 1) {
        at[t.firstDoc(i) + 1]!++;
        m++;
      }
    }
    for (let d = 0; d < this.docs; d++) at[d + 1]! += at[d]!;
    const slot = new Int32Array(m);
    const fill = at.slice(0, this.docs);
    for (let i = 0; i < t.size; i++) if (t.count(i) > 1) slot[fill[t.firstDoc(i)]!++] = i;
    for (let d = 0; d < this.docs; d++) {
      if (at[d + 1]! - at[d]! > 1) slot.subarray(at[d]!, at[d + 1]!).sort((a, b) => t.firstPos(a) - t.firstPos(b));
    }
    this.firstAt = at;
    this.firstSlot = slot;
  }

  /** Whether document `doc` has no listed unit (nothing to cut, check or locate there). */
  none(doc: number): boolean {
    return doc >= this.docs || (this.laterAt[doc] === this.laterAt[doc + 1] && this.firstAt[doc] === this.firstAt[doc + 1]);
  }

  /**
   * Calls `each(k, slot, first)` for the listed units of document `doc`, split into `u` as pass 1
   * split it, in unit order: `first` when unit `k` is its slot's first occurrence. A first
   * occurrence whose start is no unit's means the document changed between the passes.
   */
  each(doc: number, u: Units, t: UnitTable, each: (k: number, i: number, first: boolean) => void): void {
    let a = this.laterAt[doc]!;
    const ae = this.laterAt[doc + 1]!;
    let b = this.firstAt[doc]!;
    const be = this.firstAt[doc + 1]!;
    let k = 0;
    let kb = -1;
    while (a < ae || b < be) {
      if (b < be && kb < 0) {
        const pos = t.firstPos(this.firstSlot[b]!);
        while (k < u.count && u.start[k]! < pos) k++;
        if (k >= u.count || u.start[k] !== pos) throw new Error(`document ${doc} changed between the passes`);
        kb = k;
      }
      const ka = a < ae ? this.laterK[a]! : -1;
      if (kb < 0 || (ka >= 0 && ka < kb)) {
        if (ka >= u.count) throw new Error(`document ${doc} changed between the passes`);
        each(ka, this.laterSlot[a++]!, false);
      } else {
        each(kb, this.firstSlot[b++]!, true);
        kb = -1;
      }
    }
  }
}
