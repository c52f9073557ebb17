/**
 * The common tail of the batch pipelines: pairs sorted, clustered, counted and timed.
 * @module
 */
import type { BandChoice } from '../lsh/params.js';
import type { CandidateStats } from '../lsh/candidates.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import { TooManyPairsError } from '../lsh/tooManyPairs.js';
import { clusterPairs, componentsOf, UnionFind } from '../cluster/clusters.js';
import { clusterGroups, expandPairs, largestGroup, pairsAcrossGroups, pairsWithinGroups, type CopyGroups } from './copyGroups.js';
import type { DedupResult } from './options.js';
import { sortPairs } from '../similarity/sortPairs.js';
import { PairColumns, withLazyPairs } from './pairColumns.js';
import { RecallAccumulator, type RecallEstimate } from '../lsh/recallEstimate.js';
import { attachGraph } from './verifiedGraph.js';

/**
 * The common tail of the batch pipelines: sorts the verified pairs, clusters them and assembles the
 * result with its counters and timings (t0 start, t1 signing done, t2 candidates done;
 * `shingleAfterT2`: time after t2 spent building sets, counted as shingling). With
 * `groups`, the pairs are between groups of identical documents and are expanded to documents here.
 */
export function finishDedup(
  run: {
    n: number;
    /** Verified pairs, as objects or in columns (the result's `pairs` is then made when read). */
    pairs: ScoredPair[] | PairColumns;
    empty: number[];
    bands: BandChoice;
    chars: number;
    cstats: CandidateStats;
    groups?: CopyGroups;
    keepPairs?: boolean;
    maxPairs?: number;
    /** `verified`: the pairs are those a bucket-wise clustering verified and kept; counted as they are. */
    counts?: 'all' | 'verified';
    /** Set when LSH bands found the candidates and they were verified exactly: estimate the run's recall (`stats.recall`). */
    estimateRecall?: boolean;
  },
  times: { t0: number; t1: number; t2: number; shingle: number; sign: number; shingleAfterT2?: number },
): DedupResult {
  const { n, groups } = run;
  const keepPairs = run.keepPairs ?? true;
  const maxPairs = run.maxPairs ?? Infinity;
  // Without copies every group is one document and group numbers are document numbers.
  const grouped = groups && groups.groups < n ? groups : undefined;
  if (run.pairs instanceof PairColumns && !grouped) return finishColumns(run, { columns: run.pairs, keepPairs, maxPairs }, times);
  let pairs = run.pairs instanceof PairColumns ? run.pairs.toPairs() : run.pairs;
  sortPairs(pairs);
  const counts = run.counts ?? 'all';
  const count = counts === 'verified' || !grouped
    ? pairs.length
    : pairsWithinGroups(grouped) + pairsAcrossGroups(grouped, pairs.length, (p) => pairs[p]!.a, (p) => pairs[p]!.b);
  const t3 = performance.now();
  const { clusters, clusterOf } = grouped ? clusterGroups(grouped, pairs) : clusterPairs(n, pairs);
  const docOf = (g: number): number => (grouped ? grouped.members[grouped.start[g]!]! : g);
  const recall = recallOf(run, {
    counts,
    count: pairs.length,
    similarity: (p) => pairs[p]!.similarity,
    cluster: (p) => clusterOf[docOf(pairs[p]!.a)]!,
    grouped,
    a: (p) => pairs[p]!.a,
    b: (p) => pairs[p]!.b,
  });
  if (keepPairs && count > maxPairs) throw new TooManyPairsError('pairs', count, maxPairs, grouped ? largestGroup(grouped) : 1);
  const unitPairs = pairs;
  if (!keepPairs) pairs = [];
  else if (grouped) pairs = expandPairs(grouped, pairs);
  const t4 = performance.now();
  const result: DedupResult = { pairs, clusters, clusterOf, ...rest(run, { count, clusterCount: clusters.length, counts, times, t3, t4, recall }) };
  // A bucket-wise clustering skipped pairs: the verified removal rule cannot run on what it kept.
  if (counts === 'all') {
    const m = unitPairs.length;
    const a = new Int32Array(m);
    const b = new Int32Array(m);
    const similarity = new Float64Array(m);
    for (let p = 0; p < m; p++) {
      a[p] = unitPairs[p]!.a;
      b[p] = unitPairs[p]!.b;
      similarity[p] = unitPairs[p]!.similarity;
    }
    attachGraph(result, { pairs: { units: grouped ? grouped.groups : n, count: m, a, b, similarity }, units: grouped });
  }
  return result;
}

