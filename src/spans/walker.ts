/**
 * {@link UnitWalker}: the units of a text as `neardup spans` compares them — split, normalized and
 * hashed — and, on demand, the normalized text of the unit at hand, which exactness (#50) compares
 * where hashes are equal.
 *
 * Why this file is long: one walker for every unit kind, so that the passes and the job's stages
 * meet a unit the same way everywhere; each kind's own splitting lives in units.ts, words.ts and
 * byteWindows.ts, the anchors in anchors.ts.
 * @module
 */
import { faultHooks } from '../common/faults.js';
import { makeNormalizer } from '../text/normalize.js';
import { countTokens } from '../text/tokens.js';
import type { OffsetWalk } from './offsets.js';
import { anchoredUnits, type ResolvedSpansOptions } from './options.js';
import { grown, UnitHasher } from './unitHash.js';
import { splitUnitCodes } from './unitCodes.js';
import { newUnits, splitUnits } from './units.js';
import { hashWords, newWordBuffers, windowsAt, wordAnchors, wordWindows } from './words.js';
import { ByteWindows } from './byteWindows.js';
import { countRuns, walkedWindows, type AnchorCounts, type AnchorRuns } from './anchors.js';

/** Byte windows whose table slots {@link UnitWalker.ahead} fetches before their callbacks: few enough that the slots stay in the cache. */
const AHEAD = 256;

/** Separates the words of a substring window's compared text (no word holds it: words are letters, digits and marks). */
const WORD_SEP = 1;

/**
 * Splits, normalizes and hashes the units of one text as both passes compare them: the one-process
 * passes and the sharded job's stages (src/shard/spans/) walk units through this one class,
 * so a unit is the same unit, with the same hash and index, everywhere.
 */
export class UnitWalker {
  /** The units of the text last walked (indices `k` of {@link each}'s callback). */
  readonly units = newUnits();
  /** The 64-bit hash of the unit of the current callback (two 32-bit lanes). */
  readonly hash = new Uint32Array(2);
  /** The normalized text of the unit {@link key} was last asked for, as UTF-16 code units (its first {@link key} units). */
  keyUnits: Uint16Array = new Uint16Array(256);
  private readonly words = newWordBuffers();
  /** Substrings counted in bytes: their windows (./byteWindows.ts). */
  private readonly bytes: ByteWindows | undefined;
  /**
   * The windows' runs the pass before pass 1 counted ({@link countAnchors}), finished; then
   * {@link each} walks only the byte windows whose anchor was counted more than once, of document
   * {@link doc}. Without it, every window.
   */
  runs: AnchorRuns | undefined;
  /** The document {@link each} walks next, with {@link runs}. */
  doc = 0;
  /** Substring windows the last {@link each} passed over (with {@link runs}): each occurs once in the corpus. */
  skipped = 0;
  /** Word windows walked with {@link runs}: each one's index among all of its document's windows (its first word). */
  private wordOf = new Int32Array(256);
  private readonly norm: (t: string) => string;
  private readonly hasher: UnitHasher;
  /**
   * Called with each unit's hash a batch ahead of the callbacks of {@link eachCodes} (line and
   * paragraph units), for the caller's table to fetch their slots side by side ({@link UnitTable.peek}).
   */
  ahead: ((hi: number, lo: number) => number) | undefined;
  /** Where {@link ahead}'s answers go, so that its reads are not dropped as unused. */
  aheadSink = 0;
  /** {@link hashAhead}'s hashes and lengths, three i32 a unit. */
  private hashed = new Int32Array(3 * 256);
  /** The normalized length of the current unit (line, paragraph, sentence units). */
  private len = 0;
  /** A test's mask of the hash (src/common/faults.ts), read once, so the hot loop tests a field. */
  private readonly masking: boolean;
  private readonly mask: number;

