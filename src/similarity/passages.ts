/**
 * The longest common passages of two texts, with their positions in both, for aligned highlighting
 * (the "more precise third step" after sketches and shingles: what exactly do two documents share?).
 *
 * Method: every q-gram of b is indexed (q = min(minLength, 32)); scanning a, each q-gram hit that
 * cannot be extended to the left starts a maximal exact match, which is extended to the right.
 * Matches are then tiled greedily, longest first, so no character of a or of b is in two passages.
 * Cost is about O(|a| + |b|) for ordinary text; highly repetitive text is bounded by `maxChain`.
 *
 * {@link shingleRuns} answers a looser question on shingle fingerprints (which stretches of a are
 * made of k-grams that occur anywhere in b); `neardup compare` shows those.
 *
 * This file imports nothing: the web page loads its compiled form as is.
 * @module
 */

/** A passage shared by two texts. Offsets are UTF-16 indices into the original (unfolded) texts. */
export interface Passage {
  /** Start of the passage in a. */
  aStart: number;
  /** End (exclusive) of the passage in a. */
  aEnd: number;
  /** Start of the passage in b. */
  bStart: number;
  /** End (exclusive) of the passage in b. */
  bEnd: number;
  /** Length in folded characters (equal in both texts). */
  length: number;
  /** The passage as it appears in a. */
  text: string;
}

/** How texts are compared. `case-space`: case-insensitive, whitespace runs equal one space. `none`: exact. */
export type PassageFold = 'case-space' | 'none';

/** Options of {@link commonPassages}. */
export interface PassageOptions {
  /** Shortest passage reported, in folded characters. Default 20. */
  minLength?: number;
  /** At most this many passages, longest first. Default: all. */
  maxPassages?: number;
  /** Folding before comparison. Default `case-space`. Offsets always refer to the original texts. */
  fold?: PassageFold;
  /**
   * At most this many earlier occurrences of a q-gram of b are tried per position of a. Bounds the
   * work on very repetitive texts (a passage repeated more often may then be missed). Default 256.
   */
  maxChain?: number;
}

/** The result of {@link commonPassages}. */
export interface PassageResult {
  /** Shared passages, longest first (ties: earlier in a first). No two overlap in a or in b. */
  passages: Passage[];
  /** Fraction of a's folded characters inside a passage. */
  coverageA: number;
  /** Fraction of b's folded characters inside a passage. */
  coverageB: number;
}

interface Folded {
  /** Folded UTF-16 code units. */
  s: Uint16Array;
  /** Original index of each folded unit. */
  pos: Int32Array;
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f
    || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Folds a text unit by unit, keeping a map back to the original offsets. */
function foldText(text: string, fold: PassageFold): Folded {
  const n = text.length;
  const s = new Uint16Array(n);
  const pos = new Int32Array(n);
  let m = 0;
  if (fold === 'none') {
    for (let i = 0; i < n; i++) {
      s[i] = text.charCodeAt(i);
      pos[i] = i;
    }
    return { s, pos };
  }
  let prevSpace = false;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    if (isSpace(c)) {
      // A whitespace run becomes one space, mapped to the run's first character.
      if (prevSpace) continue;
      prevSpace = true;
      s[m] = 32;
      pos[m++] = i;
      continue;
    }
    prevSpace = false;
    if (c >= 65 && c <= 90) c += 32;
    else if (c >= 128 && (c < 0xd800 || c > 0xdfff)) {
      // Only length-preserving lowercasing, so that offsets stay one-to-one.
      const l = String.fromCharCode(c).toLowerCase();
      if (l.length === 1) c = l.charCodeAt(0);
    }
    s[m] = c;
    pos[m++] = i;
  }
  return { s: s.subarray(0, m), pos: pos.subarray(0, m) };
}

/** q-gram hashes by a rolling polynomial hash mod 2^32. */
function qgramHashes(s: Uint16Array, q: number): Uint32Array {
  const n = s.length - q + 1;
  if (n <= 0) return new Uint32Array(0);
  const out = new Uint32Array(n);
  const B = 0x01000193;
  let pow = 1; // B^(q-1)
  for (let i = 1; i < q; i++) pow = Math.imul(pow, B);
  let h = 0;
  for (let i = 0; i < q; i++) h = (Math.imul(h, B) + s[i]!) | 0;
  out[0] = h;
  for (let i = 1; i < n; i++) {
    h = (h - Math.imul(s[i - 1]!, pow)) | 0;
    h = (Math.imul(h, B) + s[i + q - 1]!) | 0;
    out[i] = h;
  }
  return out;
}

