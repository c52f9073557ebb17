/**
 * The options, results and defaults of the batch pipeline, apart from its steps, so that every
 * pipeline (in memory, streaming, kinds, --against) shares them without importing one another.
 * @module
 */
import type { BandChoice } from '../lsh/params.js';
import type { EngineOptions, VerifyMode } from '../engine/config.js';
import { checkMaxPairs, checkThreshold, checkVerifyMode, ENGINE_DEFAULTS } from '../engine/options.js';
import type { CandidateStats } from '../lsh/candidates.js';
import type { RecallEstimate } from '../lsh/recallEstimate.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import type { SetMeasure } from '../similarity/prefixJoin.js';
import type { Cluster } from '../cluster/clusters.js';
import type { Removal } from '../cluster/removal.js';

export type { CandidateMethod, KeepCompare, VerifyMode } from '../engine/config.js';

/**
 * Options of {@link dedup}: the engine's options ({@link EngineOptions}, src/engine/config.ts, which
 * the index, sharded jobs and the CLI share), and what only the batch call returns. Every field has a default.
 */
export interface DedupOptions extends EngineOptions {
  /**
   * Return the verified pairs in `result.pairs` (default true). With false, `result.pairs` is empty
   * (`stats.pairs` still counts them) and the clusters are built without listing every pair: a group
   * of m identical documents then costs O(m) memory, not m(m−1)/2 pairs. For clusters or a
   * deduplicated copy.
   */
  pairs?: boolean;
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
