/**
 * The common tail of the batch pipelines: pairs sorted, clustered, counted and timed.
 * @module
 */
import type { BandChoice } from '../lsh/params.js';
import type { CandidateStats } from '../lsh/candidates.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import { TooManyPairsError } from '../lsh/tooManyPairs.js';
import { clusterPairs } from './clusters.js';
import { clusterGroups, expandPairs, largestGroup, pairsAcrossGroups, pairsWithinGroups, type CopyGroups } from './copies.js';
import type { DedupResult } from './options.js';
import { sortPairs } from '../similarity/sortPairs.js';

/**
 * The common tail of the batch pipelines: sorts the verified pairs, clusters them and assembles the
 * result with its counters and timings (t0 start, t1 signing done, t2 candidates done;
 * `shingleAfterT2`: time after t2 spent building sets, counted as shingling). With
 * `groups`, the pairs are between groups of identical documents and are expanded to documents here.
 */
export function finishDedup(
  run: {
    n: number;
    pairs: ScoredPair[];
    empty: number[];
    bands: BandChoice;
    chars: number;
    cstats: CandidateStats;
    groups?: CopyGroups;
    keepPairs?: boolean;
    maxPairs?: number;
    /** `verified`: the pairs are those a bucket-wise clustering verified and kept; counted as they are. */
    counts?: 'all' | 'verified';
  },
  times: { t0: number; t1: number; t2: number; shingle: number; sign: number; shingleAfterT2?: number },
): DedupResult {
  const { n, empty, bands, chars, cstats, groups } = run;
  const keepPairs = run.keepPairs ?? true;
  const maxPairs = run.maxPairs ?? Infinity;
  const { t0, t1, t2 } = times;
  let pairs = run.pairs;
  sortPairs(pairs);
  // Without copies every group is one document and group numbers are document numbers.
  const grouped = groups && groups.groups < n ? groups : undefined;
  const counts = run.counts ?? 'all';
  const count =
    counts === 'verified' || !grouped
      ? pairs.length
      : pairsWithinGroups(grouped) + pairsAcrossGroups(grouped, pairs.length, (p) => pairs[p]!.a, (p) => pairs[p]!.b);
  const t3 = performance.now();
  const { clusters, clusterOf } = grouped ? clusterGroups(grouped, pairs) : clusterPairs(n, pairs);
  if (keepPairs && count > maxPairs) throw new TooManyPairsError('pairs', count, maxPairs, grouped ? largestGroup(grouped) : 1);
  if (!keepPairs) pairs = [];
  else if (grouped) pairs = expandPairs(grouped, pairs);
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
      pairs: count,
      clusters: clusters.length,
      copies: groups ? n - groups.groups : 0,
      counts,
      buckets,
      timings: { shingle: times.shingle, sign: times.sign, lsh: t2 - t1, verify: t3 - t2 - (times.shingleAfterT2 ?? 0), cluster: t4 - t3, total: t4 - t0 },
    },
  };
}
