/**
 * The other kinds of near-duplicate search `dedup` offers besides MinHash-LSH over Jaccard:
 * candidates from an exact prefix-filtering join or from the bucket-minimum sketch, containment instead of
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
import { clusterWithPolicy, checkClusterPolicy } from '../cluster/clusterPolicy.js';
import { CopyFinder, HashIndex, largestGroup, pairsAcrossGroups, pairsWithinGroups, type CopyGroups } from './copyGroups.js';
import { murmur3Words } from '../hash/murmur3.js';
import { resolveDedupOptions, type CandidateMethod, type DedupOptions, type DedupResult } from './options.js';
import { finishDedup } from './finish.js';
import { CANDIDATE_METHOD_VALUES, ENGINE_DEFAULTS } from '../engine/options.js';

export type { CandidateMethod } from './options.js';

/** The candidate methods, for option parsers. */
export const CANDIDATE_METHODS: readonly CandidateMethod[] = CANDIDATE_METHOD_VALUES;

/** Default number of sketch buckets (25 suits about 100 documents). */
export const DEFAULT_SKETCH_BUCKETS = ENGINE_DEFAULTS.buckets;

/**
 * Up to this many word shingles per document on average (estimated as characters / 6), `auto` picks
 * the exact join for Jaccard with word (or spot) shingles. Measured in CPU time against LSH in the
 * same minute (bench/RESULTS.md, "Exact join against LSH" and "Short documents"): word 3-shingles of
 * the Kijiji ads (~80 per ad) join 1.5–2.1× faster at t = 0.5–0.9, of 60,000 short generated
 * documents (~26 per document) 1.9–2.5× faster.
 */
export const AUTO_EXACT_MAX_SHINGLES = ENGINE_DEFAULTS.autoExactMaxShingles;

/**
 * Past this many characters of text `auto` keeps LSH: the join holds every fingerprint set at
 * once (about 12 bytes per shingle occurrence), while LSH holds one signature per document.
 */
export const AUTO_EXACT_MAX_CHARS = 200e6;

/**
 * The method `auto` resolves to: `exact` for containment (Jaccard-based candidates miss short
 * documents inside long ones), and for Jaccard with word or spot shingles when documents are short
 * (an estimated {@link AUTO_EXACT_MAX_SHINGLES} shingles or fewer: characters / 6) and the corpus
 * fits; else `lsh`. Char shingles always get LSH: how fast the join runs depends on how often the
 * shingles of the prefixes recur, not on length alone. The Kijiji titles (~55 char 5-shingles) join
 * 1.1–2.2× faster than LSH, but 60,000 generated documents of 90 characters, whose few syllables
 * make char 5-shingles recur across thousands of documents, join 4.9× slower at t = 0.5 (12 M
 * candidates against LSH's 126 k) and full ads with char 10-shingles 1.3–2.2× slower.
 */
export function autoCandidates(measure: SetMeasure, chars: number, docs: number, kind: ShingleKind = 'char'): 'lsh' | 'exact' {
  return autoChoice(measure, chars, docs, kind).method;
}

/** {@link autoCandidates} with the reason, one line, for the run's summary and `--json`. */
export function autoChoice(measure: SetMeasure, chars: number, docs: number, kind: ShingleKind = 'char'): { method: 'lsh' | 'exact'; reason: string } {
  if (measure === 'containment') return { method: 'exact', reason: 'containment: only the exact join finds short documents inside long ones' };
  if (kind === 'char')
    return { method: 'lsh', reason: 'char shingles: the join measured up to 4.9× slower than LSH where shingles recur across many documents' };
  const perDoc = chars / Math.max(1, docs) / 6;
  if (chars > AUTO_EXACT_MAX_CHARS)
    return { method: 'lsh', reason: `${(chars / 1e6).toFixed(0)} M characters: over ${AUTO_EXACT_MAX_CHARS / 1e6} M the join's sets take too much memory` };
  if (perDoc > AUTO_EXACT_MAX_SHINGLES)
    return { method: 'lsh', reason: `~${perDoc.toFixed(0)} ${kind} shingles per document: over ${AUTO_EXACT_MAX_SHINGLES} LSH is the measured faster route` };
  return { method: 'exact', reason: `~${perDoc.toFixed(0)} ${kind} shingles per document: the join is exact and measured 1.5–2.5× faster than LSH there` };
}