  constructor(private readonly o: ResolvedSpansOptions) {
    this.norm = makeNormalizer(o.normalize ?? {});
    this.hasher = new UnitHasher(o.normalize ?? {});
    // Windows of several sentences overlap: each character would be normalized once per window it is in.
    this.hasher.wholeDocs = o.unit === 'sentence' && o.window > 1;
    this.bytes = o.unit === 'substring' && o.lengthUnit === 'bytes' ? new ByteWindows(o.normalize ?? {}, o.minLength) : undefined;
    const bits = faultHooks().spansHashBits?.();
    this.masking = bits !== undefined;
    this.mask = bits === undefined || bits >= 32 ? -1 : (1 << bits) - 1;
  }

  /**
   * Whether the units are substring windows, which a pass before pass 1 ({@link countAnchors})
   * thins out (./anchors.ts); not with `--min-docs 1`, which cuts a window that occurs once too,
   * nor when `--min-unit-words` exceeds the words of a window (no window is a unit): {@link anchoredUnits}.
   */
  get anchored(): boolean {
    return anchoredUnits(this.o);
  }

  /** The pass before pass 1 (substring windows only): counts the anchors of `text`'s windows into `counts`, its runs into `runs`. */
  countAnchors(text: string, counts: AnchorCounts, runs: AnchorRuns): void {
    if (this.bytes) {
      this.bytes.countAnchors(text, counts, runs);
      return;
    }
    const n = hashWords(text, this.norm, this.words);
    const w = wordAnchors(n, this.o.minLength, this.words);
    countRuns({ w, wj: this.words.wj, gh: this.words.gh }, counts, runs);
  }

  /** Hashes the compared units of `text` into {@link hash}, calling `each(unit index)` for each; returns the units split. */
  each(text: string, each: (k: number) => void): number {
    if (this.o.unit === 'substring') return this.eachWindow(text, each);
    const u = splitUnits(text, this.o.unit, this.o.window, this.units);
    const min = this.o.minUnitWords;
    for (let k = 0; k < u.count; k++) {
      const a = u.textStart[k]!;
      const b = u.textEnd[k]!;
      // The normalized text's hash without the normalized text (./unitHash.ts); only a word count needs the string.
      const len = this.hasher.hash(text, a, b, this.hash);
      if (len === 0) continue;
      if (min > 0 && countTokens(this.hasher.normalized(text, a, b), min) < min) continue;
      this.len = len;
      if (this.masking) this.masked();
      each(k);
    }
    return u.count;
  }

  /**
   * Decodes the JSON string contents `b[a, q)` (its closing quote at `q`) into the code units
   * {@link eachCodes} walks, as `JSON.parse` decodes them: returns their count, or −1 where
   * `JSON.parse` refuses the string; {@link jsonBytes} is then its UTF-8 length.
   */
  decodeJson(b: Uint8Array, a: number, q: number): number {
    return this.hasher.decodeJson(b, a, q);
  }

  /** {@link decodeJson}, then the text as a string (undefined where `JSON.parse` refuses it), ready for {@link each}. */
  decodeJsonText(b: Uint8Array, a: number, q: number): string | undefined {
    return this.hasher.decodeJsonText(b, a, q);
  }

  /** The UTF-8 length of the string {@link decodeJson} decoded last. */
  get jsonBytes(): number {
    return this.hasher.jsonBytes;
  }

  /** {@link decodeJson}'s text as a string ({@link decodeJsonText}'s), from the `n` code units it decoded from `b[a, q)`. */
  textOfJson(b: Uint8Array, a: number, q: number, n: number): string {
    return this.hasher.textOfJson(b, a, q, n);
  }