/** {@link finishDedup} for pairs in columns between single documents: no object per pair is made here. */
function finishColumns(
  run: Parameters<typeof finishDedup>[0],
  pairs: { columns: PairColumns; keepPairs: boolean; maxPairs: number },
  times: Parameters<typeof finishDedup>[1],
): DedupResult {
  const { columns, keepPairs, maxPairs } = pairs;
  const { n } = run;
  columns.sort(n);
  const count = columns.size;
  const t3 = performance.now();
  const { a, b, similarity } = columns;
  const uf = new UnionFind(n);
  for (let i = 0; i < count; i++) uf.union(a[i]!, b[i]!);
  const { clusters, clusterOf } = componentsOf(uf, n);
  const recall = recallOf(run, { counts: run.counts ?? 'all', count, similarity: (p) => similarity[p]!, cluster: (p) => clusterOf[a[p]!]! });
  if (keepPairs && count > maxPairs) throw new TooManyPairsError('pairs', count, maxPairs, 1);
  const graph = { pairs: { units: n, count, a: a.subarray(0, count), b: b.subarray(0, count), similarity: similarity.subarray(0, count) } };
  if (!keepPairs) columns.size = 0;
  const t4 = performance.now();
  const result = withLazyPairs({
    clusters,
    clusterOf,
    ...rest(run, { count, clusterCount: clusters.length, counts: run.counts ?? 'all', times, t3, t4, recall }),
  }, columns);
  if ((run.counts ?? 'all') === 'all') attachGraph(result, graph);
  return result;
}

/** The verified pairs {@link recallOf} reads, by number p: with copy groups, `a`/`b` are group numbers. */
interface VerifiedView {
  counts: 'all' | 'verified';
  count: number;
  similarity: (p: number) => number;
  cluster: (p: number) => number;
  grouped?: CopyGroups | undefined;
  a?: (p: number) => number;
  b?: (p: number) => number;
}

/**
 * The run's estimated recall over its verified pairs (pair p of similarity(p); with copy groups, a
 * pair of groups stands for |a|·|b| document pairs found together, and pairs inside a group have
 * similarity 1); the pairs of one cluster are one unit of its standard error. Undefined unless LSH
 * found the candidates and every candidate pair was verified exactly (a bucket-wise clustering skips
 * pairs already in one cluster: its pairs are not all the found pairs).
 */
function recallOf(run: Parameters<typeof finishDedup>[0], pairs: VerifiedView): RecallEstimate | undefined {
  const { counts, count, similarity, cluster, grouped, a, b } = pairs;
  if (!run.estimateRecall || counts !== 'all') return undefined;
  // Cluster ids are document numbers: sum the units in an array of n.
  const acc = new RecallAccumulator(run.bands.bands, run.bands.rows, run.n);
  if (grouped) {
    const within = pairsWithinGroups(grouped);
    if (within > 0) acc.add(1, within);
  }
  const size = (g: number): number => grouped!.start[g + 1]! - grouped!.start[g]!;
  for (let p = 0; p < count; p++) acc.add(similarity(p), grouped ? size(a!(p)) * size(b!(p)) : 1, cluster(p));
  return acc.result();
}

/** What {@link rest} reports of a finished run: its pair and cluster counts, times and recall. */
interface RunTotals {
  count: number;
  clusterCount: number;
  counts: 'all' | 'verified';
  times: Parameters<typeof finishDedup>[1];
  /** When clustering started and ended. */
  t3: number;
  t4: number;
  recall: RecallEstimate | undefined;
}

/** The result's fields other than its pairs and clusters. */
function rest(run: Parameters<typeof finishDedup>[0], totals: RunTotals): Pick<DedupResult, 'empty' | 'bands' | 'stats'> {
  const { count, clusterCount, counts, times, t3, t4, recall } = totals;
  const { n, empty, bands, chars, cstats, groups } = run;
  const { t0, t1, t2 } = times;
  const { candidates, ...buckets } = cstats;
  return {
    empty,
    bands,
    stats: {
      docs: n,
      emptyDocs: empty.length,
      chars,
      candidates,
      pairs: count,
      clusters: clusterCount,
      copies: groups ? n - groups.groups : 0,
      counts,
      buckets,
      timings: { shingle: times.shingle, sign: times.sign, lsh: t2 - t1, verify: t3 - t2 - (times.shingleAfterT2 ?? 0), cluster: t4 - t3, total: t4 - t0 },
      ...(recall ? { recall } : {}),
    },
  };
}
