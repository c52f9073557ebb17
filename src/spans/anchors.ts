/**
 * The anchors of substring windows (./byteWindows.ts, ./words.ts): a pass before pass 1 counts,
 * for every window of the corpus, its anchor, the gram of least hash among its grams, which depends
 * on the window's text alone; a window whose anchor's hash was counted once occurs once, so pass 1
 * and pass 2 walk only the others. That pass keeps each document's windows as runs of consecutive
 * windows of one anchor ({@link AnchorRuns}), so that after it each run is known to be walked or
 * passed over: a bit per run, not a hash lookup per window; a document with no walked run is not
 * read again; and pass 1 knows how many windows it will walk before it starts.
 * @module
 */
import { grown, mapped, shrunk } from '../common/roomArrays.js';

/** `a`, or a copy at least `n` long (doubling). */
export function more<T extends Int32Array | Uint32Array | Uint16Array | Uint8Array>(a: T, n: number): T {
  if (n <= a.length) return a;
  const x = new (a.constructor as new(n: number) => T)(Math.max(n, a.length * 2));
  x.set(a);
  return x;
}

/** 32-bit hashes of anchors counted by the pass before pass 1, saturating at 2 (one pair of two different anchors' texts sharing a hash makes both walked: a cost, never a loss). */
export class AnchorCounts {
  private keys = mapped(Uint32Array, 1024);
  private counts = mapped(Uint8Array, 1024);
  private size = 0;

  /** Counts one anchor occurrence of hash `h`. */
  add(h: number): void {
    if (2 * (this.size + 1) > this.counts.length) this.grow();
    const i = this.slot(h);
    if (this.counts[i] === 0) {
      this.keys[i] = h;
      this.size++;
    }
    if (this.counts[i]! < 2) this.counts[i]!++;
  }

  /** Whether hash `h` was counted more than once. */
  repeated(h: number): boolean {
    return this.counts[this.slot(h)] === 2;
  }

  /** Hash `h`'s slot when it was counted more than once, else −1 (slots are below {@link capacity}). */
  repeatedSlot(h: number): number {
    const i = this.slot(h);
    return this.counts[i] === 2 ? i : -1;
  }

  /** Calls `each(h, count)` for each hash counted (count 1, or 2 for more than once), in slot order. */
  forEach(each: (h: number, count: number) => void): void {
    for (let i = 0; i < this.counts.length; i++) if (this.counts[i] !== 0) each(this.keys[i]!, this.counts[i]!);
  }

  /** Its keys' memory, zeroed, as one number per slot (the table is empty after). */
  spend(): Uint32Array {
    const keys = this.keys.fill(0);
    shrunk(this.counts, 0);
    this.keys = mapped(Uint32Array, 1024);
    this.counts = mapped(Uint8Array, 1024);
    this.size = 0;
    return keys;
  }

  /** Slots in all. */
  get capacity(): number {
    return this.counts.length;
  }

  /** Distinct anchor hashes counted. */
  get distinct(): number {
    return this.size;
  }

  /** Bytes the table holds. */
  get bytes(): number {
    return this.keys.byteLength + this.counts.byteLength;
  }

  private slot(h: number): number {
    const mask = this.counts.length - 1;
    for (let i = h & mask;; i = (i + 1) & mask) {
      if (this.counts[i] === 0 || this.keys[i] === h) return i;
    }
  }

  private grow(): void {
    const keys = this.keys;
    const counts = this.counts;
    // Mapped, not malloc'd: the old arrays, freed, give their pages back (src/common/roomArrays.ts).
    this.keys = mapped(Uint32Array, keys.length * 2);
    this.counts = mapped(Uint8Array, counts.length * 2);
    for (let i = 0; i < counts.length; i++) {
      if (counts[i] === 0) continue;
      const j = this.slot(keys[i]!);
      this.keys[j] = keys[i]!;
      this.counts[j] = counts[i]!;
    }
    // Given back now, not at a garbage collection that may come only after pass 1 has filled its table.
    shrunk(keys, 0);
    shrunk(counts, 0);
  }
}

/**
 * Per document, its windows' runs (consecutive windows of one anchor gram: one per anchor counted)
 * in order: each run's anchor hash and windows while the pass counts, then ({@link finish}) its
 * windows, negated for a run passed over. 8 bytes a run while counting, 4 after.
 */
export class AnchorRuns {
  // Grown in place (src/common/roomArrays.ts): a run per ~12 bytes of input, so these are among the largest arrays.
  private hashes = mapped(Uint32Array, 1024, 1 << 24);
  /** Per run: its windows; after {@link finish}, negative for a run whose anchor was counted once. */
  lens = mapped(Int32Array, 1024, 1 << 24);
  private runs = 0;
  /** Document d's runs are [docAt[d], docAt[d + 1]). */
  private docAt = mapped(Int32Array, 1025, 1 << 20);
  /** Documents ended. */
  docs = 0;
  /** Windows in walked runs, after {@link finish}: at most this many distinct units in pass 1's table. */
  walked = 0;
  /**
   * After {@link finish}: the sum over repeated anchor hashes of their longest run, at least as
   * many distinct windows as pass 1 will meet (windows of different anchors differ, and a run's windows differ).
   */
  distinctAtLeast = 0;
  private finished = false;

  /** Appends a run of `len` windows of anchor hash `h` to the current document. */
  add(h: number, len: number): void {
    if (this.runs === this.lens.length) {
      this.hashes = grown(this.hashes, this.runs + 1);
      this.lens = grown(this.lens, this.runs + 1);
    }
    this.hashes[this.runs] = h;
    this.lens[this.runs++] = len;
  }

