/**
 * Substring units measured in UTF-8 bytes (`neardup spans --unit substring --length-unit bytes
 * --min-length L`). A document is read as a stream of normalized code points: each character is
 * normalized alone (`--normalize`; a character may become several code points, or none), and a run
 * of whitespace (and, with `stripPunctuation`, of punctuation and symbols) is one space, or under
 * the `none` preset each such character as it is. A window starts at the first code point of a
 * character and takes the fewest code points that reach L UTF-8 bytes; it is cut from its first
 * character to its last, whole. Every window is a unit, so a repeat of L bytes or more is the
 * union of its windows and is cut whole, as the word windows of ./words.ts are.
 *
 * A window per character would put a table slot per input byte. So a pass before pass 1 counts
 * anchors: of each window's grams (G consecutive code points, G = min(32, ⌊L/4⌋), at least 1; a
 * window has at least ⌈L/4⌉ code points, so it holds a gram), the one of least hash and the one
 * of least hash under a second order (the last of equal ones), with the distance between them, are
 * its anchor, which depends on the window's text alone. Two occurrences of one text share their
 * anchor at two places, so a window whose anchor's hash was counted once occurs once, and is no
 * unit of the table; only the others are walked. A pair, not one gram: a window that overlaps a
 * repeated passage in part holds the passage's least gram about as often as the share it
 * overlaps, and both grams less often (50.9 MB at L = 100: 4.35M distinct windows in the table
 * with one gram, of which 2.19M occur once; 3.20M and 1.04M with the pair). The answer is that of
 * every window (the tests' oracle walks them all). The anchors' counts and runs are ./anchors.ts;
 * the sharded job counts them in stages of its own (src/shard/spans/anchor.ts).
 * @module
 */
import { fmix32 } from '../hash/mix.js';
import type { NormalizeOptions } from '../text/normalize.js';
import { CharNormalizer } from '../text/charNormalizer.js';
import type { Units } from './units.js';
import { checkWalked, countRuns, more, walkedWindows, walkList, type AnchorCounts, type AnchorRuns } from './anchors.js';
import { SweepKernel, type TokenStream } from './sweepKernel.js';

const B0 = 0x01000193;
const B1 = 0x5bd1e995;

/** UTF-8 bytes of code point `cp` (a lone surrogate: 3, as U+FFFD). */
const utf8Len = (cp: number): number => (cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);

/**
 * The byte windows of one document at a time, into a {@link Units} (the cut and compared ranges,
 * UTF-16) with their 64-bit hashes, and each window's normalized code units on demand.
 */
export class ByteWindows {
  private readonly chars: CharNormalizer;
  private readonly L: number;
  /** Code points a gram has. */
  readonly gram: number;
  // Per normalized code point (token): the character it came from, whether it is that character's first, and prefix offsets.
  private origStart = new Int32Array(256);
  private origEnd = new Int32Array(256);
  private first = new Uint8Array(256);
  private codeAt = new Int32Array(257);
  private byteAt = new Int32Array(257);
  private codes = new Uint16Array(256);
  private p0 = new Uint32Array(257);
  private p1 = new Uint32Array(257);
  private pow0 = new Uint32Array([1]);
  private pow1 = new Uint32Array([1]);
  private n = 0;
  /** Code units of the stream so far. */
  private m = 0;
  private deque = new Int32Array(256);
  private deque2 = new Int32Array(256);
  private gh = new Uint32Array(256);
  private gh2 = new Uint32Array(256);
  /** Per run of one anchor of the last sweep: the anchor's hash. */
  private ah = new Uint32Array(256);
  // Per window of the last sweep: its first token, its end, its anchor's run.
  private wa = new Int32Array(256);
  private we = new Int32Array(256);
  private wj = new Int32Array(256);
  /** The windows {@link windowsOf} walks. */
  private keep = new Int32Array(256);
  /** Per window of {@link keep}, its run (the kernel's path). */
  private keepRun = new Int32Array(256);
  /** Two hashes per window of the last {@link windows} call. */
  windowHash = new Uint32Array(256);
  /** Token range [a, e) of each window of the last {@link windows} call. */
  private winTok = new Int32Array(256);
  /** Windows the last {@link windows} call passed over (their anchor counted once). */
  skipped = 0;
  /** The sweep in WebAssembly, or null (then {@link sweepJs}). */
  private readonly kernel: SweepKernel | null;