  /**
   * {@link each} over the `n` code units {@link decodeJson} decoded: the same units, hashes and
   * indices as of that text as a string ({@link key} is not for its callbacks). Sentence windows:
   * −1, with nothing walked, for a text whose sentences `Intl.Segmenter` splits ({@link each} of
   * the string then; ./sentences.ts says which).
   */
  eachCodes(n: number, each: (k: number) => void): number {
    const unit = this.o.unit;
    if (unit === 'substring') throw new Error('eachCodes: substring windows are split from strings');
    this.hasher.codes(n);
    this.hasher.tookCodes(n);
    if (unit === 'sentence') return this.splitSentences(n) ? this.hashFrom(0, each) : -1;
    if (this.hasher.inKernelToo) return this.eachSplit(n, unit === 'paragraph', each);
    return this.eachCodesFrom(n, 0, each);
  }

  /**
   * The sentence windows of the text loaded in the hasher (`n` code units) into {@link units}, from
   * the sentences its kernel splits (no string, no regular expression); false when it cannot.
   */
  private splitSentences(n: number): boolean {
    const h = this.hasher;
    const m = h.inKernelToo ? h.splitSentences(n) : -1;
    if (m < 0) return false;
    const r = h.sentenceRecs;
    const u = this.units;
    u.count = 0;
    if (m === 0) return true;
    // As ./units.ts's sentences: a window from sentence i to i + w − 1, its text trimmed of blanks at both ends.
    const w = Math.min(this.o.window, m);
    for (let i = 0; i + w <= m; i++) {
      const o = 4 * i;
      const l = 4 * (i + w - 1);
      const k = u.count++;
      u.start[k] = r[o]!;
      u.end[k] = r[l + 1]!;
      u.textStart[k] = r[o + 2]!;
      u.textEnd[k] = r[l + 3]!;
    }
    return true;
  }

  /**
   * {@link eachCodes} with the units split, normalized and hashed by the kernel, a call per
   * document (per 1,024 units), not one per unit, and no split in JavaScript; where a code unit needs the
   * string path, the units from there go the other way ({@link eachCodesFrom}).
   */
  private eachSplit(n: number, para: boolean, each: (k: number) => void): number {
    const h = this.hasher;
    const u = this.units;
    const min = this.o.minUnitWords;
    u.count = 0;
    for (let from = 0;;) {
      const m = h.splitCodes(from, para);
      if (m < 0) return this.eachCodesFrom(n, u.count, each);
      const r = h.unitRecs;
      if (this.ahead) {
        let z = 0;
        for (let j = 0; j < 6 * m; j += 6) z |= this.ahead(r[j + 4]!, r[j + 5]!);
        this.aheadSink = z;
      }
      for (let j = 0; j < 6 * m; j += 6) {
        const k = u.count++;
        const a = r[j]!;
        const len = r[j + 3]!;
        u.start[k] = a;
        u.end[k] = r[j + 1]!;
        u.textStart[k] = a;
        u.textEnd[k] = r[j + 2]!;
        if (len === 0) continue;
        if (min > 0 && countTokens(this.norm(h.codeString(a, r[j + 2]!)), min) < min) continue;
        this.hash[0] = r[j + 4]!;
        this.hash[1] = r[j + 5]!;
        this.len = len;
        if (this.masking) this.masked();
        each(k);
      }
      from = h.resumeAt;
      if (from >= n) return u.count;
    }
  }

  /** {@link eachCodes} over the code units taken, split in JavaScript, each unit hashed alone, from unit `skip` on (those before it were walked). */
  private eachCodesFrom(n: number, skip: number, each: (k: number) => void): number {
    splitUnitCodes(this.hasher.codes(n), n, this.o.unit as 'line' | 'paragraph', this.units);
    return this.hashFrom(skip, each);
  }

