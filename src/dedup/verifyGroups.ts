/**
 * The middle steps of the batch pipeline ({@link dedup}): LSH candidates among the signed groups,
 * and their verification (exact Jaccard, the MinHash estimate, or none). Past `maxPairs` candidate
 * pairs, when only clusters are asked for, both run bucket by bucket instead.
 * @module
 */
import type { BandChoice } from '../lsh/params.js';
import { bandKeyMatrix, candidatesFromBuckets, collectSharedBuckets, emptyCandidateStats, type CandidateStats } from '../lsh/candidates.js';
import { ProbeTable, probeJaccardAtLeast } from '../similarity/probeSet.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import { clusterBucketwise } from './bucketwise.js';
import { pairsAcrossGroups, pairsWithinGroups, type CopyGroups } from './copyGroups.js';
import type { SignedGroups } from './signedGroups.js';
import type { DedupOptions, VerifyMode } from './options.js';

/** What {@link verifyGroups} reads besides the signed groups. */
export interface VerifyGroupsOptions {
  threshold: number;
  verify: VerifyMode;
  bands: BandChoice;
  groups: CopyGroups;
  keepPairs: boolean;
  maxPairs: number;
  /** Past `maxPairs` candidates without `keepPairs`, cluster bucket by bucket (the cluster removal rule only: it skips pairs). */
  bucketwise?: boolean;
  onProgress: DedupOptions['onProgress'];
}

/** The verified pairs between groups, candidate counters, and when the candidates were done. */
export interface VerifiedGroups {
  pairs: ScoredPair[];
  cstats: CandidateStats;
  counts: 'all' | 'verified';
  /** performance.now() when the candidates were listed (bucket-wise: when signing ended, so LSH and verification count as verification). */
  t2: number;
  /** `signed.shingleMs` at t2: sets built after it count as shingling, not verification. */
  shingledAtT2: number;
}

/** LSH candidates among the groups of `signed`, verified. `t1`: when signing ended. */
export function verifyGroups(signed: SignedGroups, o: VerifyGroupsOptions, t1: number): VerifiedGroups {
  const { threshold, verify, bands, groups, onProgress } = o;
  const sigs = signed.sigs;
  const u = sigs.count;
  const shingledAtT1 = signed.shingleMs;
  const keys = bandKeyMatrix(sigs, bands.bands, bands.rows);
  // Exact scores probe b's set against a's, loaded into the table once for consecutive pairs of a.
  const scoreTable = new ProbeTable();
  let loaded = -1;
  /** The similarity a verified pair is kept with, or -1 when it is not a near duplicate. */
  const score = (a: number, b: number): number => {
    if (verify === 'exact') {
      if (loaded !== a) {
        scoreTable.load(signed.setOf(a));
        loaded = a;
      }
      return probeJaccardAtLeast(scoreTable, signed.setOf(b), threshold);
    }
    const e = sigs.estimate(a, b);
    return verify === 'none' || e >= threshold ? e : -1;
  };
  const pairs: ScoredPair[] = [];
  const buckets = collectSharedBuckets(keys);
  if (!o.keepPairs && o.bucketwise && buckets.bound > o.maxPairs) {
    // Too many candidate pairs to hold, and only clusters are asked for: verify bucket by bucket and
    // skip pairs whose documents are already in one cluster (they cannot change the clusters).
    const cstats = emptyCandidateStats();
    const verified = clusterBucketwise(keys, cstats, { score, kept: (a, b, s) => pairs.push({ a, b, similarity: s }), onProgress });
    cstats.candidates = verified;
    return { pairs, cstats, counts: 'verified', t2: t1, shingledAtT2: shingledAtT1 };
  }
  const { pairs: cand, stats: cstats } = candidatesFromBuckets(buckets, u, o.maxPairs);
  const t2 = performance.now();
  const shingledAtT2 = signed.shingleMs;
  // Pairs taken in order of their first member, so each first member's set is loaded once.
  const order = orderByFirst(cand.a, cand.size, u);
  for (let k = 0; k < cand.size; k++) {
    const p = order[k]!;
    const s = score(cand.a[p]!, cand.b[p]!);
    if (s >= 0) pairs.push({ a: cand.a[p]!, b: cand.b[p]!, similarity: s });
    if (onProgress && (k & 65535) === 0) onProgress('verify', k, cand.size);
  }
  // Candidates counted per document pair, as a run without grouping would count them.
  cstats.candidates = pairsWithinGroups(groups) + pairsAcrossGroups(groups, cand.size, (p) => cand.a[p]!, (p) => cand.b[p]!);
  return { pairs, cstats, counts: 'all', t2, shingledAtT2 };
}

/** Pair indices 0..count−1 ordered by their first member `a[p]` (< n), stable: a counting sort. */
function orderByFirst(a: Int32Array, count: number, n: number): Int32Array {
  const start = new Int32Array(n + 1);
  for (let p = 0; p < count; p++) start[a[p]! + 1]!++;
  for (let d = 0; d < n; d++) start[d + 1]! += start[d]!;
  const order = new Int32Array(count);
  for (let p = 0; p < count; p++) order[start[a[p]!]!++] = p;
  return order;
}
