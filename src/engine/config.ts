/**
 * The engine's options as the library takes them, defined once: {@link EngineOptions} and the types
 * of its fields (the kernels that take one, in cluster/, sketch/, lsh/ and similarity/, import them
 * from here and export them as before). `dedup()` takes them (with what only the batch call
 * returns, `DedupOptions`); `NearDupIndex` takes their threshold and shingling; a sharded job's plan
 * records them resolved; the CLI spells them as flat flags, built from the one table of
 * ./options.ts, which also holds every default and validator.
 * @module
 */
import type { ShingleOptions } from '../text/shingler.js';

/**
 * `components` (default): connected components of the pair graph (transitive closure).
 * `centre`: greedy star clustering; the unassigned document with the most unassigned near duplicates
 * becomes a centre and takes them all; repeat. Every member is a near duplicate of its centre, and
 * each document is in one cluster.
 */
export type ClusterMode = 'components' | 'centre';

/**
 * The member kept for a cluster (the one `--output dedup` keeps and `annotate` points to):
 * `first` (default): the lowest document index. `longest`: the longest text (ties: the lowest
 * index). `central`: the member with the highest sum of similarities to the other members (for
 * `centre` clusters, the centre).
 */
export type RepresentativePolicy = 'first' | 'longest' | 'central';

/** `verified` (default): drop a document only for a kept verified near duplicate. `cluster`: keep one member per cluster. */
export type RemovalRule = 'verified' | 'cluster';

/**
 * `first` (default): the first member in input order. `longest` / `shortest`: the text with the
 * most / fewest characters (UTF-16 code units of the text as read, as `--representative longest`
 * measures it). `max:FIELD` / `min:FIELD`: the largest / smallest value of a numeric field or
 * column, or of an ISO date (compared as a date). `none`: no member is kept. `source`: the member
 * from the earliest of several inputs (`neardup dedup A B C`: A wins), ties within an input to input
 * order; with one input it is `first`. Ties go to the member first in input order.
 */
export type KeepPolicy = 'first' | 'longest' | 'shortest' | 'none' | 'source' | `max:${string}` | `min:${string}`;

/** `classic`: numPerm independent hash permutations. `oph`: one permutation split into numPerm bins. */
export type MinHashMethod = 'classic' | 'oph';

/** Options of a MinHash signer (`createMinHasher`, src/sketch/minhash.ts). */
export interface MinHashOptions {
  /** Signature length (slots). Default 128. */
  numPerm?: number;
  /** Seed of the permutations; equal seeds give equal signatures. Default 1. */
  seed?: number;
  /** Default `oph`: as accurate as `classic` in the statistical tests, and O(n + k) per document. */
  method?: MinHashMethod;
}

/** Options of `chooseBands` (src/lsh/params.ts): how the banding is chosen. */
export interface ChooseBandsOptions {
  /**
   * Required P(threshold). Among the (b, r) that reach it, the one with the smallest false-positive
   * area wins. Default 0.99. Ignored when `weights` or explicit `bands`/`rows` are given.
   */
  minRecallAtThreshold?: number;
  /**
   * datasketch-style choice instead: minimise fp·FP-area + fn·FN-area over all b·r ≤ numPerm.
   * Weights need not sum to 1.
   */
  weights?: { fp: number; fn: number };
  /** Explicit number of bands; overrides both rules (rows default to ⌊numPerm / bands⌋). */
  bands?: number;
  /** Explicit rows per band; overrides both rules (bands default to ⌊numPerm / rows⌋). */
  rows?: number;
}

/** The similarity a join (or dedup) reports. */
export type SetMeasure = 'jaccard' | 'containment';

/**
 * Where candidate pairs come from. `lsh` (default): MinHash banding. `exact`: a prefix-filtering
 * similarity join; every pair at or above the threshold, no misses. `sketch`: documents sharing a
 * bucket minimum of hashed shingles. `auto`: `exact` where it is exact and measured faster than LSH
 * (`autoCandidates` in src/dedup/kinds.ts), else `lsh`.
 */
export type CandidateMethod = 'lsh' | 'exact' | 'sketch' | 'auto';

/** How candidate pairs are checked. */
export type VerifyMode = 'exact' | 'estimate' | 'none';

/** Orders two records for keeping: negative when `a` is preferred, positive when `b` is, 0 for a tie (input order decides). */
export type KeepCompare = (a: { id: string; text: string; [field: string]: unknown }, b: { id: string; text: string; [field: string]: unknown }) => number;

/**
 * The near-duplicate engine's options: what a near duplicate is (threshold, shingles, measure), how
 * candidates are found and checked (MinHash, banding, candidates, verify), and what is kept
 * (clusters, representative, removal, keep). Every field has a default (./options.ts,
 * `ENGINE_DEFAULTS`).
 */
export interface EngineOptions {
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
   * The most pairs held in memory: LSH candidate pairs among distinct documents, and the pairs
   * returned. Past it, {@link TooManyPairsError} is thrown (at ~40 bytes per pair, instead of
   * running out of memory). Default 50,000,000.
   */
  maxPairs?: number;
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
