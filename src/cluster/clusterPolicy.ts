/**
 * How near-duplicate pairs become clusters, and which member stands for each cluster.
 *
 * Near duplication is not transitive: a ~ b and b ~ c do not make a ~ c, and connected
 * components can chain documents that have little in common end to end. `centre` clusters keep
 * every member within the threshold of one centre document instead.
 * @module
 */
import type { ScoredPair } from '../similarity/bruteForce.js';
import { clusterPairs, type Cluster } from './clusters.js';
import { CLUSTER_MODE_VALUES, REPRESENTATIVE_VALUES } from '../engine/options.js';
import type { ClusterMode, RepresentativePolicy } from '../engine/config.js';
export type { ClusterMode, RepresentativePolicy } from '../engine/config.js';

/** The cluster modes, for option parsers. */
export const CLUSTER_MODES: readonly ClusterMode[] = CLUSTER_MODE_VALUES;
/** The representative policies, for option parsers. */
export const REPRESENTATIVE_POLICIES: readonly RepresentativePolicy[] = REPRESENTATIVE_VALUES;

/** Options of {@link clusterWithPolicy}. */
export interface ClusterPolicyOptions {
  /** Default `components`. */
  mode?: ClusterMode;
  /** Default `first`. */
  representative?: RepresentativePolicy;
  /** Length of document i (for `longest`): its text length in characters. */
  lengthOf?: (i: number) => number;
}

/** Checks a cluster mode and representative policy; throws a RangeError naming the bad value. */
export function checkClusterPolicy(mode: string | undefined, representative: string | undefined): void {
  if (mode !== undefined && !CLUSTER_MODES.includes(mode as ClusterMode))
    throw new RangeError(`unknown cluster mode "${mode}" (expected ${CLUSTER_MODES.join(' or ')})`);
  if (representative !== undefined && !REPRESENTATIVE_POLICIES.includes(representative as RepresentativePolicy)) {
    throw new RangeError(`unknown representative policy "${representative}" (expected ${REPRESENTATIVE_POLICIES.join(', ')})`);
  }
}

/**
 * Clusters of n documents from their near-duplicate pairs under a policy. Clusters have size ≥ 2,
 * are sorted by id (their smallest member), members ascending, and carry `representative`.
 * `clusterOf[i]` is the id of i's cluster, or i when it is in none.
 */
export function clusterWithPolicy(n: number, pairs: readonly ScoredPair[], options: ClusterPolicyOptions = {}): { clusters: Cluster[]; clusterOf: Int32Array } {
  const mode = options.mode ?? 'components';
  const policy = options.representative ?? 'first';
  checkClusterPolicy(mode, policy);
  if (policy === 'longest' && !options.lengthOf) throw new RangeError('the longest representative needs the document lengths');
  const adj = policy === 'central' || mode === 'centre' ? adjacency(n, pairs) : undefined;
  let clusters: Cluster[];
  let clusterOf: Int32Array;
  const centres = new Map<number, number>();
  if (mode === 'components') ({ clusters, clusterOf } = clusterPairs(n, pairs));
  else ({ clusters, clusterOf } = starClusters(n, adj!, centres));
  const graph = { lengthOf: options.lengthOf, adj };
  for (const c of clusters) c.representative = pick(c, policy, graph, centres.get(c.id));
  return { clusters, clusterOf };
}

/** The pair graph as CSR adjacency: neighbours of i at [start[i], start[i+1]) with their similarity. */
interface Adjacency {
  start: Int32Array;
  nbr: Int32Array;
  sim: Float64Array;
}

function adjacency(n: number, pairs: readonly ScoredPair[]): Adjacency {
  const start = new Int32Array(n + 1);
  for (const p of pairs) {
    start[p.a + 1]!++;
    start[p.b + 1]!++;
  }
  for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
  const fill = start.slice(0, n);
  const nbr = new Int32Array(start[n]!);
  const sim = new Float64Array(start[n]!);
  for (const p of pairs) {
    let q = fill[p.a]!++;
    nbr[q] = p.b;
    sim[q] = p.similarity;
    q = fill[p.b]!++;
    nbr[q] = p.a;
    sim[q] = p.similarity;
  }
  return { start, nbr, sim };
}

/**
 * Greedy star clustering: documents by decreasing degree (ties: lower index); an unassigned one
 * with at least one unassigned neighbour becomes a centre and takes those neighbours. Records each
 * cluster's centre in `centres` (cluster id → centre).
 */
function starClusters(n: number, adj: Adjacency, centres: Map<number, number>): { clusters: Cluster[]; clusterOf: Int32Array } {
  const { start, nbr } = adj;
  const order: number[] = [];
  for (let i = 0; i < n; i++) if (start[i + 1]! > start[i]!) order.push(i);
  order.sort((x, y) => start[y + 1]! - start[y]! - (start[x + 1]! - start[x]!) || x - y);
  const clusterOf = new Int32Array(n);
  for (let i = 0; i < n; i++) clusterOf[i] = i;
  const assigned = new Uint8Array(n);
  const clusters: Cluster[] = [];
  for (const c of order) {
    if (assigned[c]) continue;
    const members = [c];
    for (let q = start[c]!; q < start[c + 1]!; q++) {
      const j = nbr[q]!;
      if (!assigned[j]) members.push(j);
    }
    if (members.length < 2) continue;
    members.sort((x, y) => x - y);
    for (const m of members) {
      assigned[m] = 1;
      clusterOf[m] = members[0]!;
    }
    centres.set(members[0]!, c);
    clusters.push({ id: members[0]!, members });
  }
  clusters.sort((x, y) => x.id - y.id);
  return { clusters, clusterOf };
}

/** The representative of one cluster under `policy`: by the documents' lengths, the graph's similarities, or the star's `centre`. */
function pick(c: Cluster, policy: RepresentativePolicy, graph: { lengthOf?: (i: number) => number; adj?: Adjacency }, centre: number | undefined): number {
  const { lengthOf, adj } = graph;
  if (policy === 'first') return c.members[0]!;
  if (policy === 'longest') {
    let best = c.members[0]!;
    let bestLen = lengthOf!(best);
    for (const m of c.members) {
      const l = lengthOf!(m);
      if (l > bestLen) {
        best = m;
        bestLen = l;
      }
    }
    return best;
  }
  if (centre !== undefined) return centre;
  // Most central: the highest sum of similarities to the other members (ties: the lower index).
  const inCluster = new Set(c.members);
  let best = c.members[0]!;
  let bestSum = -1;
  for (const m of c.members) {
    let sum = 0;
    for (let q = adj!.start[m]!; q < adj!.start[m + 1]!; q++) if (inCluster.has(adj!.nbr[q]!)) sum += adj!.sim[q]!;
    if (sum > bestSum + 1e-12) {
      best = m;
      bestSum = sum;
    }
  }
  return best;
}
