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
import { fmix32 } from '../hash/mix.js';
import { radixSort } from '../text/fingerprintSet.js';
import type { ScoredPair } from './bruteForce.js';

/** The similarity a join (or dedup) reports. */
export type SetMeasure = 'jaccard' | 'containment';

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
  const size = new Int32Array(m);
  for (let p = 0; p < m; p++) size[p] = ranked[p]!.length;
  // Index prefix length of the p-th set (in processing order). Jaccard: sets arrive by increasing
  // size, so a later (larger) partner needs overlap ≥ 2t/(1+t)·|y| (the AllPairs "mid-prefix").
  // Containment: the overlap must reach t·|y| for the smaller set y, which is the indexed one.
  const indexLen = new Int32Array(m);
  let total = 0;
  for (let p = 0; p < m; p++) {
    const s = size[p]!;
    const alpha = containment ? Math.ceil(threshold * s - EPS) : Math.ceil(((2 * threshold) / (1 + threshold)) * s - EPS);
    indexLen[p] = Math.max(1, Math.min(s, s - alpha + 1));
    total += indexLen[p]!;
  }
  // Posting lists in one CSR block: postings of token k at [start[k], fill[k]); filled in processing
  // order, so each list is sorted by set size and the size filter can advance a list's head.
  const start = new Int32Array(tokens + 1);
  for (let p = 0; p < m; p++) {
    const r = ranked[p]!;
    for (let i = 0, e = indexLen[p]!; i < e; i++) start[r[i]! + 1]!++;
  }
  for (let k = 0; k < tokens; k++) start[k + 1]! += start[k]!;
  const head = start.slice(0, tokens);
  const fill = start.slice(0, tokens);
  const postSet = new Int32Array(total);
  const postPos = new Int32Array(total);
  // Overlap so far per candidate (by processing position); -1 marks one pruned for this probe.
  const overlap = new Int32Array(m);
  const touched = new Int32Array(m);
  const pairs: ScoredPair[] = [];
  let candidates = 0;
  for (let p = 0; p < m; p++) {
    const x = ranked[p]!;
    const lx = x.length;
    // Jaccard probes the prefix |x| − ⌈t|x|⌉ + 1 and needs partners of size ≥ t|x|. Containment
    // probes every token of x: a smaller partner y may need as little as one shared token, and it
    // is y's indexed prefix that must meet x (anywhere), with no lower bound on |y|.
    const probe = containment ? lx : Math.max(1, lx - Math.ceil(threshold * lx - EPS) + 1);
    const minSize = containment ? 1 : threshold * lx - EPS;
    let nt = 0;
    for (let i = 0; i < probe; i++) {
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
        else overlap[y] = c + 1;
      }
    }
    for (let u = 0; u < nt; u++) {
      const y = touched[u]!;
      const c = overlap[y]!;
      overlap[y] = 0;
      if (c < 0) continue;
      candidates++;
      const s = verify(ranked[y]!, x, threshold, containment);
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
    for (let i = 0; i < e; i++) {
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
 * Exact score of a candidate (y processed before x, so |y| ≤ |x|), or -1 below the threshold.
 * Both sets are sorted by token rank; the merge stops once the overlap is out of reach. The value is
 * computed as {@link jaccard} computes it (ranking preserves intersection sizes), so scores agree.
 */
function verify(y: Uint32Array, x: Uint32Array, t: number, containment: boolean): number {
  const ly = y.length;
  const lx = x.length;
  const need = containment ? t * ly - EPS : ((t * (lx + ly)) / (1 + t)) - EPS;
  let i = 0;
  let j = 0;
  let n = 0;
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

/** Sets renamed to token ranks, sorted, in processing order; `order[p]` is the p-th set's index. */
interface RankedSets {
  ranked: Uint32Array[];
  order: Int32Array;
  tokens: number;
}

/**
 * Renames every token to its rank by document frequency (rarest = 0; ties by fingerprint), and
 * returns the renamed sets sorted ascending, in processing order (by size, then index), with
 * `order[p]` the original index of the p-th. Empty sets are left out.
 */
function rankTokens(sets: readonly Uint32Array[]): RankedSets {
  const nonEmpty: number[] = [];
  for (let i = 0; i < sets.length; i++) if (sets[i]!.length > 0) nonEmpty.push(i);
  // Open addressing from fingerprint to a dense token number, grown as tokens appear: sized on the
  // distinct tokens, not the occurrences, so it stays in cache. No Map on this path.
  let cap = 1024;
  let keys = new Uint32Array(cap);
  let tok = new Int32Array(cap).fill(-1);
  let count = new Int32Array(cap);
  let tokens = 0;
  const find = (v: number): number => {
    const mask = cap - 1;
    let s = fmix32(v) & mask;
    for (;;) {
      const t = tok[s]!;
      if (t === -1 || keys[s] === v) return s;
      s = (s + 1) & mask;
    }
  };
  const grow = (): void => {
    const oldKeys = keys;
    const oldTok = tok;
    cap *= 2;
    keys = new Uint32Array(cap);
    tok = new Int32Array(cap).fill(-1);
    for (let s = 0; s < oldKeys.length; s++) {
      if (oldTok[s] === -1) continue;
      const d = find(oldKeys[s]!);
      keys[d] = oldKeys[s]!;
      tok[d] = oldTok[s]!;
    }
  };
  for (const i of nonEmpty) {
    const set = sets[i]!;
    for (let k = 0; k < set.length; k++) {
      const v = set[k]!;
      let s = find(v);
      if (tok[s] === -1) {
        if ((tokens + 1) * 2 > cap) {
          grow();
          s = find(v);
        }
        keys[s] = v;
        tok[s] = tokens;
        if (tokens >= count.length) {
          const c = new Int32Array(count.length * 2);
          c.set(count);
          count = c;
        }
        tokens++;
      }
      count[tok[s]!]!++;
    }
  }
  // Sort the distinct tokens by (frequency, fingerprint): one float key each, exact below 2^53, so
  // the native numeric sort does it without a comparator.
  const sortKey = new Float64Array(tokens);
  for (let s = 0; s < cap; s++) if (tok[s] !== -1) sortKey[tok[s]!] = count[tok[s]!]! * 4294967296 + keys[s]!;
  sortKey.sort();
  const rank = new Int32Array(tokens);
  for (let r = 0; r < tokens; r++) rank[tok[find(sortKey[r]! % 4294967296)]!] = r;
  nonEmpty.sort((u, v) => sets[u]!.length - sets[v]!.length || u - v);
  const ranked: Uint32Array[] = new Array(nonEmpty.length);
  const order = new Int32Array(nonEmpty.length);
  for (let p = 0; p < nonEmpty.length; p++) {
    const i = nonEmpty[p]!;
    const set = sets[i]!;
    const r = new Uint32Array(set.length);
    for (let k = 0; k < set.length; k++) r[k] = rank[tok[find(set[k]!)]!]!;
    radixSort(r);
    ranked[p] = r;
    order[p] = i;
  }
  return { ranked, order, tokens };
}

/**
 * {@link rankTokens} for 64-bit fingerprints: all occurrences sorted once (native BigUint64Array
 * sort), runs counted, and each set's tokens found by binary search in the distinct values.
 */
function rankTokens64(sets: readonly BigUint64Array[]): RankedSets {
  let occurrences = 0;
  const nonEmpty: number[] = [];
  for (let i = 0; i < sets.length; i++) {
    if (sets[i]!.length > 0) {
      nonEmpty.push(i);
      occurrences += sets[i]!.length;
    }
  }
  const all = new BigUint64Array(occurrences);
  let o = 0;
  for (const i of nonEmpty) {
    all.set(sets[i]!, o);
    o += sets[i]!.length;
  }
  all.sort();
  let tokens = 0;
  for (let k = 0; k < occurrences; k++) if (k === 0 || all[k] !== all[k - 1]) tokens++;
  const distinct = new BigUint64Array(tokens);
  const count = new Int32Array(tokens);
  for (let k = 0, d = -1; k < occurrences; k++) {
    if (k === 0 || all[k] !== all[k - 1]) distinct[++d] = all[k]!;
    count[d]!++;
  }
  // Rank by (frequency, fingerprint): distinct is in fingerprint order, so ties keep index order.
  const idx = new Int32Array(tokens);
  for (let k = 0; k < tokens; k++) idx[k] = k;
  idx.sort((u, v) => count[u]! - count[v]! || u - v);
  const rank = new Int32Array(tokens);
  for (let r = 0; r < tokens; r++) rank[idx[r]!] = r;
  nonEmpty.sort((u, v) => sets[u]!.length - sets[v]!.length || u - v);
  const ranked: Uint32Array[] = new Array(nonEmpty.length);
  const order = new Int32Array(nonEmpty.length);
  for (let p = 0; p < nonEmpty.length; p++) {
    const i = nonEmpty[p]!;
    const set = sets[i]!;
    const r = new Uint32Array(set.length);
    for (let k = 0; k < set.length; k++) {
      const v = set[k]!;
      let lo = 0;
      let hi = tokens - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (distinct[mid]! < v) lo = mid + 1;
        else hi = mid;
      }
      r[k] = rank[lo]!;
    }
    radixSort(r);
    ranked[p] = r;
    order[p] = i;
  }
  return { ranked, order, tokens };
}
