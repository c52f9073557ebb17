/**
 * The two passes of span deduplication over documents in input order: {@link SpanDeduper.observe}
 * counts and locates every unit by its 64-bit hash (pass 1), {@link SpanDeduper.decide} then tells
 * each document which units it loses, the byte ranges cut and the text left (pass 2). The CLI
 * (over files) and {@link dedupSpans} (over records in memory) both drive this class, so they
 * give the same answer.
 * @module
 */
import { countTokens } from '../text/tokens.js';
import { OffsetCursor } from './offsets.js';
import { resolveSpansOptions, type ResolvedSpansOptions, type SpansOptions } from './options.js';
import { UnitTable } from './table.js';
import type { Units } from './units.js';
import { UnitVerifier, type Occurrence } from './verify.js';
import { UnitWalker } from './walker.js';

/** A range cut out of a document's text: code-point and UTF-8 byte offsets, end exclusive. */
export interface CutRange {
  start: number;
  end: number;
  byteStart: number;
  byteEnd: number;
}

/** One removed unit of a document, with the occurrence kept in its place. */
export interface RemovedUnit extends CutRange {
  /** The kept occurrence's document (0-based, input order); −1 in boilerplate mode (`minDocs`), where none is kept. */
  keptDoc: number;
  /** The kept occurrence's code-point start in its document (−1 when none is kept). */
  keptStart: number;
  /** The kept occurrence's UTF-8 byte start in its document (−1 when none is kept). */
  keptByteStart: number;
  /** Occurrences of the unit in the corpus. */
  count: number;
  /** Documents the unit occurs in. */
  docs: number;
}

/** What pass 2 decides for one document. */
export interface DocVerdict {
  /** True when at least one unit was removed. */
  changed: boolean;
  /** The text left (the input text when nothing was removed). */
  text: string;
  /** The ranges cut, merged (overlapping windows are one range), in text order. */
  cuts: CutRange[];
  /** Every removed unit (sentence windows may overlap). */
  units: RemovedUnit[];
  /** Changed and left with no word. */
  emptied: boolean;
  /** Changed and left with fewer than `minDocWords` words: the document is dropped. */
  dropped: boolean;
}

/** One of the most repeated units. */
export interface TopUnit {
  /** Its first occurrence's text (at most 500 characters, then `…`). */
  text: string;
  /** Occurrences. */
  count: number;
  /** Documents it occurs in. */
  docs: number;
}

/** The counts of a run. */
export interface SpansSummary {
  /** Documents read. */
  documents: number;
  /** Units compared (shorter than `minUnitWords` and blank ones are not). */
  units: number;
  /** Distinct units (by normalized text). */
  distinctUnits: number;
  /** Distinct units occurring more than once. */
  repeatedUnits: number;
  /** Units removed. */
  unitsRemoved: number;
  /** UTF-8 bytes of the text fields read. */
  textBytes: number;
  /** UTF-8 bytes of the ranges cut out of them (in dropped documents too; the rest of a dropped document is not counted). */
  bytesRemoved: number;
  /** Documents that lost at least one unit. */
  documentsChanged: number;
  /** Documents left with no word. */
  documentsEmptied: number;
  /** Documents dropped (fewer words left than `minDocWords`). */
  documentsDropped: number;
  /** The most repeated units, by occurrences (ties: first seen first). */
  top: TopUnit[];
}

const TOP_TEXT = 500;

/** How the summary shows unit `k` of `text` among the most repeated: its text, at most 500 characters, then `…`. */
export function topText(text: string, u: Units, k: number): string {
  const s = text.slice(u.textStart[k], u.textEnd[k]);
  return s.length > TOP_TEXT ? `${s.slice(0, TOP_TEXT)}…` : s;
}

/** The kept occurrence and counts of a removed unit, as {@link cutDocument} writes them into its {@link RemovedUnit}. */
export type UnitFacts = Pick<RemovedUnit, 'keptDoc' | 'keptStart' | 'keptByteStart' | 'count' | 'docs'>;

/** A document's verdict with the bytes its cuts remove. */
export type CutVerdict = DocVerdict & { bytesRemoved: number };

