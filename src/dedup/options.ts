/**
 * The options, results and defaults of the batch pipeline, apart from its steps, so that every
 * pipeline (in memory, streaming, kinds, --against) shares them without importing one another.
 * @module
 */
import type { KeepPolicy } from '../cluster/keepPolicy.js';
import type { ShingleOptions } from '../text/shingler.js';
import type { MinHashOptions } from '../sketch/minhash.js';
import type { BandChoice, ChooseBandsOptions } from '../lsh/params.js';
import { checkMaxPairs, checkThreshold, checkVerifyMode, ENGINE_DEFAULTS } from '../engine/options.js';
import type { CandidateStats } from '../lsh/candidates.js';
import type { RecallEstimate } from '../lsh/recallEstimate.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import type { SetMeasure } from '../similarity/prefixJoin.js';
import type { Cluster } from '../cluster/clusters.js';
import type { ClusterMode, RepresentativePolicy } from '../cluster/clusterPolicy.js';
import type { Removal, RemovalRule } from '../cluster/removal.js';

/**
 * Where candidate pairs come from. `lsh` (default): MinHash banding. `exact`: a prefix-filtering
 * similarity join; every pair at or above the threshold, no misses. `sketch`: documents sharing a
 * bucket minimum of hashed shingles. `auto`: `exact` where it is exact and measured faster than LSH (`autoCandidates` in ./kinds.ts),
 * else `lsh`.
 */
export type CandidateMethod = 'lsh' | 'exact' | 'sketch' | 'auto';

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
  /**
   * Return the verified pairs in `result.pairs` (default true). With false, `result.pairs` is empty
   * (`stats.pairs` still counts them) and the clusters are built without listing every pair: a group
   * of m identical documents then costs O(m) memory, not m(m−1)/2 pairs. For clusters or a
   * deduplicated copy.
   */
  pairs?: boolean;
  /**
   * The most pairs held in memory: LSH candidate pairs among distinct documents, and the pairs
   * returned. Past it, {@link TooManyPairsError} is thrown (at ~40 bytes per pair, instead of
   * running out of memory). Default 50,000,000.
   */
  maxPairs?: number;
  /** Called with (stage, done, total) during long stages. */
  onProgress?: (stage: 'sign' | 'verify', done: number, total: number) => void;
  /**
   * `jaccard` (default) or `containment`: pairs where the smaller document is at least `threshold`
   * contained in the larger (|a ∩ b| / |a|, `a` the contained one). Containment takes `exact`
   * candidates by default (`auto` gives the same); `lsh` and `sketch` are refused.
   */
  measure?: SetMeasure;
  /** Where candidates come from: `lsh` (default; `exact` for containment), `exact` (prefix-filtering join), `sketch` (bucket minima), `auto`. */
  candidates?: CandidateMethod;
  /** Buckets of the `sketch` candidates. Default 25. */
  buckets?: number;
  /** `components` (default, transitive) or `centre` (every member a near duplicate of its cluster's centre; needs `removal: 'cluster'`). */
  clusters?: ClusterMode;
  /** Which member represents a cluster: `first` (default), `longest`, `central` (other than `first`: needs `removal: 'cluster'`). */
  representative?: RepresentativePolicy;
  /**
   * Which documents are dropped (`result.removal`). `verified` (default): documents in keep order,
   * each kept unless a kept document is its verified near duplicate, so every dropped document has a
   * kept one at ≥ the threshold. `cluster`: one member kept per cluster; removes more, but a dropped
   * member can be far from its survivor (near duplication is not transitive).
   */
  removal?: RemovalRule;
  /**
   * The order in which documents are preferred for keeping: `first` (default), `longest`,
   * `shortest`, `none`, `source` (as `first` here), `max:FIELD` / `min:FIELD` (records' fields, as
   * numbers or ISO dates), or a compare function over records (negative: `a` is preferred). Ties go
   * to the earlier document.
   */
  keep?: KeepPolicy | KeepCompare;
  /** Shingle fingerprint width for sets and verification: 32 (default) or 64 (needs `exact` candidates). */
  fingerprintBits?: 32 | 64;
}

/** Orders two records for keeping: negative when `a` is preferred, positive when `b` is, 0 for a tie (input order decides). */
export type KeepCompare = (a: { id: string; text: string; [field: string]: unknown }, b: { id: string; text: string; [field: string]: unknown }) => number;

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
  /**
   * Documents identical to an earlier one (same fingerprint set; same signature when verify is not
   * `exact`), handled as one document through LSH and verification.
   */
  copies: number;
  /**
   * `all`: `candidates` and `pairs` count every document pair. `verified`: with `pairs: false` and
   * more than `maxPairs` candidate pairs, clusters were built bucket by bucket, skipping pairs already
   * in one cluster; `candidates` then counts the verifications (a pair below the threshold is verified
   * in each band it shares a bucket in) and `pairs` the verified pairs that joined two clusters, among
   * distinct documents. The clusters are the same either way.
   */
  counts: 'all' | 'verified';
  /** LSH bucket counters (over distinct documents). */
  buckets: Omit<CandidateStats, 'candidates'>;
  /** Time per stage. */
  timings: { shingle: number; sign: number; lsh: number; verify: number; cluster: number; total: number };
  /** The candidate method that ran (set when `candidates` or another kind option was given; else LSH). */
  candidateMethod?: 'lsh' | 'exact' | 'sketch';
  /** Why `candidates: 'auto'` chose {@link candidateMethod} (set by the CLI's engine). */
  candidateReason?: string;
  /** The similarity measure (set with the kind options; else Jaccard). */
  measure?: SetMeasure;
  /**
   * The run's recall estimated from its verified pairs (Horvitz–Thompson over P(s) of the banding):
   * set only when LSH found the candidates, verification was exact and every candidate was verified.
   */
  recall?: RecallEstimate;
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
  /** What a deduplicated copy drops, and the kept document each dropped one duplicates (set by `dedup()` and the CLI). */
  removal?: Removal;
}

/** Resolved defaults, exported so the CLI and docs can show them. */
export const DEDUP_DEFAULTS = { threshold: ENGINE_DEFAULTS.threshold, verify: ENGINE_DEFAULTS.verify as VerifyMode, maxPairs: ENGINE_DEFAULTS.maxPairs };

/**
 * The threshold and verify mode of `options` with defaults filled in; throws a RangeError for invalid
 * values. Shared by {@link dedup} and `dedupStream`.
 */
export function resolveDedupOptions(options: DedupOptions): { threshold: number; verify: VerifyMode; keepPairs: boolean; maxPairs: number } {
  const threshold = options.threshold ?? DEDUP_DEFAULTS.threshold;
  checkThreshold(threshold);
  const verify = options.verify ?? DEDUP_DEFAULTS.verify;
  checkVerifyMode(verify);
  const maxPairs = options.maxPairs ?? DEDUP_DEFAULTS.maxPairs;
  checkMaxPairs(maxPairs);
  return { threshold, verify, keepPairs: options.pairs ?? true, maxPairs };
}
