/**
 * An exact set-similarity self-join by prefix filtering (the AllPairs / PPJoin family): every pair
 * of fingerprint sets whose Jaccard similarity (or containment) reaches the threshold, with no
 * misses, usually far faster than comparing all pairs.
 *
 * The idea: order the tokens of the whole corpus from rarest to most common and sort every set by
 * that order. Two sets that share at least α tokens must share one among the first |x| − α + 1
 * tokens of each (their "prefix"); rare tokens make those prefixes short and their posting lists
 * short. Sets are processed from smallest to largest; each probes the prefixes indexed so far,
 * candidates too small to reach the threshold are skipped (size filter), and a candidate is dropped
 * as soon as the tokens left on either side cannot make up the overlap (positional filter). The
 * survivors are verified by a merge.
 * @module
 */
import { rankTokens, rankTokens64, type RankedSets } from './tokenRank.js';
import type { ScoredPair } from './bruteForce.js';
import type { SetMeasure } from '../engine/config.js';
export type { SetMeasure } from '../engine/config.js';

/** Options of {@link prefixJoin}. */
export interface PrefixJoinOptions {
  /**
   * `jaccard` (default): |x ∩ y| / |x ∪ y| ≥ t. `containment`: |x ∩ y| / |x| ≥ t for the smaller
   * set x (the larger of the two containments), reported with `a` = the contained set.
   */
  measure?: SetMeasure;
  /** Called now and then with (sets done, sets to do). */
  onProgress?: (done: number, total: number) => void;
}

/** Counters of one {@link prefixJoin}. */
export interface PrefixJoinStats {
  /** Distinct tokens in the corpus. */
  tokens: number;
  /** Postings indexed (prefix tokens over all sets). */
  indexed: number;
  /** Candidate pairs that survived the size and positional filters and were verified. */
  candidates: number;
  /** Pairs at or above the threshold. */
  pairs: number;
}

/** The result of {@link prefixJoin}. */
export interface PrefixJoinResult {
  /**
   * Pairs sorted by (a, b). Jaccard: a < b. Containment: `a` is the set with fewer tokens (the
   * lower index on a tie), `similarity` = |a ∩ b| / |a|.
   */
  pairs: ScoredPair[];
  /** Counters. */
  stats: PrefixJoinStats;
}

/** Slack so that float rounding never turns a pair exactly at the threshold away. */
const EPS = 1e-9;

/**
 * All pairs of non-empty sets in `sets` (sorted unique uint32 fingerprints, as `TextSigner.set`
 * gives) whose similarity under `options.measure` is ≥ `threshold`. Exact: the same pairs and
 * scores as comparing every pair. Memory: about 12 bytes per token occurrence.
 */
export function prefixJoin(sets: readonly Uint32Array[], threshold: number, options: PrefixJoinOptions = {}): PrefixJoinResult {
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${threshold}`);
  const measure = options.measure ?? 'jaccard';
  if (measure !== 'jaccard' && measure !== 'containment') throw new RangeError(`unknown measure "${String(measure)}" (expected jaccard or containment)`);
  return joinRanked(rankTokens(sets), threshold, measure, options);
}

/**
 * {@link prefixJoin} over 64-bit fingerprint sets (sorted unique, as `createSet64` gives): the same
 * pairs a 32-bit run would give, minus those that only 32-bit fingerprint collisions made similar.
 */
export function prefixJoin64(sets: readonly BigUint64Array[], threshold: number, options: PrefixJoinOptions = {}): PrefixJoinResult {
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${threshold}`);
  const measure = options.measure ?? 'jaccard';
  if (measure !== 'jaccard' && measure !== 'containment') throw new RangeError(`unknown measure "${String(measure)}" (expected jaccard or containment)`);
  return joinRanked(rankTokens64(sets), threshold, measure, options);
}