/** What {@link cutDocument} cuts out of one document. */
export interface DocCuts {
  /** The document's units, as {@link UnitWalker.each} split them. */
  units: Units;
  /** The unit indices removed, ascending. */
  removed: readonly number[];
  /** The kept occurrence and counts of the j-th removed unit. */
  facts: (j: number) => UnitFacts;
  /** Substring units: overlapping removed windows are one audit row. */
  substring: boolean;
  minDocWords: number;
}

/**
 * What a document loses, given which of its units go: `removed` (unit indices of `u`, ascending, as
 * {@link UnitWalker.each} visits them) and `facts(j)` the kept occurrence and counts of the j-th.
 * The one-process pass 2 and the sharded job's cut stage both call it, so they cut the same bytes.
 */
export function cutDocument(text: string, cut: DocCuts): CutVerdict {
  const { units: u, removed, facts } = cut;
  if (removed.length === 0) return { changed: false, text, cuts: [], units: [], emptied: false, dropped: false, bytesRemoved: 0 };
  const c = new OffsetCursor().reset(text);
  const e = new OffsetCursor().reset(text);
  const rows = cut.substring ? mergeWindows(removed, u.start, u.end) : undefined;
  const pick = rows?.pick ?? removed.map((_, j) => j);
  const units: RemovedUnit[] = pick.map((j, r) => {
    const k = removed[j]!;
    c.at(u.start[k]!);
    e.at(rows?.end[r] ?? u.end[k]!);
    return { start: c.cp, end: e.cp, byteStart: c.byte, byteEnd: e.byte, ...facts(j) };
  });
  // Merged in UTF-16 first (starts increase with k), then kept text and offsets.
  const cutsU: number[] = [];
  for (const k of removed) {
    const a = u.start[k]!;
    const b = u.end[k]!;
    const n = cutsU.length;
    if (n > 0 && a <= cutsU[n - 1]!) cutsU[n - 1] = Math.max(cutsU[n - 1]!, b);
    else cutsU.push(a, b);
  }
  c.reset(text);
  e.reset(text);
  const cuts: CutRange[] = [];
  let kept = '';
  let last = 0;
  let bytesRemoved = 0;
  for (let j = 0; j < cutsU.length; j += 2) {
    c.at(cutsU[j]!);
    e.at(cutsU[j + 1]!);
    cuts.push({ start: c.cp, end: e.cp, byteStart: c.byte, byteEnd: e.byte });
    bytesRemoved += e.byte - c.byte;
    kept += text.slice(last, cutsU[j]!);
    last = cutsU[j + 1]!;
  }
  kept += text.slice(last);
  // Only whether it has none, or fewer than minDocWords, matters: counting stops there.
  const words = countTokens(kept, Math.max(1, cut.minDocWords));
  return { changed: true, text: kept, cuts, units, emptied: words === 0, dropped: words < cut.minDocWords, bytesRemoved };
}

/**
 * Pass 1, the check of repeated hashes against texts, then pass 2 of span deduplication; see the
 * module comment. Callers run {@link observe} on every document, {@link endObserving}, then
 * {@link verify} on every document again when {@link needsVerifying} (the check of ./verify.ts),
 * {@link endVerifying}, and {@link decide} on every document.
 */
export class SpanDeduper {
  private readonly o: ResolvedSpansOptions;
  private readonly walker: UnitWalker;
  private readonly table = new UnitTable();
  private readonly units: Units;
  private readonly cursor = new OffsetCursor();
  private readonly hash: Uint32Array;
  private observed = 0;
  private verified = 0;
  private decided = 0;
  private v: UnitVerifier | undefined;
  private ready = false;
  /** Top units: slot (side units: −2 − side index) → rank. */
  private topSlots = new Map<number, number>();
  /**
   * Per document: bit 1 when pass 2 may cut something there (or must read a top unit's text), so
   * pass 2 skips the others; bit 2 when the check must read it (a repeated hash's first occurrence).
   */
  private touched = new Uint8Array(1024);
  private readonly at: Occurrence = { doc: 0, pos: 0, cp: 0, byte: 0 };
  private readonly s: SpansSummary = {
    documents: 0,
    units: 0,
    distinctUnits: 0,
    repeatedUnits: 0,
    unitsRemoved: 0,
    textBytes: 0,
    bytesRemoved: 0,
    documentsChanged: 0,
    documentsEmptied: 0,
    documentsDropped: 0,
    top: [],
  };