/**
 * Finds the longest common passages of `a` and `b`: maximal stretches of text that occur in both,
 * at least `minLength` characters long, with their offsets in both texts. Passages are chosen
 * greedily, longest first, and never overlap (in a or in b), so they can be highlighted in both
 * texts with one color per passage.
 *
 * Comparison is case-insensitive and treats whitespace runs as one space by default (`fold`);
 * the returned offsets and `text` always refer to the original strings.
 *
 * @example
 * const { passages } = commonPassages(adA, adB, { minLength: 15 });
 * for (const p of passages) console.log(p.text, p.aStart, p.bStart);
 */
export function commonPassages(a: string, b: string, options: PassageOptions = {}): PassageResult {
  const minLength = options.minLength ?? 20;
  if (!Number.isInteger(minLength) || minLength < 1) throw new RangeError(`minLength must be a positive integer, got ${minLength}`);
  const maxPassages = options.maxPassages ?? Infinity;
  if (!(maxPassages >= 0)) throw new RangeError(`maxPassages must be ≥ 0, got ${maxPassages}`);
  const fold = options.fold ?? 'case-space';
  if (fold !== 'case-space' && fold !== 'none') throw new RangeError(`unknown fold "${String(fold)}" (expected case-space or none)`);
  const maxChain = options.maxChain ?? 256;
  const A = foldText(a, fold);
  const B = foldText(b, fold);
  const sa = A.s;
  const sb = B.s;
  const empty: PassageResult = { passages: [], coverageA: 0, coverageB: 0 };
  if (sa.length < minLength || sb.length < minLength) return empty;

  const chosen = tileMatches(maximalMatches(sa, sb, minLength, maxChain), { a: sa.length, b: sb.length }, minLength, maxPassages);

  let coveredA = 0;
  let coveredB = 0;
  const passages: Passage[] = chosen.map((m) => {
    coveredA += m.len;
    coveredB += m.len;
    const aStart = A.pos[m.i]!;
    const aEnd = A.pos[m.i + m.len - 1]! + 1;
    const bStart = B.pos[m.j]!;
    const bEnd = B.pos[m.j + m.len - 1]! + 1;
    return { aStart, aEnd, bStart, bEnd, length: m.len, text: a.slice(aStart, aEnd) };
  });
  passages.sort((x, y) => y.length - x.length || x.aStart - y.aStart);
  return { passages, coverageA: coveredA / sa.length, coverageB: coveredB / sb.length };
}

/** A maximal exact match: `len` characters at i in the folded a and at j in the folded b. */
type Match = { i: number; j: number; len: number };

/**
 * The maximal exact matches of at least `minLength` characters between the folded texts, longest
 * first (then by position in a, then in b), found through b's q-grams (at most `maxChain` tried per
 * q-gram of a).
 */
function maximalMatches(sa: Uint16Array, sb: Uint16Array, minLength: number, maxChain: number): Match[] {
  // 1. Index b's q-grams: a chained hash table on typed arrays (head per bucket, next per position).
  const q = Math.min(minLength, 32);
  const hb = qgramHashes(sb, q);
  const ha = qgramHashes(sa, q);
  let size = 16;
  while (size < hb.length * 2) size <<= 1;
  const mask = size - 1;
  const head = new Int32Array(size).fill(-1);
  const next = new Int32Array(hb.length);
  // Insert from the end so chains run in ascending position order.
  for (let j = hb.length - 1; j >= 0; j--) {
    const slot = (Math.imul(hb[j]!, 0x9e3779b1) >>> 0) & mask;
    next[j] = head[slot]!;
    head[slot] = j;
  }

  // 2. Maximal exact matches (left-maximal at their start, extended right as far as they go).
  const mi: number[] = [];
  const mj: number[] = [];
  const ml: number[] = [];
  for (let i = 0; i < ha.length; i++) {
    const h = ha[i]!;
    let tries = 0;
    for (let j = head[(Math.imul(h, 0x9e3779b1) >>> 0) & mask]!; j !== -1 && tries < maxChain; j = next[j]!, tries++) {
      if (hb[j] !== h) continue;
      // Not left-maximal: the same match was found from an earlier start.
      if (i > 0 && j > 0 && sa[i - 1] === sb[j - 1]) continue;
      let len = 0;
      while (i + len < sa.length && j + len < sb.length && sa[i + len] === sb[j + len]) len++;
      if (len >= minLength) {
        mi.push(i);
        mj.push(j);
        ml.push(len);
      }
    }
  }

  const order: { i: number; j: number; len: number }[] = mi.map((i, t) => ({ i, j: mj[t]!, len: ml[t]! }));
  order.sort((x, y) => y.len - x.len || x.i - y.i || x.j - y.j);
  return order;
}

