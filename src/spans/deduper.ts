/**
 * The two passes of span deduplication over documents in input order: {@link SpanDeduper.observe}
 * counts and locates every unit by its 64-bit hash (pass 1), {@link SpanDeduper.decide} then tells
 * each document which units it loses, the byte ranges cut and the text left (pass 2). The CLI
 * (over files) and {@link dedupSpans} (over records in memory) both drive this class, so they
 * give the same answer.
 *
 * Why this file is long: the passes and the check share the table, the walker, the repeat lists
 * and the per-document marks; split apart, each part would reach into the others' state.
 * @module
 */
import { LazyOccurrence, OffsetCursor } from './offsets.js';
import { resolveSpansOptions, type ResolvedSpansOptions, type SpansOptions } from './options.js';
import { RepeatLists } from './repeats.js';
import { UnitTable } from './table.js';
import type { Units } from './units.js';
import { cutDocument, keptRanges, type DocVerdict, type UnitFacts } from './cutDocument.js';
import { UnitVerifier } from './verify.js';
import { UnitWalker } from './walker.js';
import { AnchorCounts, AnchorRuns } from './anchors.js';
import { selectTop } from './selectTop.js';
import { murmur3Utf16 } from '../hash/murmur3.js';

export type { CutRange, DocVerdict, RemovedUnit, UnitFacts } from './cutDocument.js';

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

/** The verdict of a document that loses nothing. */
function unchanged(text: string): DocVerdict {
  return { changed: false, text, cuts: [], units: [], emptied: false, dropped: false };
}