/** True when `options` ask for something only {@link dedupKinds} does. */
export function needsKinds(options: DedupOptions): boolean {
  return (
    (options.candidates !== undefined && options.candidates !== 'lsh')
    || (options.measure !== undefined && options.measure !== 'jaccard')
    || (options.clusters !== undefined && options.clusters !== 'components')
    || (options.representative !== undefined && options.representative !== 'first')
    || (options.fingerprintBits !== undefined && options.fingerprintBits !== 32)
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
  // Containment defaults to the exact join, as the CLI's --measure containment does: Jaccard-based
  // candidates miss short documents inside long ones.
  const requested = options.candidates ?? (measure === 'containment' ? 'exact' : 'lsh');
  if (!CANDIDATE_METHODS.includes(requested))
    throw new RangeError(`unknown candidate method "${String(requested)}" (expected ${CANDIDATE_METHODS.join(', ')})`);
  const list = Array.isArray(texts) ? (texts as string[]) : [...texts];
  let chars = 0;
  for (const t of list) chars += t.length;
  const method = requested === 'auto' ? autoCandidates(measure, chars, list.length, options.shingle?.kind) : requested;
  const bits = options.fingerprintBits ?? 32;
  if (bits !== 32 && bits !== 64) throw new RangeError(`fingerprintBits must be 32 or 64, got ${String(bits)}`);
  if (bits === 64 && method !== 'exact')
    throw new RangeError(`64-bit fingerprints need exact candidates (candidates: 'exact'): ${method} works on 32-bit fingerprints`);
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
    result = dedupBySets(list, { ...options, pairs: recluster || keepPairs }, { method, measure, threshold, maxPairs, chars });
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

/**
 * Candidates from the sets (exact join or sketch), scored exactly, then {@link finishDedup}.
 * Documents with identical sets are collapsed first (as `dedup` does for LSH): a group of m copies
 * costs one set in the join, and with `pairs: false` O(m) memory, not m(m−1)/2 pairs.
 */
function dedupBySets(
  texts: string[],
  options: DedupOptions,
  how: { method: 'exact' | 'sketch'; measure: SetMeasure; threshold: number; maxPairs: number; chars: number },
): DedupResult {
  const { method, measure, threshold, maxPairs, chars } = how;
  const t0 = performance.now();
  const signer = createTextSigner({ shingle: options.shingle, minhash: options.minhash });
  const wide = options.fingerprintBits === 64;
  const set64 = wide ? createSet64(options.shingle) : undefined;
  // Per group of identical documents: its set (32- or 64-bit) and, for hashing, its 32-bit words.
  const sets: Uint32Array[] = [];
  const sets64: BigUint64Array[] = [];
  const wordsOf = (g: number): Uint32Array => (wide ? new Uint32Array(sets64[g]!.buffer, sets64[g]!.byteOffset, sets64[g]!.length * 2) : sets[g]!);
  const copies = new CopyFinder(texts.length);
  const bySet = new HashIndex(texts.length);
  const empty: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    let words: Uint32Array;
    let s32: Uint32Array | undefined;
    let s64: BigUint64Array | undefined;
    if (wide) {
      s64 = set64!(texts[i]!);
      words = new Uint32Array(s64.buffer, s64.byteOffset, s64.length * 2);
    } else words = s32 = signer.set(texts[i]!);
    if (words.length === 0) empty.push(i);
    const h = murmur3Words(words, GROUP_SEED);
    const g = words.length === 0 ? -1 : bySet.find(h, (x) => sameWords(wordsOf(x), words));
    if (g >= 0) copies.join(g);
    else {
      const ng = copies.startGroup();
      if (wide) sets64[ng] = s64!;
      else sets[ng] = s32!;
      if (words.length > 0) bySet.insert(h, ng);
    }
    if (options.onProgress && (i & 1023) === 0) options.onProgress('sign', i, texts.length);
  }
  const groups = copies.result();
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
  // Candidates counted per document pair, as for LSH.
  cstats.candidates += pairsWithinGroups(groups);
  // The banding is reported for the record only: no band was used.
  const bands = chooseBands(threshold, signer.numPerm, options.lsh);
  const keepPairs = options.pairs ?? true;
  if (measure === 'containment' && keepPairs && groups.groups < groups.n) {
    // expandPairs orders each pair (a < b); containment keeps the contained document first.
    const count = pairsWithinGroups(groups) + pairsAcrossGroups(groups, pairs.length, (p) => pairs[p]!.a, (p) => pairs[p]!.b);
    if (count > maxPairs) throw new TooManyPairsError('pairs', count, maxPairs, largestGroup(groups));
    const sizeOf = (g: number): number => (wide ? sets64[g]!.length : sets[g]!.length);
    const docPairs = expandDirected(groups, pairs, sizeOf);
    const run = { n: texts.length, pairs: docPairs, empty, bands, chars, cstats, keepPairs: true, maxPairs };
    const r = finishDedup(run, { t0, t1, t2, shingle: t1 - t0, sign: 0 });
    r.stats.copies = groups.n - groups.groups;
    return r;
  }
  const run = { n: texts.length, pairs, empty, bands, chars, cstats, groups, keepPairs, maxPairs };
  return finishDedup(run, { t0, t1, t2, shingle: t1 - t0, sign: 0 });
}

/** Seed of the set hashes that find identical documents. */
const GROUP_SEED = 0x6b1d5e7f;

/** Equal word arrays. */
function sameWords(x: Uint32Array, y: Uint32Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * Containment pairs between groups expanded to documents, keeping the contained side first (on
 * equal set sizes the lower document index first), plus similarity-1 pairs within each group.
 */
function expandDirected(groups: CopyGroups, groupPairs: readonly ScoredPair[], sizeOf: (g: number) => number): ScoredPair[] {
  const { start, members } = groups;
  const out: ScoredPair[] = [];
  for (let g = 0; g < groups.groups; g++) {
    for (let i = start[g]!; i < start[g + 1]!; i++) for (let j = i + 1; j < start[g + 1]!; j++) out.push({ a: members[i]!, b: members[j]!, similarity: 1 });
  }
  for (const p of groupPairs) {
    const tie = sizeOf(p.a) === sizeOf(p.b);
    for (let i = start[p.a]!; i < start[p.a + 1]!; i++) {
      const x = members[i]!;
      for (let j = start[p.b]!; j < start[p.b + 1]!; j++) {
        const y = members[j]!;
        out.push(tie && y < x ? { a: y, b: x, similarity: p.similarity } : { a: x, b: y, similarity: p.similarity });
      }
    }
  }
  return out;
}