  /** `o.wasm: false` keeps the sweep in JavaScript (the tests compare the two). */
  constructor(normalize: NormalizeOptions, minBytes: number, o: { wasm?: boolean } = {}) {
    this.kernel = o.wasm === false ? null : SweepKernel.make();
    this.chars = new CharNormalizer(normalize);
    this.L = minBytes;
    this.gram = Math.max(1, Math.min(32, Math.floor(minBytes / 4)));
  }

  /** Pass 0: counts the anchors of `text`'s windows into `counts`, and with `runs`, its windows' runs there (./anchors.ts). */
  countAnchors(text: string, counts: AnchorCounts, runs?: AnchorRuns): void {
    this.stream(text);
    countRuns({ w: this.sweep(), wj: this.wj, gh: this.ah }, counts, runs);
  }

  /**
   * The windows of `text` into `out`, their hashes into {@link windowHash}: every window, or with
   * `anchors` those whose anchor was counted more than once (the others counted in {@link skipped}).
   */
  windows(text: string, out: Units, anchors: AnchorCounts | undefined): Units {
    this.stream(text);
    const w = this.sweep();
    this.begin(out, w);
    for (let x = 0; x < w; x++) {
      if (anchors && !anchors.repeated(this.ah[this.wj[x]!]!)) this.skipped++;
      else this.emit(out, x);
    }
    return out;
  }

  /**
   * {@link windows} of document `doc`, whose runs `runs` holds (finished: ./anchors.ts), walking
   * those of its walked runs; a document with none is not read. Throws when `text` does not have
   * the runs counted (the input changed between the passes).
   */
  windowsOf(doc: number, text: string, out: Units, runs: AnchorRuns): Units {
    if (runs.walkedIn(doc) === 0) {
      out.count = 0;
      this.skipped = runs.windowsIn(doc);
      return out;
    }
    this.stream(text);
    if (this.kernel) return this.walkedOf(doc, out, runs);
    const w = this.sweep();
    this.begin(out, w);
    this.keep = more(this.keep, w);
    const n = walkedWindows({ doc, w, wj: this.wj }, runs, this.keep);
    for (let k = 0; k < n; k++) this.emit(out, this.keep[k]!);
    this.skipped = w - n;
    return out;
  }

  /** {@link windowsOf} in the kernel, which sweeps only the walked windows' grams (./sweepKernel.ts). */
  private walkedOf(doc: number, out: Units, runs: AnchorRuns): Units {
    const all = runs.windowsIn(doc);
    this.keep = more(this.keep, all);
    this.keepRun = more(this.keepRun, all);
    const nw = walkList(doc, runs, { at: this.keep, run: this.keepRun });
    const s = this.kernel!.run(this.tokens(), { G: this.gram, L: this.L, walk: this.keep, nw });
    checkWalked({ doc, w: s.w, wj: s.wj, n: nw, windows: all }, this.keepRun);
    ({ wa: this.wa, we: this.we } = s);
    this.begin(out, nw);
    for (let k = 0; k < nw; k++) this.emit(out, k);
    this.skipped = s.w - nw;
    return out;
  }

  /** Starts a call of {@link windows} of `w` windows into `out`. */
  private begin(out: Units, w: number): void {
    out.count = 0;
    this.skipped = 0;
    if (this.windowHash.length < 2 * w) this.windowHash = new Uint32Array(2 * w);
    if (this.winTok.length < 2 * w) this.winTok = new Int32Array(2 * w);
  }

  /** Appends window `x` of the last sweep to `out`, its hashes to {@link windowHash}. */
  private emit(out: Units, x: number): void {
    const a = this.wa[x]!;
    const e = this.we[x]!;
    const k = out.count++;
    const s = this.origStart[a]!;
    const t = this.origEnd[e - 1]!;
    out.start[k] = s;
    out.end[k] = t;
    out.textStart[k] = s;
    out.textEnd[k] = t;
    this.windowHash[2 * k] = this.hashOf(this.p0, this.pow0, this.codeAt[a]!, this.codeAt[e]!);
    this.windowHash[2 * k + 1] = this.hashOf(this.p1, this.pow1, this.codeAt[a]!, this.codeAt[e]!);
    this.winTok[2 * k] = a;
    this.winTok[2 * k + 1] = e;
  }