  /** Ends the current document. */
  endDoc(): void {
    if (this.docs + 2 > this.docAt.length) this.docAt = grown(this.docAt, this.docs + 2);
    this.docAt[++this.docs] = this.runs;
  }

  /**
   * Marks each run walked or passed over from the anchors' `counts`; the hashes are dropped, and
   * `counts` is spent (its memory serves here). Allocates nothing: what this pass left unreferenced
   * stays until the garbage collector runs, which in a loop of typed arrays can be long after, beside pass 1's table.
   */
  finish(counts: AnchorCounts): void {
    if (this.finished) return;
    const { hashes, lens } = this;
    let walked = 0;
    // Each run's anchor slot in place of its hash (−1: counted once), then the slots' keys hold their longest run.
    for (let r = 0; r < this.runs; r++) {
      const i = counts.repeatedSlot(hashes[r]!);
      hashes[r] = i;
      if (i < 0) lens[r] = -lens[r]!;
      else walked += lens[r]!;
    }
    const longest = counts.spend();
    for (let r = 0; r < this.runs; r++) {
      const i = hashes[r]! | 0;
      if (i >= 0) longest[i] = Math.max(longest[i]!, lens[r]!);
    }
    this.walked = walked;
    for (let i = 0; i < longest.length; i++) this.distinctAtLeast += longest[i]!;
    shrunk(longest, 0);
    // Their pages given back now, not at the next garbage collection (src/common/roomArrays.ts); the lens cut to the runs.
    shrunk(this.hashes, 0);
    this.hashes = new Uint32Array(0);
    this.lens = shrunk(this.lens, Math.max(1, this.runs));
    this.docAt = shrunk(this.docAt, this.docs + 1);
    this.finished = true;
  }

  /** Document `doc`'s first run. */
  first(doc: number): number {
    return this.docAt[doc]!;
  }

  /** Past document `doc`'s last run. */
  end(doc: number): number {
    return this.docAt[doc + 1]!;
  }

  /** Windows of document `doc` in walked runs (after {@link finish}). */
  walkedIn(doc: number): number {
    let n = 0;
    for (let r = this.first(doc); r < this.end(doc); r++) if (this.lens[r]! > 0) n += this.lens[r]!;
    return n;
  }

  /** Windows of document `doc`. */
  windowsIn(doc: number): number {
    let n = 0;
    for (let r = this.first(doc); r < this.end(doc); r++) n += Math.abs(this.lens[r]!);
    return n;
  }
}

/** One document's windows as the sweep left them: how many, and each one's anchor gram index into `gh` (its 32-bit hash). */
export interface SweptWindows {
  w: number;
  wj: Int32Array;
  gh: Uint32Array;
}

/** The pass before pass 1 on one document: its windows' anchors counted into `counts`, and with `runs`, their runs there. */
export function countRuns(d: SweptWindows, counts: AnchorCounts, runs?: AnchorRuns): void {
  const { w, wj, gh } = d;
  let last = -1;
  let from = 0;
  for (let k = 0; k < w; k++) {
    const j = wj[k]!;
    if (j === last) continue;
    if (runs && k > 0) runs.add(gh[last]!, k - from);
    last = j;
    from = k;
    counts.add(gh[j]!);
  }
  if (runs) {
    if (w > 0) runs.add(gh[last]!, w - from);
    runs.endDoc();
  }
}

/**
 * The windows of document `d.doc` that its walked runs hold, as indices into `into` (long enough
 * for `d.w`); returns how many. Throws when the windows do not have the runs counted (the document
 * changed between the passes).
 */
export function walkedWindows(d: { doc: number; w: number; wj: Int32Array }, runs: AnchorRuns, into: Int32Array): number {
  const { doc, w, wj } = d;
  let r = runs.first(doc);
  const end = runs.end(doc);
  const lens = runs.lens;
  let last = -1;
  let left = 0;
  let walk = false;
  let n = 0;
  for (let x = 0; x < w; x++) {
    const j = wj[x]!;
    if (j !== last) {
      if (left !== 0 || r >= end) break;
      const len = lens[r++]!;
      walk = len > 0;
      left = walk ? len : -len;
      last = j;
    }
    left--;
    if (walk) into[n++] = x;
  }
  if (left !== 0 || r !== end) throw new Error(`document ${doc} changed since the pass that counted its anchors`);
  return n;
}

/**
 * The windows of document `doc`'s walked runs, from `runs` alone: their indices into `into.at` and
 * each one's run into `into.run` (both long enough for the document's windows). Returns how many.
 */
export function walkList(doc: number, runs: AnchorRuns, into: { at: Int32Array; run: Int32Array }): number {
  const lens = runs.lens;
  let x = 0;
  let n = 0;
  for (let r = runs.first(doc); r < runs.end(doc); r++) {
    const len = lens[r]!;
    if (len < 0) {
      x -= len;
      continue;
    }
    for (let i = 0; i < len; i++) {
      into.at[n] = x++;
      into.run[n++] = r;
    }
  }
  return n;
}

/**
 * Throws unless a sweep of only the walked windows ({@link walkList}) saw the runs counted: `w`
 * windows in all where `windows` were counted, and an anchor that changes exactly where the list's
 * run does (`wj`: each listed window's anchor run in that sweep). Meant for the document changed between the passes.
 */
export function checkWalked(d: { doc: number; w: number; wj: Int32Array; n: number; windows: number }, run: Int32Array): void {
  let same = d.w === d.windows;
  for (let k = 1; k < d.n && same; k++) same = (d.wj[k] === d.wj[k - 1]) === (run[k] === run[k - 1]);
  if (!same) throw new Error(`document ${d.doc} changed since the pass that counted its anchors`);
}