  constructor(options: SpansOptions = {}) {
    this.o = resolveSpansOptions(options);
    this.walker = new UnitWalker(this.o);
    this.units = this.walker.units;
    this.hash = this.walker.hash;
  }

  /** Pass 1: counts the units of the next document (documents come in input order, numbered from 0). */
  observe(text: string): void {
    const doc = this.observed++;
    const c = this.cursor.reset(text);
    const u = this.units;
    this.walker.each(text, (k) => {
      const pos = u.start[k]!;
      c.at(pos);
      const i = this.table.add(this.hash[0]!, this.hash[1]!, doc, pos, c.cp, c.byte);
      this.s.units++;
      // Keep-first cuts exactly the occurrences after the first; --min-docs K ≥ 2 only units in two documents or more.
      if (this.o.minDocs === undefined ? this.table.count(i) > 1 : this.o.minDocs <= 1 || this.table.docs(i) >= 2) {
        this.touch(doc, 1);
        if (this.o.minDocs !== undefined) this.touch(this.table.firstDoc(i), 1);
      }
    });
  }

  private touch(doc: number, bit: number): void {
    if (doc >= this.touched.length) {
      const grown = new Uint8Array(Math.max(doc + 1, this.touched.length * 2));
      grown.set(this.touched);
      this.touched = grown;
    }
    this.touched[doc]! |= bit;
  }

  /** Ends pass 1: the hashes counted more than once are to be checked against their texts. */
  endObserving(): void {
    this.s.documents = this.observed;
    this.v = new UnitVerifier(this.table);
    this.v.firstDocs((doc) => this.touch(doc, 2));
  }

  /** Whether {@link verify} must see the documents again: some hash occurred more than once. */
  get needsVerifying(): boolean {
    return this.v !== undefined && this.v.repeated > 0;
  }

  /** The check (./verify.ts): the next document again (the same documents as pass 1, in the same order), its repeated hashes' texts compared. */
  verify(text: string): void {
    const doc = this.verified++;
    if (doc >= this.observed) throw new Error(`the check saw more documents than pass 1 (${this.observed})`);
    if (this.touched[doc] === 0 || this.touched[doc] === undefined) return;
    const v = this.v!;
    const c = this.cursor.reset(text);
    const u = this.units;
    const w = this.walker;
    this.walker.each(text, (k) => {
      const i = this.table.find(this.hash[0]!, this.hash[1]!);
      if (i < 0) throw new Error(`document ${doc} changed between the passes`);
      if (!v.isRepeated(i)) return;
      const at = this.at;
      at.doc = doc;
      at.pos = u.start[k]!;
      c.at(at.pos);
      at.cp = c.cp;
      at.byte = c.byte;
      // key() first: it may grow keyUnits.
      const len = w.key(k);
      v.check(i, w.keyUnits, len, at);
    });
  }

  /** Ends the check: exact counts, and the most repeated units, whose text pass 2 fills in. */
  endVerifying(): void {
    const v = this.v!;
    if (this.needsVerifying && this.verified !== this.observed) throw new Error(`the check saw ${this.verified} documents, pass 1 ${this.observed}`);
    v.end();
    this.s.distinctUnits = v.distinct;
    const repeated: number[] = [];
    v.eachRepeated((i, s) => repeated.push(s < 0 ? i : -2 - s));
    this.s.repeatedUnits = repeated.length;
    const slot = (x: number): number => (x >= 0 ? x : -1);
    const side = (x: number): number => (x >= 0 ? -1 : -2 - x);
    const key = (x: number, f: 'count' | 'firstDoc' | 'firstPos'): number => v[f](slot(x), side(x));
    repeated.sort((a, b) => key(b, 'count') - key(a, 'count') || key(a, 'firstDoc') - key(b, 'firstDoc') || key(a, 'firstPos') - key(b, 'firstPos'));
    this.s.top = repeated.slice(0, this.o.top).map((x, k) => {
      this.topSlots.set(x, k);
      this.touch(key(x, 'firstDoc'), 1);
      return { text: '', count: key(x, 'count'), docs: v.docs(slot(x), side(x)) };
    });
    this.ready = true;
  }