/**
 * Greedy tiling, longest first: the matches taken (at most `maxPassages`) in order, none overlapping
 * another in a or in b (`size` holds the folded texts' lengths). A match partly covered by earlier
 * passages is re-queued as its free pieces (each shorter than the match, so they sort after the
 * current position).
 */
function tileMatches(order: Match[], size: { a: number; b: number }, minLength: number, maxPassages: number): Match[] {
  const usedA = new Uint8Array(size.a);
  const usedB = new Uint8Array(size.b);
  const chosen: { i: number; j: number; len: number }[] = [];
  for (let h = 0; h < order.length && chosen.length < maxPassages; h++) {
    const m = order[h]!;
    let whole = true;
    for (let t = 0; t < m.len; t++) {
      if (usedA[m.i + t] || usedB[m.j + t]) {
        whole = false;
        break;
      }
    }
    if (whole) take(m);
    else requeueFreePieces(h + 1, m);
  }

  function take(m: { i: number; j: number; len: number }): void {
    usedA.fill(1, m.i, m.i + m.len);
    usedB.fill(1, m.j, m.j + m.len);
    chosen.push(m);
  }

  /** Re-queues the stretches of m that are still free in both texts and long enough on their own. */
  function requeueFreePieces(from: number, m: Match): void {
    let runS = 0;
    for (let t = 0; t <= m.len; t++) {
      const free = t < m.len && !usedA[m.i + t] && !usedB[m.j + t];
      if (!free) {
        if (t - runS >= minLength) insertSorted(order, from, { i: m.i + runS, j: m.j + runS, len: t - runS });
        runS = t + 1;
      }
    }
  }

  return chosen;
}

function insertSorted(order: { i: number; j: number; len: number }[], from: number, m: { i: number; j: number; len: number }): void {
  let lo = from;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const o = order[mid]!;
    if (o.len > m.len || (o.len === m.len && (o.i < m.i || (o.i === m.i && o.j <= m.j)))) lo = mid + 1;
    else hi = mid;
  }
  order.splice(lo, 0, m);
}

/** A stretch of consecutive k-gram positions of a whose every k-gram occurs in b (see {@link shingleRuns}). */
export interface ShingleRun {
  /** Position of the run's first k-gram (= its first character) in a's normalized text, in code points. */
  start: number;
  /** Length in code points (k-grams in the run + k − 1). */
  length: number;
}

/** Whether sorted `set` holds `x` (binary search). */
function sortedHas(set: Uint32Array, x: number): boolean {
  let lo = 0;
  let hi = set.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = set[mid]!;
    if (v === x) return true;
    if (v < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * The maximal runs of a's consecutive character k-grams that occur in b, longest first (ties: earlier
 * first), and the fraction of a's `length` code points they cover. `fingerprintsA` are a's k-gram
 * fingerprints in text order (one per start position), `setB` b's sorted fingerprint set. Unlike
 * {@link commonPassages}, a run may gather k-grams from different places of b, and runs are not
 * aligned with b.
 */
export function shingleRuns(fingerprintsA: ArrayLike<number>, setB: Uint32Array, k: number, length: number): { runs: ShingleRun[]; coverage: number } {
  const fps = fingerprintsA;
  if (length < k || setB.length === 0) return { runs: [], coverage: 0 };
  const runs: ShingleRun[] = [];
  const covered = new Uint8Array(length);
  let i = 0;
  while (i < fps.length) {
    if (!sortedHas(setB, fps[i]!)) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < fps.length && sortedHas(setB, fps[j + 1]!)) j++;
    const len = j - i + k;
    runs.push({ start: i, length: len });
    covered.fill(1, i, i + len);
    i = j + 1;
  }
  runs.sort((x, y) => y.length - x.length || x.start - y.start);
  let c = 0;
  for (const v of covered) c += v;
  return { runs, coverage: c / length };
}