  /** The units split of the code units taken, each hashed alone, from unit `skip` on. */
  private hashFrom(skip: number, each: (k: number) => void): number {
    const u = this.units;
    if (this.ahead && u.count - skip > 1) return this.hashAhead(skip, each);
    const min = this.o.minUnitWords;
    for (let k = skip; k < u.count; k++) {
      const a = u.textStart[k]!;
      const b = u.textEnd[k]!;
      const len = this.hasher.hashCodes(a, b, this.hash);
      if (len === 0) continue;
      if (min > 0 && countTokens(this.norm(this.hasher.codeString(a, b)), min) < min) continue;
      this.len = len;
      if (this.masking) this.masked();
      each(k);
    }
    return u.count;
  }
  /** {@link hashFrom} with every unit hashed first, then {@link ahead} of them all, then the callbacks (sentence windows). */
  private hashAhead(skip: number, each: (k: number) => void): number {
    const u = this.units;
    const min = this.o.minUnitWords;
    if (this.hashed.length < 3 * u.count) this.hashed = new Int32Array(6 * u.count);
    const x = this.hashed;
    for (let k = skip; k < u.count; k++) {
      x[3 * k] = this.hasher.hashCodes(u.textStart[k]!, u.textEnd[k]!, this.hash);
      x[3 * k + 1] = this.hash[0]!;
      x[3 * k + 2] = this.hash[1]!;
    }
    let z = 0;
    for (let k = skip; k < u.count; k++) z |= this.ahead!(x[3 * k + 1]!, x[3 * k + 2]!);
    this.aheadSink = z;
    for (let k = skip; k < u.count; k++) {
      const len = x[3 * k]!;
      if (len === 0) continue;
      if (min > 0 && countTokens(this.norm(this.hasher.codeString(u.textStart[k]!, u.textEnd[k]!)), min) < min) continue;
      this.hash[0] = x[3 * k + 1]!;
      this.hash[1] = x[3 * k + 2]!;
      this.len = len;
      if (this.masking) this.masked();
      each(k);
    }
    return u.count;
  }

  /** `JSON.stringify(text)` as UTF-8, made by the hasher's kernel (a view valid until the walker's next call), or undefined with none. */
  jsonOf(text: string): Uint8Array | undefined {
    return this.hasher.jsonOf(text);
  }

  /** {@link jsonOf} of `source`'s ranges `kept` from the hasher's copy of it, or undefined where it has none (UnitHasher.jsonOfRanges). */
  jsonOfRanges(source: string, kept: readonly number[]): Uint8Array | undefined {
    return this.hasher.jsonOfRanges(source, kept);
  }

  /** Where {@link OffsetCursor} may walk `text`'s offsets, `text` loaded there (undefined: in JavaScript); valid until another text is walked. */
  offsetWalk(text: string): OffsetWalk | undefined {
    return this.hasher.holdText(text) ? this.hasher : undefined;
  }

  /** Splits `text` into {@link units} as {@link each} does, hashing nothing (line, paragraph, sentence units). */
  split(text: string): void {
    if (this.o.unit === 'substring') throw new Error('split: substring windows are hashed as they are split');
    // Sentences from the text's code units in the kernel, which then hashes the windows listed without loading the text again.
    if (this.o.unit === 'sentence' && this.hasher.holdText(text) && this.splitSentences(text.length)) return;
    splitUnits(text, this.o.unit, this.o.window, this.units);
  }

  /**
   * Hashes unit `k` of the text last {@link split} into {@link hash}, as {@link each} does, and
   * makes it the unit {@link key} gives; returns its normalized length.
   */
  hashUnit(text: string, k: number): number {
    const len = this.hasher.hash(text, this.units.textStart[k]!, this.units.textEnd[k]!, this.hash);
    this.len = len;
    if (this.masking) this.masked();
    return len;
  }