/** The join itself, over sets already renamed to token ranks (see {@link rankTokens}). */
function joinRanked(rankedSets: RankedSets, threshold: number, measure: SetMeasure, options: PrefixJoinOptions): PrefixJoinResult {
  const containment = measure === 'containment';
  const { ranked, order, tokens } = rankedSets;
  const m = order.length;
  const { size, shared, indexLen, total } = indexPrefixes(rankedSets, threshold, containment);
  const { head, fill, postSet, postPos } = postingLists(rankedSets, shared, indexLen, total);
  // Overlap so far per candidate (by processing position); -1 marks one pruned for this probe.
  // lastX/lastY: positions of the candidate's last common token, where verification resumes.
  const overlap = new Int32Array(m);
  const lastX = new Int32Array(m);
  const lastY = new Int32Array(m);
  const touched = new Int32Array(m);
  const pairs: ScoredPair[] = [];
  let candidates = 0;
  for (let p = 0; p < m; p++) {
    const x = ranked[p]!;
    const lx = x.length;
    // Jaccard probes the prefix |x| − ⌈t|x|⌉ + 1 and needs partners of size ≥ t|x|. Containment
    // probes every token of x: a smaller partner y may need as little as one shared token, and it
    // is y's indexed prefix that must meet x (anywhere), with no lower bound on |y|.
    const probe = indexLen[p] === 0 ? 0 : containment ? lx : Math.max(1, lx - Math.ceil(threshold * lx - EPS) + 1);
    const minSize = containment ? 1 : threshold * lx - EPS;
    let nt = 0;
    for (let i = shared[p]!; i < probe; i++) {
      const tok = x[i]!;
      let h = head[tok]!;
      const f = fill[tok]!;
      while (h < f && size[postSet[h]!]! < minSize) h++;
      head[tok] = h;
      for (let q = h; q < f; q++) {
        const y = postSet[q]!;
        const c = overlap[y]!;
        if (c < 0) continue;
        const ly = size[y]!;
        const alpha = containment ? Math.ceil(threshold * Math.min(lx, ly) - EPS) : Math.ceil((threshold / (1 + threshold)) * (lx + ly) - EPS);
        const j = postPos[q]!;
        if (c === 0) touched[nt++] = y;
        // Positional filter: what is counted, this token, and the fewer tokens left after it.
        if (c + 1 + Math.min(lx - i - 1, ly - j - 1) < alpha) overlap[y] = -1;
        else {
          overlap[y] = c + 1;
          lastX[y] = i;
          lastY[y] = j;
        }
      }
    }
    for (let u = 0; u < nt; u++) {
      const y = touched[u]!;
      const c = overlap[y]!;
      overlap[y] = 0;
      if (c < 0) continue;
      candidates++;
      const s = verifyRest(ranked[y]!, x, c, indexLen[y]!, probe, lastY[y]!, lastX[y]!, threshold, containment);
      if (s < 0) continue;
      const a = order[y]!;
      const b = order[p]!;
      if (containment) {
        // The smaller set is the contained one; on equal sizes the lower index comes first.
        const yFirst = size[y]! < lx || a < b;
        pairs.push(yFirst ? { a, b, similarity: s } : { a: b, b: a, similarity: s });
      } else pairs.push(a < b ? { a, b, similarity: s } : { a: b, b: a, similarity: s });
    }
    const e = indexLen[p]!;
    for (let i = shared[p]!; i < e; i++) {
      const tok = x[i]!;
      const q = fill[tok]!++;
      postSet[q] = p;
      postPos[q] = i;
    }
    if (options.onProgress && (p & 1023) === 0) options.onProgress(p, m);
  }
  pairs.sort((u, v) => u.a - v.a || u.b - v.b);
  return { pairs, stats: { tokens, indexed: total, candidates, pairs: pairs.length } };
}

/**
 * Per set (in processing order): its size, the position of its first token shared with another set,
 * and the length of its prefix to index; `total` is the postings those prefixes make.
 */
