/**
 * The other kinds of near-duplicate search `dedup` offers besides MinHash-LSH over Jaccard:
 * candidates from an exact prefix-filtering join or from seed 002's sketch, containment instead of
 * Jaccard, and cluster policies other than connected components. These work on the fingerprint sets
 * of all documents, held in memory (about 4 bytes per distinct shingle per document).
 * @module
 */
import { createTextSigner } from '../sketch/textSigner.js';
import { chooseBands } from '../lsh/params.js';
import { emptyCandidateStats } from '../lsh/candidates.js';
import { sketchCandidates } from '../lsh/sketchCandidates.js';
import { prefixJoin, prefixJoin64, type SetMeasure } from '../similarity/prefixJoin.js';
import { createSet64 } from '../text/fingerprint64.js';
import type { ShingleKind } from '../text/shingler.js';
import { jaccardAtLeast } from '../similarity/jaccard.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import { TooManyPairsError } from '../lsh/tooManyPairs.js';
import { clusterWithPolicy, checkClusterPolicy } from './clusterPolicy.js';
import { finishDedup, resolveDedupOptions, type DedupOptions, type DedupResult } from './dedup.js';

/**
 * Where candidate pairs come from. `lsh` (default): MinHash banding. `exact`: a prefix-filtering
 * similarity join; every pair at or above the threshold, no misses. `sketch`: seed 002's bucket
 * minima. `auto`: `exact` where it is exact and measured faster than LSH ({@link autoCandidates}),
 * else `lsh`.
 */
export type CandidateMethod = 'lsh' | 'exact' | 'sketch' | 'auto';

/** The candidate methods, for option parsers. */
export const CANDIDATE_METHODS: readonly CandidateMethod[] = ['lsh', 'exact', 'sketch', 'auto'];

/** Default number of sketch buckets (seed 002's example sorts 100 documents into 25 buckets). */
export const DEFAULT_SKETCH_BUCKETS = 25;

/**
 * Up to this many shingles per document on average, `auto` picks the exact join for Jaccard. The
 * join's work grows with set size (prefixes and verification merges), LSH's much less (a fixed
 * signature): on the Kijiji ads the join is 2.6–3× faster on the titles (~40 char shingles each),
 * even with LSH on word 3-shingles of the ads (~80), and up to 2× slower on the full ads (~440 char
 * shingles), at every threshold (bench/RESULTS.md, "Exact join against LSH").
 */
export const AUTO_EXACT_MAX_SHINGLES = 100;

/**
 * Past this many characters of text `auto` keeps LSH: the join holds every fingerprint set at
 * once (about 12 bytes per shingle occurrence), while LSH holds one signature per document.
 */
export const AUTO_EXACT_MAX_CHARS = 200e6;

/**
 * The method `auto` resolves to: `exact` for containment (Jaccard-based candidates miss short
 * documents inside long ones), and for Jaccard when documents are short (an estimated
 * {@link AUTO_EXACT_MAX_SHINGLES} shingles or fewer: characters for char shingles, characters / 6
 * for word and spot shingles) and the corpus fits; else `lsh`.
 */
export function autoCandidates(measure: SetMeasure, chars: number, docs: number, kind: ShingleKind = 'char'): 'lsh' | 'exact' {
  if (measure === 'containment') return 'exact';
  const perDoc = chars / Math.max(1, docs) / (kind === 'char' ? 1 : 6);
  return perDoc <= AUTO_EXACT_MAX_SHINGLES && chars <= AUTO_EXACT_MAX_CHARS ? 'exact' : 'lsh';
}

/** True when `options` ask for something only {@link dedupKinds} does. */
export function needsKinds(options: DedupOptions): boolean {
  return (
    (options.candidates !== undefined && options.candidates !== 'lsh') ||
    (options.measure !== undefined && options.measure !== 'jaccard') ||
    (options.clusters !== undefined && options.clusters !== 'components') ||
    (options.representative !== undefined && options.representative !== 'first') ||
    (options.fingerprintBits !== undefined && options.fingerprintBits !== 32)
  );
}

/**
 * `dedup` for the options {@link needsKinds} flags. `lshDedup` is the plain MinHash-LSH pipeline,
 * used when the candidates are LSH and only the cluster policy differs.
 */
