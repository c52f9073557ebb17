/**
 * The verified pairs a run found, kept beside its result for the removal decision (../cluster/removal.ts):
 * between copy groups when identical documents were folded, else between documents. Kept in a
 * WeakMap, not on the result, so the result's fields stay what they were (and are compared as such).
 * @module
 */
import type { DedupResult } from './options.js';
import { clusterRemoval, verifiedRemoval, type KeepRanking, type Removal, type RemovalRule, type UnitMembers, type UnitPairs } from '../cluster/removal.js';

/** The verified pairs of a run, between units (copy groups, or documents when `units` is absent). */
export interface VerifiedGraph {
  pairs: UnitPairs;
  units?: UnitMembers;
}

const graphs = new WeakMap<object, VerifiedGraph>();

/** Keeps `graph` for `result`. */
export function attachGraph(result: object, graph: VerifiedGraph): void {
  graphs.set(result, graph);
}

/** The verified pairs kept for `result`, if every one was kept (not after a bucket-wise clustering). */
export function graphOf(result: object): VerifiedGraph | undefined {
  return graphs.get(result);
}

/**
 * What `result`'s deduplicated copy drops under `rule`. The `verified` rule needs every verified
 * pair (a bucket-wise clustering does not list them: a RangeError says so); the `cluster` rule drops
 * every member of a cluster but its representative (every member with `ranking.none`).
 */
export function removalUnder(result: DedupResult, rule: RemovalRule, ranking: KeepRanking): Removal {
  const n = result.clusterOf.length;
  if (rule === 'cluster') {
    return clusterRemoval(n, result.clusters, (k) => (ranking.none ? -1 : (result.clusters[k]!.representative ?? result.clusters[k]!.members[0]!)));
  }
  const graph = graphOf(result);
  if (!graph)
    throw new RangeError(
      'the verified removal rule needs every verified pair, and this run clustered bucket by bucket without them (raise maxPairs, or choose removal: "cluster")',
    );
  return verifiedRemoval(n, graph.pairs, ranking, graph.units);
}

/** {@link removalUnder}, kept as `result.removal`. */
export function decideRemoval(result: DedupResult, rule: RemovalRule, ranking: KeepRanking): Removal {
  return (result.removal = removalUnder(result, rule, ranking));
}

/** What each removal rule drops, for a run's summary: the rule not chosen is counted too (undefined when it cannot be). */
export interface RemovalSummary {
  rule: RemovalRule;
  /** Documents the verified rule drops. */
  verifiedDrops?: number;
  /** Documents the cluster rule drops. */
  clusterDrops: number;
  /** Under the cluster rule: the largest cluster's size, and the lowest similarity of a dropped member to its survivor. */
  largestCluster?: number;
  lowestSimilarity?: number;
}

/** The {@link RemovalSummary} of `result`, whose `removal` was decided with `ranking`. */
export function summarizeRemoval(result: DedupResult, ranking: KeepRanking, lowestSimilarity?: number): RemovalSummary {
  const removal = result.removal!;
  let clusterDrops = 0;
  let largest = 0;
  for (const c of result.clusters) {
    clusterDrops += c.members.length - (ranking.none ? 0 : 1);
    largest = Math.max(largest, c.members.length);
  }
  if (removal.rule === 'verified') return { rule: 'verified', verifiedDrops: removal.dropped, clusterDrops };
  const verifiedDrops = graphOf(result) ? removalUnder(result, 'verified', ranking).dropped : undefined;
  return {
    rule: 'cluster',
    clusterDrops,
    ...(verifiedDrops !== undefined ? { verifiedDrops } : {}),
    largestCluster: largest,
    ...(lowestSimilarity !== undefined ? { lowestSimilarity } : {}),
  };
}

/** The summary line of the removal rules. */
export function removalLine(s: RemovalSummary): string {
  const count = (x: number | undefined): string => (x === undefined ? 'n/a' : x.toLocaleString('en-US'));
  if (s.rule === 'verified')
    return `removal     verified: ${count(s.verifiedDrops)} documents dropped, each a verified near duplicate of a kept one (--removal cluster would drop ${
      count(s.clusterDrops)
    })`;
  const low = s.lowestSimilarity === undefined ? '' : `, the lowest similarity of a dropped member to its kept one ${s.lowestSimilarity.toFixed(3)}`;
  return `removal     cluster: ${count(s.clusterDrops)} documents dropped, one kept per cluster (largest ${
    count(s.largestCluster)
  }${low}); --removal verified would drop ${count(s.verifiedDrops)}`;
}