  /** Window `k`'s normalized code units into `into` (grown as needed): returns the buffer and the length. */
  key(k: number, into: Uint16Array): { buf: Uint16Array; len: number } {
    const a = this.codeAt[this.winTok[2 * k]!]!;
    const e = this.codeAt[this.winTok[2 * k + 1]!]!;
    const buf = more(into, e - a);
    buf.set(this.codes.subarray(a, e));
    return { buf, len: e - a };
  }

  /**
   * The windows of the stream into {@link wa}, {@link we}, {@link wj} (returns how many): tokens
   * [a, e), a the first token of a character and e the fewest that reach L bytes, and its anchor:
   * the index of its run of one anchor, whose hash is in {@link ah}. A window's anchor is the pair
   * of its grams of least hash under two orders of the grams' hashes (grams hashed into {@link gh},
   * one 32-bit lane), with the offset between them: it need only be the same wherever the window's
   * text is. A window that overlaps a repeated passage in part holds both grams of the passage's
   * windows less often than one, so fewer windows that occur once are walked.
   */
  private sweep(): number {
    if (!this.kernel) return this.sweepJs();
    const s = this.kernel.run(this.tokens(), { G: this.gram, L: this.L });
    ({ wa: this.wa, we: this.we, wj: this.wj, ah: this.ah } = s);
    return s.w;
  }

  /** The token stream of the last {@link stream}, for the kernel. */
  private tokens(): TokenStream {
    const { n, m, byteAt, codeAt, first, p0, pow0 } = this;
    return { n, m, byteAt, codeAt, first, p0, pow0 };
  }

  /** {@link sweep} in JavaScript. */
  private sweepJs(): number {
    const n = this.n;
    const G = this.gram;
    if (this.deque.length < n) {
      this.deque = more(this.deque, n);
      this.deque2 = more(this.deque2, n);
      this.gh = more(this.gh, n);
      this.gh2 = more(this.gh2, n);
      this.ah = more(this.ah, n);
      this.wa = more(this.wa, n);
      this.we = more(this.we, n);
      this.wj = more(this.wj, n);
    }
    const { deque: dq, deque2: dq2, gh, gh2, ah, byteAt, codeAt, first, p0, pow0, wa, we, wj } = this;
    const L = this.L;
    let head = 0;
    let tail = 0;
    let head2 = 0;
    let tail2 = 0;
    let nextGram = 0;
    let e = 0;
    let w = 0;
    let runs = -1;
    let last1 = -1;
    let last2 = -1;
    for (let a = 0; a < n; a++) {
      if (first[a] === 0) continue;
      const need = byteAt[a]! + L;
      while (e < n && byteAt[e]! < need) e++;
      if (byteAt[e]! < need) break;
      // Grams inside the window: [a, e − G]; the least hash (the last of equal ones) of each order at its deque's head.
      for (; nextGram <= e - G; nextGram++) {
        const h = fmix32((p0[codeAt[nextGram + G]!]! - Math.imul(p0[codeAt[nextGram]!]!, pow0[codeAt[nextGram + G]! - codeAt[nextGram]!]!)) >>> 0);
        const h2 = fmix32((h ^ 0x9e3779b9) >>> 0);
        gh[nextGram] = h;
        gh2[nextGram] = h2;
        while (tail > head && gh[dq[tail - 1]!]! >= h) tail--;
        dq[tail++] = nextGram;
        while (tail2 > head2 && gh2[dq2[tail2 - 1]!]! >= h2) tail2--;
        dq2[tail2++] = nextGram;
      }
      while (dq[head]! < a) head++;
      while (dq2[head2]! < a) head2++;
      const j1 = dq[head]!;
      const j2 = dq2[head2]!;
      if (j1 !== last1 || j2 !== last2) {
        last1 = j1;
        last2 = j2;
        ah[++runs] = fmix32((Math.imul(gh[j1]!, 0x85ebca6b) ^ gh2[j2]! ^ Math.imul(j2 - j1, 0xc2b2ae35)) >>> 0);
      }
      wa[w] = a;
      we[w] = e;
      wj[w++] = runs;
    }
    return w;
  }

  /** The hash of code units [a, b) from prefix hashes `p` (mod 2³², mixed). */
  private hashOf(p: Uint32Array, pow: Uint32Array, a: number, b: number): number {
    return fmix32((p[b]! - Math.imul(p[a]!, pow[b - a]!)) >>> 0);
  }