/** A summary with nothing counted yet: where every route of `neardup spans` starts counting. */
export function emptySpansSummary(): SpansSummary {
  return {
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
}

const TOP_TEXT = 500;
/** Room left in pass 1's table (or an eighth of its units, when fewer) below which {@link SpanDeduper}'s `growAhead` grows it to the projected size. */
const GROW_AHEAD = 4096;

/** How the summary shows unit `k` of `text` among the most repeated: its text, at most 500 characters, then `…`. */
export function topText(text: string, u: Units, k: number): string {
  const s = text.slice(u.textStart[k], u.textEnd[k]);
  return s.length > TOP_TEXT ? `${s.slice(0, TOP_TEXT)}…` : s;
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
  /** Pass 2 runs the check as it goes ({@link endVerifying}). */
  private speculative = false;
  /** Top units: slot (side units: −2 − side index) → rank. */
  private topSlots = new Map<number, number>();
  /**
   * Per document: bit 1 when pass 2 may cut something there (or must read a top unit's text), so
   * pass 2 skips the others; bit 2 when the check must read it (a repeated hash's first occurrence).
   */
  private touched = new Uint8Array(1024);
  private readonly at = new LazyOccurrence(this.cursor);
  /**
   * Line, paragraph and sentence units, but in `--min-docs 1` (every unit cut): where pass 1 met
   * the repeated units (./repeats.ts), so the check and pass 2 hash those alone, and the first
   * occurrences' code-point and byte offsets are found in pass 2, for the repeated units only.
   */
  private readonly lists: RepeatLists | undefined;
  private readonly s: SpansSummary = emptySpansSummary();
  /** Byte windows: the anchors of the pass before pass 1, and the documents and code units it saw (pass 1 must see the same). */
  private anchorCounts: AnchorCounts | undefined;
  private readonly anchorRuns = new AnchorRuns();
  private anchoredDocs = 0;
  /** Hashes of the texts each pass read, folded in order. */
  private anchoredSum = 0;
  private observedSum = 0;
  /** Byte windows pass 1 passed over: each occurs once, so each is a distinct unit. */
  private skipped = 0;
  /** Whether the table dropped its units counted once after pass 1 (./table.ts, dropSingles): a unit not found is one of those. */
  private singlesDropped = false;
  /** The input's bytes ({@link expectBytes}), 0 when unknown. */
  private expected = 0;
  /** The input's bytes pass 1 has read ({@link readBytes}), 0 when its reader does not say. */
  private readSoFar = 0;

  constructor(options: SpansOptions = {}) {
    this.o = resolveSpansOptions(options);
    this.walker = new UnitWalker(this.o);
    this.units = this.walker.units;
    this.hash = this.walker.hash;
    this.lists = this.o.unit !== 'substring' && (this.o.minDocs === undefined || this.o.minDocs >= 2) ? new RepeatLists() : undefined;
    this.walker.ahead = (hi, lo) => this.table.peek(hi, lo);
  }

  /**
   * Sizes the table for an input of `bytes` (before pass 1; a hint, as the table grows anyway): for
   * a 32nd of the units it may hold (a unit every 128 bytes, lines and sentence windows, or 512,
   * paragraphs), at most 2²⁰, so that {@link growAhead} projects the whole input's units from its
   * first few percent and rehashes a small table once. Sized for 2²⁰ units, the table was rehashed
   * at a third of a 526 MB input, a million units into fresh memory (6% of a line run's CPU). Its
   * index up to 7/10 full, not 1/2: 8 bytes a slot of fresh memory, touched all over, cost more
   * than the longer probes (526 MB of lines: peak 385 → 345 MB).
   */
  expectBytes(bytes: number): void {
    if (this.observed > 0 || this.o.unit === 'substring') return;
    this.expected = bytes;
    this.table.reserve(Math.min(1 << 20, Math.floor(bytes / (this.o.unit === 'paragraph' ? 512 : 128) / 32)), 0.7);
  }

  /** Index slots of pass 1's table: what its growth chose (the tests and the bench read it). */
  get tableSlots(): number {
    return this.table.slots;
  }

  /** Pass 1 has read `bytes` more of the input ({@link expectBytes}'s), the record it observes next included. */
  readBytes(bytes: number): void {
    if (this.expected > 0) this.readSoFar += bytes;
  }

  /**
   * Before a document of pass 1, once the table is nearly full: grows it once to the distinct units
   * projected for the whole input from the share of its bytes read so far (a tenth more), instead
   * of doubling it again and again. Each doubling rehashed every unit into fresh memory, and fresh
   * memory is dear: ~3 ms per MB on this machine's first touch of a page. Only where the reader
   * says how far it has read ({@link readBytes}): the texts' share of the input would project
   * 1/f times the units for records whose text is a fraction f of their bytes (a 600-byte field
   * beside ~170 bytes of text: 503 MB peak instead of 288 MB).
   */
  private growAhead(): void {
    if (this.readSoFar === 0 || this.table.room > Math.min(GROW_AHEAD, this.table.size >> 3)) return;
    const share = this.readSoFar / this.expected;
    if (share < 0.01 || share >= 1) return;
    this.table.growFor(Math.ceil((this.table.size / share) * 1.1));
  }

  /** Whether the documents must be seen once before pass 1, by {@link anchor}: substrings counted in bytes (./byteWindows.ts). */
  get needsAnchors(): boolean {
    return this.walker.anchored;
  }

  /** The pass before pass 1 (when {@link needsAnchors}): counts the anchors of the next document's windows. */
  anchor(text: string): void {
    if (this.walker.runs) throw new Error('anchor: after endAnchoring');
    this.anchorCounts ??= new AnchorCounts();
    this.walker.countAnchors(text, this.anchorCounts, this.anchorRuns);
    this.anchoredDocs++;
    this.anchoredSum = (Math.imul(this.anchoredSum, 31) + murmur3Utf16(text)) >>> 0;
  }

  /** Ends the pass before pass 1: pass 1 walks only the windows whose anchor was counted more than once. */
  endAnchoring(): void {
    const runs = this.anchorRuns;
    runs.finish(this.anchorCounts ?? new AnchorCounts());
    this.anchorCounts = undefined;
    this.walker.runs = runs;
    // The table's index sized once, for the distinct windows pass 1 meets: the fewest it can meet and a quarter
    // of the rest up to the windows it walks (its growth was a tenth of the run and, old and new side by side,
    // its peak memory), up to 3/4 full. Byte windows, a 50.9 MB corpus: 2.75M to 5.62M, 3.20M met, 4.6M slots
    // (37 MB); 159 MB: 8.74M to 17.8M, 10.2M met. Records for every window walked: those that do not come take no memory.
    this.table.reserve(runs.distinctAtLeast + (runs.walked - runs.distinctAtLeast) / 4, 0.75, runs.walked);
  }

  /** Pass 1: counts the units of the next document (documents come in input order, numbered from 0). */
  observe(text: string): void {
    if (this.walker.anchored && !this.walker.runs) throw new Error('pass 1 of substring windows before their anchors were counted (anchor, endAnchoring)');
    const doc = this.observed++;
    if (this.walker.anchored && doc >= this.anchoredDocs)
      throw new Error(`the input changed between the pass that counts anchors and pass 1 (more than ${this.anchoredDocs} documents)`);
    // Counted here, not in pass 2, which may pass a document by without its text (passUnread).
    this.s.textBytes += Buffer.byteLength(text);
    this.growAhead();
    if (this.lists) {
      this.observeListed(doc, text);
      return;
    }
    const u = this.units;
    this.walker.doc = doc;
    this.walker.each(text, (k) => {
      const i = this.table.add(this.hash[0]!, this.hash[1]!, doc, u.start[k]!);
      this.s.units++;
      // Keep-first cuts exactly the occurrences after the first; --min-docs K ≥ 2 only units in two documents or more.
      if (this.o.minDocs === undefined ? this.table.count(i) > 1 : this.o.minDocs <= 1 || this.table.docs(i) >= 2) {
        this.touch(doc, 1);
        if (this.o.minDocs !== undefined) this.touch(this.table.firstDoc(i), 1);
      }
    });
    this.s.units += this.walker.skipped;
    this.skipped += this.walker.skipped;
    // Pass 1 skips documents with nothing to walk unread: their texts are compared by a hash of their own.
    if (this.walker.anchored) this.observedSum = (Math.imul(this.observedSum, 31) + murmur3Utf16(text)) >>> 0;
  }

  /** Whether {@link observeJson} may take the documents of pass 1 (line, paragraph and sentence units, pass 1 listing the repeats). */
  get observesCodes(): boolean {
    return this.lists !== undefined && this.o.unit !== 'substring';
  }

  /**
   * {@link observe} of the next document's text given as the contents of a JSON string, the bytes
   * `b[a, q)` (valid UTF-8; its closing quote at `q`), decoded as `JSON.parse` decodes them, with
   * no string made (when {@link observesCodes}): the same counts as {@link observe} of that text.
   * False, having counted nothing, where `JSON.parse` refuses the string.
   */
  observeJson(b: Uint8Array, a: number, q: number): boolean {
    if (!this.observesCodes) throw new Error('observeJson: only line, paragraph and sentence units that pass 1 lists');
    const n = this.walker.decodeJson(b, a, q);
    if (n < 0) return false;
    const doc = this.observed++;
    this.s.textBytes += this.walker.jsonBytes;
    // Sentences Intl.Segmenter splits: from the text as a string, made of the code units decoded.
    if (!this.observeListed(doc, undefined, n)) this.observeListed(doc, this.walker.textOfJson(b, a, q, n));
    return true;
  }

  /**
   * The text of a JSON string, the bytes `b[a, q)` (valid UTF-8; its closing quote at `q`), as
   * `JSON.parse` decodes it (undefined where it refuses it), for {@link observe} or {@link decide}
   * next: decoded in the walker's kernel, which then hashes its units without copying them again.
   */
  jsonText(b: Uint8Array, a: number, q: number): string | undefined {
    return this.walker.decodeJsonText(b, a, q);
  }

  /**
   * `JSON.stringify` of a changed verdict's text (or of any `{ text }`) as UTF-8 bytes, made by the
   * walker's kernel, for writing a record the document's verdict changed (a view valid until this
   * deduper's next call); undefined without the kernel.
   */
  jsonOf(changed: { readonly text: string }): Uint8Array | undefined {
    // A verdict of this document's cuts: its kept ranges quoted from the kernel's copy of the text, which is never made.
    const r = keptRanges(changed);
    return (r && this.walker.jsonOfRanges(r.source, r.kept)) ?? this.walker.jsonOf(changed.text);
  }

  /**
   * {@link observe} with {@link lists} of `text`, or of the `n` code units {@link observeJson}
   * decoded: each unit counted at its UTF-16 start, a later occurrence listed. False, with nothing
   * counted, for code units whose sentences need the text as a string.
   */
  private observeListed(doc: number, text: string | undefined, n = 0): boolean {
    const lists = this.lists!;
    this.growAhead();
    const t = this.table;
    const h = this.hash;
    const start = this.units.start;
    lists.begin(doc);
    const each = (k: number): void => {
      const i = t.add(h[0]!, h[1]!, doc, start[k]!);
      this.s.units++;
      if (t.count(i) > 1) lists.later(k, i);
    };
    if (text === undefined) return this.walker.eachCodes(n, each) >= 0;
    this.walker.each(text, each);
    return true;
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
    if (this.walker.anchored && (this.anchoredDocs !== this.observed || this.anchoredSum !== this.observedSum)) {
      throw new Error(
        `the input changed between the pass that counts anchors and pass 1 (${this.anchoredDocs} documents, then ${this.observed}${
          this.anchoredDocs === this.observed ? ', with other texts' : ''
        })`,
      );
    }
    this.s.documents = this.observed;
    this.lists?.end(this.table);
    // Substring windows (not --min-docs 1, which cuts a unit counted once too): the units counted once are dropped from the table before the check's memory is taken.
    if (!this.lists && this.o.unit === 'substring' && (this.o.minDocs === undefined || this.o.minDocs >= 2)) {
      this.table.dropSingles();
      this.singlesDropped = true;
    }
    this.v = new UnitVerifier(this.table);
    // Keep-first's audit names the kept occurrence's offsets: the check keeps them, for the repeated units alone.
    this.v.offsets = this.o.minDocs === undefined;
    this.v.chain = this.o.unit === 'substring';
    // Byte windows: the check's record and text fetched a batch ahead too (the check of every window walked was a cache miss per window).
    if (this.o.unit === 'substring' && this.o.lengthUnit === 'bytes') {
      const v = this.v;
      this.walker.ahead = (hi, lo) => {
        const i = this.table.find(hi, lo);
        return i < 0 ? 0 : v.peek(i);
      };
    }
    this.v.firstDocs((doc) => this.touch(doc, 2));
    // Listed units are found by slot from here on: the index's memory goes to the check's texts.
    if (this.lists) {
      this.v.takeIndex();
      this.walker.ahead = undefined;
    }
  }

  /** Whether {@link verify} must see the documents again: some hash occurred more than once. */
  get needsVerifying(): boolean {
    return this.v !== undefined && this.v.repeated > 0;
  }

  /** The check (./verify.ts): the next document again (the same documents as pass 1, in the same order), its repeated hashes' texts compared. */
  verify(text: string): void {
    const doc = this.verified++;
    if (doc >= this.observed) throw new Error(`the check saw more documents than pass 1 (${this.observed})`);
    if (this.lists) {
      if (this.lists.none(doc)) return;
      this.cursor.reset(text);
      this.walker.split(text);
      this.lists.each(doc, this.units, this.table, (k, i) => {
        this.hashListed(doc, text, k, i);
        this.checkUnit(doc, k, i);
      });
      return;
    }
    if (this.touched[doc] === 0 || this.touched[doc] === undefined) return;
    this.cursor.reset(text);
    this.walker.doc = doc;
    this.walker.each(text, (k) => {
      const i = this.heldUnit(doc);
      if (i < 0) return;
      this.checkUnit(doc, k, i);
    });
  }

  /** Hashes listed unit `k` (slot `i`) of the text last split, so that {@link checkUnit} and {@link resolve} can read its normalized text. */
  private hashListed(doc: number, text: string, k: number, i: number): void {
    this.walker.hashUnit(text, k);
    if (!this.v!.holds(i, this.hash[0]!, this.hash[1]!)) throw new Error(`document ${doc} changed between the passes`);
  }

  /** Checks unit `k` of document `doc` (slot `i`) when its hash is repeated; {@link cursor} is on its document. */
  private checkUnit(doc: number, k: number, i: number): void {
    const v = this.v!;
    if (!v.isRepeated(i)) return;
    const at = this.at;
    at.doc = doc;
    at.pos = this.units.start[k]!;
    const len = this.walker.key(k); // First: it may grow keyUnits.
    v.check(i, this.walker.keyUnits, len, at);
  }

  /**
   * Ends the check: exact counts, and the most repeated units, whose text pass 2 fills in. With
   * `speculative`, the check was not run: pass 2 runs it as it goes, on the guess that no hash
   * collided (true but for odds of about n²/2⁶⁵), and {@link collided} tells after it whether the
   * guess failed; then its answer is void and {@link restart} sets up pass 2 again with the
   * counts the check made exact. For outputs that can be discarded: it saves reading the input a third time.
   */
  endVerifying(speculative = false): void {
    if (!speculative && this.needsVerifying && this.verified !== this.observed)
      throw new Error(`the check saw ${this.verified} documents, pass 1 ${this.observed}`);
    if (!speculative) this.v!.end();
    this.speculative = speculative;
    this.pickTop();
    this.ready = true;
  }

  /** After a speculative pass 2 ({@link endVerifying}): whether a hash collided, so that its answer is void and it must {@link restart}. */
  get collided(): boolean {
    return this.speculative && this.v!.collisions > 0;
  }

  /** Sets pass 2 up again after a speculative one that found a collision, with the counts its check made exact. */
  restart(): void {
    if (!this.speculative || this.decided !== this.observed) throw new Error('restart: not after a whole speculative pass 2');
    this.v!.end();
    this.speculative = false;
    this.decided = 0;
    for (const k of ['unitsRemoved', 'bytesRemoved', 'documentsChanged', 'documentsEmptied', 'documentsDropped'] as const) this.s[k] = 0;
    this.topSlots.clear();
    this.pickTop();
  }

  /**
   * The summary's distinct and repeated units, and its most repeated ones (their texts filled by
   * pass 2): by occurrences, then first seen first, over the table's units then the check's side
   * units, read where they are (arrays of every repeated unit's keys were a transient tenth of the
   * peak memory of byte windows).
   */
  /**
   * The table's slot of the unit just hashed, in a pass after pass 1; −1 for a unit counted once
   * that the table dropped (a first occurrence: nothing to check or cut). Any other unit not found
   * means the document changed between the passes.
   */
  private heldUnit(doc: number): number {
    const i = this.table.find(this.hash[0]!, this.hash[1]!);
    if (i < 0 && !this.singlesDropped) throw new Error(`document ${doc} changed between the passes`);
    return i;
  }

  private pickTop(): void {
    const v = this.v!;
    const size = this.table.size;
    this.s.distinctUnits = v.distinct + this.skipped + this.table.dropped;
    let repeated = 0;
    v.eachRepeated(() => repeated++);
    this.s.repeatedUnits = repeated;
    // Unit x: the table's unit x, or side unit x − size.
    const slot = (x: number): number => (x < size ? x : -1);
    const side = (x: number): number => (x < size ? -1 : x - size);
    const isRepeated = (x: number): boolean => v.repeatedUnit(slot(x), side(x));
    // Units seen once count 0: they come last, and only when fewer than --top units repeat (then dropped).
    const count = (x: number): number => (isRepeated(x) ? v.count(slot(x), side(x)) : 0);
    const order = selectTop(
      size + v.collisions,
      this.o.top,
      (a, b) =>
        count(b) - count(a) || v.firstDoc(slot(a), side(a)) - v.firstDoc(slot(b), side(b)) || v.firstPos(slot(a), side(a)) - v.firstPos(slot(b), side(b))
        || a - b,
    ).filter(isRepeated);
    this.s.top = order.map((x, k) => {
      this.topSlots.set(x < size ? x : -2 - (x - size), k);
      this.touch(v.firstDoc(slot(x), side(x)), 1);
      return { text: '', count: count(x), docs: v.docs(slot(x), side(x)) };
    });
  }

  /** Pass 2: what the next document loses (the same documents as pass 1, in the same order). */
  decide(text: string): DocVerdict {
    if (!this.ready) throw new Error('pass 2 before the check of repeated units (endVerifying)');
    const doc = this.decided++;
    if (doc >= this.observed) throw new Error(`pass 2 saw more documents than pass 1 (${this.observed})`);
    if (!this.loses(doc)) return unchanged(text);
    const removed: number[] = [];
    const found: number[] = [];
    if (this.lists) {
      // Only the units pass 1 listed: repeated hashes' later and first occurrences.
      this.cursor.reset(text, this.walker.offsetWalk(text));
      this.walker.split(text);
      this.lists.each(doc, this.units, this.table, (k, i) => {
        if (this.speculative || this.v!.collides(i)) this.hashListed(doc, text, k, i);
        this.unitOf(doc, text, k, i, removed, found);
      });
      return this.cut(text, removed, found);
    }
    if (this.speculative) this.cursor.reset(text, this.walker.offsetWalk(text));
    this.walker.doc = doc;
    this.walker.each(text, (k) => {
      const i = this.heldUnit(doc);
      if (i < 0) return;
      this.unitOf(doc, text, k, i, removed, found);
    });
    return this.cut(text, removed, found);
  }

  /** Whether pass 2 must read document `doc`'s units (it may lose some, or show a top unit's text, or be checked): false when it surely loses nothing. */
  private loses(doc: number): boolean {
    if (this.lists) return !this.lists.none(doc);
    const mark = doc < this.touched.length ? this.touched[doc]! : 0;
    // Bit 2 alone: a repeated hash's first occurrence, nothing to cut, but a speculative pass 2 checks it.
    return !(mark === 0 || (mark === 2 && !this.speculative));
  }

  /**
   * Pass 2 of the next document without its text, when it surely loses nothing: counts it and
   * returns true (its record is written as it is); else false, and {@link decide} must see it.
   */
  passUnread(): boolean {
    if (!this.ready) throw new Error('pass 2 before the check of repeated units (endVerifying)');
    const doc = this.decided;
    if (doc >= this.observed) throw new Error(`pass 2 saw more documents than pass 1 (${this.observed})`);
    if (this.loses(doc)) return false;
    this.decided++;
    return true;
  }

  /**
   * Pass 2 on unit `k` of document `doc`, slot `i`: checked (speculative pass 2), its side unit
   * found, its text kept for the summary when a top unit's first occurrence, listed in `removed`
   * and `found` (slot, side index) when it goes.
   * Why these parameters: once per unit in pass 2's loops, where an options object would allocate per unit.
   */
  private unitOf(doc: number, text: string, k: number, i: number, removed: number[], found: number[]): void {
    const v = this.v!;
    const u = this.units;
    if (this.speculative) this.checkUnit(doc, k, i);
    // Only a hash that collided needs the text: which of its units this is.
    const s = v.collides(i) ? this.resolve(i, k) : -1;
    const first = v.isFirst(i, s, doc, u.start[k]!);
    const top = first ? this.topSlots.get(s < 0 ? i : -2 - s) : undefined;
    if (top !== undefined) this.s.top[top]!.text = topText(text, u, k);
    if (this.o.minDocs === undefined ? !first : v.docs(i, s) >= this.o.minDocs) {
      removed.push(k);
      found.push(i, s);
    }
  }

  /** The verdict of a document that loses units `removed` (their slots and side indices in `found`), counted into the summary. */
  private cut(text: string, removed: number[], found: number[]): DocVerdict {
    const v = this.v!;
    const keepFirst = this.o.minDocs === undefined;
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
    const walk = removed.length > 0 ? this.walker.offsetWalk(text) : undefined;
    const verdict = cutDocument(text, { units: this.units, removed, facts, substring: this.o.unit === 'substring', minDocWords: this.o.minDocWords, walk });
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
    if (this.collided) throw new Error('a hash collided in a speculative pass 2: restart it');
    if (this.decided !== this.observed) throw new Error(`pass 2 saw ${this.decided} documents, pass 1 ${this.observed}`);
    return { ...this.s, top: this.s.top.map((x) => ({ ...x })) };
  }
}