  /** Pass 2: what the next document loses (the same documents as pass 1, in the same order). */
  decide(text: string): DocVerdict {
    if (!this.ready) throw new Error('pass 2 before the check of repeated units (endVerifying)');
    const doc = this.decided++;
    if (doc >= this.observed) throw new Error(`pass 2 saw more documents than pass 1 (${this.observed})`);
    const t = this.table;
    const v = this.v!;
    const u = this.units;
    const keepFirst = this.o.minDocs === undefined;
    const minDocs = this.o.minDocs ?? 0;
    this.s.textBytes += Buffer.byteLength(text);
    if (doc >= this.touched.length || (this.touched[doc]! & 1) === 0) return { changed: false, text, cuts: [], units: [], emptied: false, dropped: false };
    const removed: number[] = [];
    const found: number[] = [];
    this.walker.each(text, (k) => {
      const i = t.find(this.hash[0]!, this.hash[1]!);
      if (i < 0) throw new Error(`document ${doc} changed between the passes`);
      // Only a hash that collided needs the text: which of its units this is.
      const s = v.collides(i) ? this.resolve(i, k) : -1;
      const first = v.firstDoc(i, s) === doc && v.firstPos(i, s) === u.start[k];
      const top = first ? this.topSlots.get(s < 0 ? i : -2 - s) : undefined;
      if (top !== undefined) this.s.top[top]!.text = topText(text, u, k);
      if (keepFirst ? !first : v.docs(i, s) >= minDocs) {
        removed.push(k);
        found.push(i, s);
      }
    });
    const facts = (j: number): UnitFacts => {
      const i = found[2 * j]!;
      const s = found[2 * j + 1]!;
      return {
        keptDoc: keepFirst ? v.firstDoc(i, s) : -1,
        keptStart: keepFirst ? v.firstCp(i, s) : -1,
        keptByteStart: keepFirst ? v.firstByte(i, s) : -1,
        count: v.count(i, s),
        docs: v.docs(i, s),
      };
    };
    const verdict = cutDocument(text, { units: u, removed, facts, substring: this.o.unit === 'substring', minDocWords: this.o.minDocWords });
    if (!verdict.changed) return verdict;
    this.s.bytesRemoved += verdict.bytesRemoved;
    this.s.unitsRemoved += verdict.units.length;
    this.s.documentsChanged++;
    if (verdict.emptied) this.s.documentsEmptied++;
    if (verdict.dropped) this.s.documentsDropped++;
    return verdict;
  }

  /** The side unit of occurrence `k` of collided slot `i` (./verify.ts). */
  private resolve(i: number, k: number): number {
    const len = this.walker.key(k); // First: it may grow keyUnits.
    return this.v!.resolve(i, this.walker.keyUnits, len);
  }

  /** The counts so far (complete once pass 2 has seen every document). */
  summary(): SpansSummary {
    if (this.decided !== this.observed) throw new Error(`pass 2 saw ${this.decided} documents, pass 1 ${this.observed}`);
    return { ...this.s, top: this.s.top.map((x) => ({ ...x })) };
  }
}

/**
 * Substring units' audit rows: removed windows that overlap (in text order) are one row, from the
 * first window's start to the last one's end, named by the first window (its kept occurrence and
 * counts), so a repeat of any length is one row, not one per word. `pick`: the row's first window, as an index into `removed`.
 */
function mergeWindows(removed: readonly number[], start: number[], end: number[]): { pick: number[]; end: number[] } {
  const out = { pick: [] as number[], end: [] as number[] };
  for (let j = 0; j < removed.length; j++) {
    const k = removed[j]!;
    const n = out.end.length;
    if (n > 0 && start[k]! <= out.end[n - 1]!) out.end[n - 1] = Math.max(out.end[n - 1]!, end[k]!);
    else (out.pick.push(j), out.end.push(end[k]!));
  }
  return out;
}
