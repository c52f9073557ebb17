/**
 * The batch pipeline: shingle → sign → LSH candidates → verify → cluster.
 * @module
 */
import type { ShingleOptions } from '../text/shingler.js';
import { createTextSigner } from '../sketch/textSigner.js';
import type { MinHashOptions } from '../sketch/minhash.js';
import { SignatureMatrix } from '../sketch/signatureMatrix.js';
import { chooseBands, type BandChoice, type ChooseBandsOptions } from '../lsh/params.js';
import { lshCandidates, type CandidateStats } from '../lsh/candidates.js';
import { jaccard } from '../similarity/jaccard.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import { clusterPairs, type Cluster } from './clusters.js';

/** How candidate pairs are checked. */
export type VerifyMode = 'exact' | 'estimate' | 'none';

/** Options of {@link dedup}. Every field has a default. */
export interface DedupOptions {
  /** Jaccard threshold: pairs at or above it are near duplicates. Default 0.8. */
  threshold?: number;
  /** Shingling (kind `char`, k 5, default normalization, seed 0). */
  shingle?: ShingleOptions;
  /** MinHash (method `oph`, numPerm 128, seed 1). */
  minhash?: MinHashOptions;
  /** Banding: by default the fewest false candidates with P(threshold) ≥ 0.99. */
  lsh?: ChooseBandsOptions;
  /**
   * `exact` (default): keep candidates whose exact Jaccard of fingerprint sets is ≥ threshold.
   * `estimate`: keep candidates whose signature agreement is ≥ threshold. `none`: keep all candidates.
   */
  verify?: VerifyMode;
  /** Called with (stage, done, total) during long stages. */
  onProgress?: (stage: 'sign' | 'verify', done: number, total: number) => void;
}

/** Counters and timings of a {@link dedup} run. Times in milliseconds. */
export interface DedupStats {
  /** Documents read. */
  docs: number;
  /** Documents without shingles (never candidates). */
  emptyDocs: number;
  /** UTF-16 code units of text processed. */
  chars: number;
  /** Distinct candidate pairs from LSH. */
  candidates: number;
  /** Pairs kept after verification. */
  pairs: number;
  /** Clusters of size ≥ 2. */
  clusters: number;
  /** LSH bucket counters. */
  buckets: Omit<CandidateStats, 'candidates'>;
  /** Time per stage. */
  timings: { shingle: number; sign: number; lsh: number; verify: number; cluster: number; total: number };
}

/** The result of {@link dedup}. */
export interface DedupResult {
  /** Verified pairs (a < b), sorted by (a, b). `similarity` is exact Jaccard unless verify is `estimate` or `none`. */
  pairs: ScoredPair[];
  /** Clusters of size ≥ 2, sorted by id. */
  clusters: Cluster[];
  /** Cluster id of each document (its own index when it has no near duplicate). */
  clusterOf: Int32Array;
  /** Indices of documents without shingles. */
  empty: number[];
  /** The banding used, with its expected recall. */
  bands: BandChoice;
  /** Counters and timings. */
  stats: DedupStats;
}

/** Resolved defaults, exported so the CLI and docs can show them. */
export const DEDUP_DEFAULTS = { threshold: 0.8, verify: 'exact' as VerifyMode };

/**
 * The threshold and verify mode of `options` with defaults filled in; throws a RangeError for invalid
 * values. Shared by {@link dedup} and `dedupStream`.
 */
export function resolveDedupOptions(options: DedupOptions): { threshold: number; verify: VerifyMode } {
  const threshold = options.threshold ?? DEDUP_DEFAULTS.threshold;
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${threshold}`);
  const verify = options.verify ?? DEDUP_DEFAULTS.verify;
  if (verify !== 'exact' && verify !== 'estimate' && verify !== 'none') {
    throw new RangeError(`unknown verify mode "${String(verify)}" (expected exact, estimate or none)`);
  }
  return { threshold, verify };
}

/**
 * Finds the near-duplicate pairs and clusters of a corpus. Document i is the i-th text.
 * Deterministic: the same texts and options give the same output.
 */
export function dedup(texts: Iterable<string>, options: DedupOptions = {}): DedupResult {
  const t0 = performance.now();
  const { threshold, verify } = resolveDedupOptions(options);
  // The fused signer gives the same sets and signatures as createShingler + createMinHasher, faster.
  const signer = createTextSigner({ shingle: options.shingle, minhash: options.minhash });
  const hasher = signer;
  const bands = chooseBands(threshold, hasher.numPerm, options.lsh);
  const sigs = new SignatureMatrix(hasher.numPerm, Array.isArray(texts) ? texts.length : 1024);
  const sets: Uint32Array[] = [];
  const empty: number[] = [];
  let chars = 0;
  let tShingle = 0;
  let tSign = 0;
  for (const text of texts) {
    const a = performance.now();
    const i = sigs.push();
    let b = a;
    if (verify === 'exact') {
      sets.push(signer.set(text));
      b = performance.now();
    }
    sigs.present[i] = signer.signInto(text, sigs.row(i)) ? 1 : 0;
    if (!sigs.present[i]) empty.push(i);
    tSign += performance.now() - b;
    tShingle += b - a;
    chars += text.length;
    if (options.onProgress && (i & 1023) === 0) options.onProgress('sign', i, 0);
  }
  const n = sigs.count;
  const t1 = performance.now();
  const { pairs: cand, stats: cstats } = lshCandidates(sigs, bands.bands, bands.rows);
  const t2 = performance.now();
  const pairs: ScoredPair[] = [];
  for (let p = 0; p < cand.size; p++) {
    const a = cand.a[p]!;
    const b = cand.b[p]!;
    if (verify === 'exact') {
      const s = jaccard(sets[a]!, sets[b]!);
      if (s >= threshold) pairs.push({ a, b, similarity: s });
    } else {
      const e = sigs.estimate(a, b);
      if (verify === 'none' || e >= threshold) pairs.push({ a, b, similarity: e });
    }
    if (options.onProgress && (p & 65535) === 0) options.onProgress('verify', p, cand.size);
  }
  return finishDedup({ n, pairs, empty, bands, chars, cstats }, { t0, t1, t2, shingle: tShingle, sign: tSign });
}

/**
 * The common tail of the batch pipelines: sorts the verified pairs, clusters them and assembles the
 * result with its counters and timings (t0 start, t1 signing done, t2 candidates done).
 */
export function finishDedup(
  run: { n: number; pairs: ScoredPair[]; empty: number[]; bands: BandChoice; chars: number; cstats: CandidateStats },
  times: { t0: number; t1: number; t2: number; shingle: number; sign: number },
): DedupResult {
  const { n, pairs, empty, bands, chars, cstats } = run;
  const { t0, t1, t2 } = times;
  pairs.sort((x, y) => x.a - y.a || x.b - y.b);
  const t3 = performance.now();
  const { clusters, clusterOf } = clusterPairs(n, pairs);
  const t4 = performance.now();
  const { candidates, ...buckets } = cstats;
  return {
    pairs,
    clusters,
    clusterOf,
    empty,
    bands,
    stats: {
      docs: n,
      emptyDocs: empty.length,
      chars,
      candidates,
      pairs: pairs.length,
      clusters: clusters.length,
      buckets,
      timings: { shingle: times.shingle, sign: times.sign, lsh: t2 - t1, verify: t3 - t2, cluster: t4 - t3, total: t4 - t0 },
    },
  };
}