export function dedupKinds(texts: Iterable<string>, options: DedupOptions, lshDedup: (texts: Iterable<string>, o: DedupOptions) => DedupResult): DedupResult {
  const { threshold, verify, keepPairs, maxPairs } = resolveDedupOptions(options);
  const measure = options.measure ?? 'jaccard';
  if (measure !== 'jaccard' && measure !== 'containment') throw new RangeError(`unknown measure "${String(measure)}" (expected jaccard or containment)`);
  checkClusterPolicy(options.clusters, options.representative);
  const requested = options.candidates ?? 'lsh';
  if (!CANDIDATE_METHODS.includes(requested)) throw new RangeError(`unknown candidate method "${String(requested)}" (expected ${CANDIDATE_METHODS.join(', ')})`);
  const list = Array.isArray(texts) ? (texts as string[]) : [...texts];
  let chars = 0;
  for (const t of list) chars += t.length;
  const method = requested === 'auto' ? autoCandidates(measure, chars, list.length, options.shingle?.kind) : requested;
  const bits = options.fingerprintBits ?? 32;
  if (bits !== 32 && bits !== 64) throw new RangeError(`fingerprintBits must be 32 or 64, got ${String(bits)}`);
  if (bits === 64 && method !== 'exact') throw new RangeError(`64-bit fingerprints need exact candidates (candidates: 'exact'): ${method} works on 32-bit fingerprints`);
  if (measure === 'containment' && method !== 'exact') {
    throw new RangeError(`containment needs exact candidates (candidates: 'exact' or 'auto'): Jaccard-based ${method} misses short documents inside long ones`);
  }
  const policy = { mode: options.clusters, representative: options.representative, lengthOf: (i: number) => list[i]!.length };
  const recluster = (options.clusters ?? 'components') !== 'components' || (options.representative ?? 'first') !== 'first';
  let result: DedupResult;
  if (method === 'lsh') {
    // A policy other than the default re-clusters the pairs: LSH must then keep them.
    result = lshDedup(list, { ...options, candidates: 'lsh', clusters: 'components', representative: 'first', pairs: recluster || keepPairs });
  } else {
    if (verify !== 'exact') throw new RangeError(`verify "${verify}" applies to LSH candidates only: ${method} candidates are always scored exactly`);
    result = dedupBySets(list, options, method, measure, threshold, maxPairs, chars);
  }
  result.stats.candidateMethod = method;
  result.stats.measure = measure;
  if (recluster) {
    const t = performance.now();
    const { clusters, clusterOf } = clusterWithPolicy(list.length, result.pairs, policy);
    result.clusters = clusters;
    result.clusterOf = clusterOf;
    result.stats.clusters = clusters.length;
    result.stats.timings.cluster += performance.now() - t;
  }
  if (!keepPairs) result.pairs = [];
  return result;
}

/** Candidates from the sets (exact join or sketch), scored exactly, then {@link finishDedup}. */
function dedupBySets(texts: string[], options: DedupOptions, method: 'exact' | 'sketch', measure: SetMeasure, threshold: number, maxPairs: number, chars: number): DedupResult {
  const t0 = performance.now();
  const signer = createTextSigner({ shingle: options.shingle, minhash: options.minhash });
  const wide = options.fingerprintBits === 64;
  const set64 = wide ? createSet64(options.shingle) : undefined;
  const sets: Uint32Array[] = wide ? [] : new Array(texts.length);
  const sets64: BigUint64Array[] = wide ? new Array(texts.length) : [];
  const empty: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    const size = wide ? (sets64[i] = set64!(texts[i]!)).length : (sets[i] = signer.set(texts[i]!)).length;
    if (size === 0) empty.push(i);
    if (options.onProgress && (i & 1023) === 0) options.onProgress('sign', i, texts.length);
  }
  const t1 = performance.now();
  const cstats = emptyCandidateStats();
  let pairs: ScoredPair[];
  let t2: number;
  if (method === 'exact') {
    const joined = wide ? prefixJoin64(sets64, threshold, { measure }) : prefixJoin(sets, threshold, { measure });
    pairs = joined.pairs;
    cstats.candidates = joined.stats.candidates;
    t2 = performance.now();
  } else {
    const buckets = options.buckets ?? DEFAULT_SKETCH_BUCKETS;
    const { pairs: cand, stats } = sketchCandidates(sets, buckets, maxPairs);
    Object.assign(cstats, stats);
    t2 = performance.now();
    pairs = [];
    for (let p = 0; p < cand.size; p++) {
      const a = cand.a[p]!;
      const b = cand.b[p]!;
      const s = jaccardAtLeast(sets[a]!, sets[b]!, threshold);
      if (s >= 0) pairs.push({ a, b, similarity: s });
      if (options.onProgress && (p & 65535) === 0) options.onProgress('verify', p, cand.size);
    }
  }
  if (pairs.length > maxPairs) throw new TooManyPairsError('pairs', pairs.length, maxPairs, 1);
  // The banding is reported for the record only: no band was used.
  const bands = chooseBands(threshold, signer.numPerm, options.lsh);
  const run = { n: texts.length, pairs, empty, bands, chars, cstats, keepPairs: true, maxPairs };
  return finishDedup(run, { t0, t1, t2, shingle: t1 - t0, sign: 0 });
}