function indexPrefixes(
  rankedSets: RankedSets,
  threshold: number,
  containment: boolean,
): { size: Int32Array; shared: Int32Array; indexLen: Int32Array; total: number } {
  const { ranked, order, singles } = rankedSets;
  const m = order.length;
  const size = new Int32Array(m);
  for (let p = 0; p < m; p++) size[p] = ranked[p]!.length;
  // First position of each set holding a token shared with some other set: the tokens before it
  // occur in this set only (ranks below `singles`), so nothing can meet there.
  const shared = new Int32Array(m);
  for (let p = 0; p < m; p++) {
    const r = ranked[p]!;
    let i = 0;
    while (i < r.length && r[i]! < singles) i++;
    shared[p] = i;
  }
  // Index prefix length of the p-th set (in processing order). Jaccard: sets arrive by increasing
  // size, so a later (larger) partner needs overlap ≥ 2t/(1+t)·|y| (the AllPairs "mid-prefix").
  // Containment: the overlap must reach t·|y| for the smaller set y, which is the indexed one.
  // Jaccard also drops a set whose shared tokens cannot reach t·|x|: J ≤ (|x| − singles)/|x|.
  const indexLen = new Int32Array(m);
  let total = 0;
  for (let p = 0; p < m; p++) {
    const s = size[p]!;
    if (!containment && s - shared[p]! < threshold * s - EPS) continue;
    const alpha = containment ? Math.ceil(threshold * s - EPS) : Math.ceil(((2 * threshold) / (1 + threshold)) * s - EPS);
    indexLen[p] = Math.max(1, Math.min(s, s - alpha + 1));
    if (indexLen[p]! > shared[p]!) total += indexLen[p]! - shared[p]!;
  }
  return { size, shared, indexLen, total };
}

/** Empty posting lists in one CSR block, sized for the indexed prefixes (`head` and `fill` both at each list's start). */
function postingLists(
  rankedSets: RankedSets,
  shared: Int32Array,
  indexLen: Int32Array,
  total: number,
): { head: Int32Array; fill: Int32Array; postSet: Int32Array; postPos: Int32Array } {
  const { ranked, order, tokens } = rankedSets;
  // Posting lists in one CSR block: postings of token k at [start[k], fill[k]); filled in processing
  // order, so each list is sorted by set size and the size filter can advance a list's head.
  const start = new Int32Array(tokens + 1);
  for (let p = 0; p < order.length; p++) {
    const r = ranked[p]!;
    for (let i = shared[p]!, e = indexLen[p]!; i < e; i++) start[r[i]! + 1]!++;
  }
  for (let k = 0; k < tokens; k++) start[k + 1]! += start[k]!;
  const head = start.slice(0, tokens);
  const fill = start.slice(0, tokens);
  const postSet = new Int32Array(total);
  const postPos = new Int32Array(total);
  return { head, fill, postSet, postPos };
}

/**
 * Exact score of a candidate (y processed before x, so |y| ≤ |x|), or -1 below the threshold,
 * resuming after the prefixes (PPJoin): `c` common tokens were counted between y's first `py` and
 * x's first `px` tokens, the last at y[jy] = x[ix]. If y's prefix ends on the larger token, x's
 * prefix met all of y's it can, and what is left is x after its prefix against y after jy; else the
 * mirror. Both sets are sorted by token rank; the merge stops once the overlap is out of reach. The
 * value is computed as {@link jaccard} computes it (ranking preserves intersection sizes).
 * Why these parameters: called once per candidate pair of the prefix join with the merge state the caller holds; an options object would be an allocation per pair.
 */
function verifyRest(y: Uint32Array, x: Uint32Array, c: number, py: number, px: number, jy: number, ix: number, t: number, containment: boolean): number {
  const ly = y.length;
  const lx = x.length;
  const need = containment ? t * ly - EPS : ((t * (lx + ly)) / (1 + t)) - EPS;
  let i: number;
  let j: number;
  if (y[py - 1]! >= x[px - 1]!) {
    i = jy + 1;
    j = px;
  } else {
    i = py;
    j = ix + 1;
  }
  let n = c;
  while (i < ly && j < lx) {
    if (n + Math.min(ly - i, lx - j) < need) return -1;
    const u = y[i]!;
    const v = x[j]!;
    if (u === v) {
      n++;
      i++;
      j++;
    } else if (u < v) i++;
    else j++;
  }
  const s = containment ? n / Math.min(ly, lx) : n / (lx + ly - n);
  return s >= t ? s : -1;
}