  /** Reads `text` into the token stream, its prefix hashes and powers. */
  private stream(text: string): void {
    this.n = 0;
    this.m = 0;
    // A token per code unit at most, but where a character becomes several (push() grows then).
    this.reserve(text.length + 1, text.length + 2);
    let gap = false;
    const ch = this.chars;
    let { origStart, origEnd, first, codeAt, byteAt, codes } = this;
    for (let i = 0; i < text.length;) {
      const unit = text.charCodeAt(i);
      // The common case: a character of the BMP that becomes one code point of the BMP (or a gap).
      const one = unit < 0xd800 || unit > 0xdfff ? ch.single(unit) : -2;
      // Room for the token and its code unit: a character that became several (push()) may have used up either.
      if (one >= 0 && this.n + 1 < origStart.length && this.m < codes.length) {
        const t = this.n++;
        origStart[t] = i;
        origEnd[t] = i + 1;
        first[t] = 1;
        codes[this.m] = one;
        codeAt[t] = this.m++;
        codeAt[t + 1] = this.m;
        byteAt[t + 1] = byteAt[t]! + utf8Len(one);
        gap = false;
        i++;
        continue;
      }
      const cp = text.codePointAt(i)!;
      const w = cp > 0xffff ? 2 : 1;
      if (one === -1 || (one === -2 && ch.of(cp) === undefined)) {
        if (ch.collapse && gap) this.origEnd[this.n - 1] = i + w;
        else this.push(ch.collapse ? 0x20 : ch.gapAlone(cp), i, w, true);
        gap = true;
      } else {
        const s = one >= 0 ? String.fromCharCode(one) : ch.of(cp)!;
        if (s.length > 0) gap = false;
        let firstOf = true;
        for (let j = 0; j < s.length;) {
          const c = s.codePointAt(j)!;
          this.push(c, i, w, firstOf);
          firstOf = false;
          j += c > 0xffff ? 2 : 1;
        }
      }
      // push() may have grown the arrays.
      ({ origStart, origEnd, first, codeAt, byteAt, codes } = this);
      i += w;
    }
    this.prefixes(this.m);
  }

  /** Room for `tokens` tokens and `units` code units. */
  private reserve(tokens: number, units: number): void {
    if (tokens > this.origStart.length) {
      this.origStart = more(this.origStart, tokens);
      // All as long as origStart (which the loop checks), not merely `tokens`: more() doubles, and an
      // array grown less would take writes past its end (dropped) until the next growth.
      const len = this.origStart.length;
      this.origEnd = more(this.origEnd, len);
      this.first = more(this.first, len);
      this.codeAt = more(this.codeAt, len + 1);
      this.byteAt = more(this.byteAt, len + 1);
    }
    if (units > this.codes.length) this.codes = more(this.codes, units);
  }

  /**
   * Appends token `cp` from the character at `i` (`w` code units), `first` when it is that character's first.
   * Why these parameters: once per code point, where an options object would allocate per code point.
   */
  private push(cp: number, i: number, w: number, first: boolean): void {
    const t = this.n++;
    this.reserve(t + 2, this.m + 4);
    this.origStart[t] = i;
    this.origEnd[t] = i + w;
    this.first[t] = first ? 1 : 0;
    let c = this.m;
    this.codeAt[t] = c;
    if (cp > 0xffff) {
      this.codes[c++] = 0xd800 + ((cp - 0x10000) >> 10);
      this.codes[c++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
    } else this.codes[c++] = cp;
    this.codeAt[t + 1] = c;
    this.byteAt[t + 1] = this.byteAt[t]! + utf8Len(cp);
    this.m = c;
  }

  /** Prefix hashes of the `m` code units and powers of the bases up to `m`. */
  private prefixes(m: number): void {
    this.p0 = more(this.p0, m + 1);
    this.p1 = more(this.p1, m + 1);
    let h0 = 0;
    let h1 = 0;
    for (let i = 0; i < m; i++) {
      const c = this.codes[i]! + 1;
      h0 = (Math.imul(h0, B0) + c) >>> 0;
      h1 = (Math.imul(h1, B1) + c) >>> 0;
      this.p0[i + 1] = h0;
      this.p1[i + 1] = h1;
    }
    if (this.pow0.length <= m) {
      const k = this.pow0.length;
      this.pow0 = more(this.pow0, m + 1);
      this.pow1 = more(this.pow1, m + 1);
      for (let i = k; i < this.pow0.length; i++) {
        this.pow0[i] = Math.imul(this.pow0[i - 1]!, B0) >>> 0;
        this.pow1[i] = Math.imul(this.pow1[i - 1]!, B1) >>> 0;
      }
    }
  }
}