  /**
   * The normalized text of unit `k` of the current {@link each} callback into {@link keyUnits};
   * returns its length. A substring window's is its words, each normalized alone, separated by
   * U+0001 (the text between words is not compared). Read {@link keyUnits} after the call: it may grow the buffer.
   */
  key(k: number): number {
    if (this.o.unit !== 'substring') {
      this.keyUnits = this.hasher.copyLast(this.keyUnits, 0, this.len);
      return this.len;
    }
    if (this.bytes) {
      const { buf, len } = this.bytes.key(k, this.keyUnits);
      this.keyUnits = buf;
      return len;
    }
    const w = this.words.norm;
    const first = this.runs ? this.wordOf[k]! : k;
    let n = 0;
    for (let i = first; i < first + this.o.minLength; i++) {
      const s = w[i]!;
      if (this.keyUnits.length < n + s.length + 1) this.keyUnits = grown(this.keyUnits, n + s.length + 1);
      if (i > first) this.keyUnits[n++] = WORD_SEP;
      for (let j = 0; j < s.length; j++) this.keyUnits[n++] = s.charCodeAt(j);
    }
    return n;
  }

  /** Keeps a test's few bits of the hash (both lanes), so that different units collide. */
  private masked(): void {
    this.hash[0] = this.hash[0]! & this.mask;
    this.hash[1] = this.hash[1]! & this.mask;
  }

  /** {@link each} for substring units: the L-word windows, hashed once per word (./words.ts). */
  private eachWindow(text: string, each: (k: number) => void): number {
    if (this.bytes) return this.eachByteWindow(text, each);
    if (this.runs) return this.eachWalkedWordWindow(text, each);
    const u = wordWindows(text, { length: this.o.minLength, norm: this.norm }, this.units, this.words);
    if (this.o.minUnitWords > this.o.minLength) return u.count;
    return this.eachHashed(this.words.windowHash, u.count, each);
  }

  /** {@link each} for byte windows (./byteWindows.ts): those of {@link runs} walked, or all. */
  private eachByteWindow(text: string, each: (k: number) => void): number {
    const u = this.runs ? this.bytes!.windowsOf(this.doc, text, this.units, this.runs) : this.bytes!.windows(text, this.units, undefined);
    this.skipped = this.bytes!.skipped;
    return this.eachHashed(this.bytes!.windowHash, u.count, each);
  }

  /**
   * Calls `each(k)` for windows 0..n−1 with their two hashes from `h` in {@link hash}; returns `n`.
   * The table's slots of a batch fetched side by side first ({@link ahead}): pass 1 and pass 2 each
   * waited on a cache miss per window.
   */
  private eachHashed(h: Uint32Array, n: number, each: (k: number) => void): number {
    for (let from = 0; from < n; from += AHEAD) {
      const to = Math.min(n, from + AHEAD);
      if (this.ahead && !this.masking) {
        let z = 0;
        for (let k = from; k < to; k++) z |= this.ahead(h[2 * k]!, h[2 * k + 1]!);
        this.aheadSink = z;
      }
      for (let k = from; k < to; k++) {
        this.hash[0] = h[2 * k]!;
        this.hash[1] = h[2 * k + 1]!;
        if (this.masking) this.masked();
        each(k);
      }
    }
    return n;
  }

  /**
   * {@link each} for word windows with {@link runs}: those of document {@link doc}'s walked runs
   * (./anchors.ts), numbered from 0 ({@link wordOf}: each one's first word); a document with none is not read.
   */
  private eachWalkedWordWindow(text: string, each: (k: number) => void): number {
    const runs = this.runs!;
    if (runs.walkedIn(this.doc) === 0) {
      this.units.count = 0;
      this.skipped = runs.windowsIn(this.doc);
      return 0;
    }
    const L = this.o.minLength;
    const w = wordAnchors(hashWords(text, this.norm, this.words), L, this.words);
    if (this.wordOf.length < w) this.wordOf = new Int32Array(Math.max(w, 2 * this.wordOf.length));
    const n = walkedWindows({ doc: this.doc, w, wj: this.words.wj }, runs, this.wordOf);
    // Only the walked windows are hashed, numbered from 0.
    windowsAt(w + L - 1, L, { out: this.units, b: this.words, only: this.wordOf, count: n });
    this.skipped = w - n;
    return this.eachHashed(this.words.windowHash, n, each);
  }
}
