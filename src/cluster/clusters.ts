/**
 * Grouping verified pairs into clusters with union-find.
 * @module
 */
import { radixOrder } from '../lsh/radixOrder.js';

/** A group of near-duplicate documents. */
export interface Cluster {
  /** The cluster id: the smallest document index in it. */
  id: number;
  /** Member document indices, ascending (the first is the id). */
  members: number[];
  /**
   * The member kept for the cluster by `--output dedup` and pointed to by `annotate`, when a
   * representative policy chose one (see `clusterPolicy.ts`); otherwise the first member.
   */
  representative?: number;
}

/** Union-find over 0..n-1 with path halving and union by smallest root (the root is the minimum). */
export class UnionFind {
  private parent: Int32Array;

  constructor(n: number) {
    this.parent = new Int32Array(n);
    for (let i = 0; i < n; i++) this.parent[i] = i;
  }

  /** The root (smallest member) of x's group. */
  find(x: number): number {
    const p = this.parent;
    while (p[x] !== x) {
      p[x] = p[p[x]!]!;
      x = p[x]!;
    }
    return x;
  }

  /** Joins the groups of a and b; the smaller root becomes the root. */
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra < rb) this.parent[rb] = ra;
    else if (rb < ra) this.parent[ra] = rb;
  }
}

/**
 * Clusters of the graph on n documents whose edges are the given pairs: connected components of
 * size ≥ 2, sorted by id, members ascending. Also returns each document's cluster id (its own index
 * when it is in no pair).
 */
export function clusterPairs(n: number, pairs: Iterable<{ a: number; b: number }>): { clusters: Cluster[]; clusterOf: Int32Array } {
  const uf = new UnionFind(n);
  for (const p of pairs) uf.union(p.a, p.b);
  return componentsOf(uf, n);
}

/**
 * The groups of `uf` over 0..n-1 as clusters (size ≥ 2, sorted by id) and each document's cluster
 * id. Counting passes over typed arrays: a Map of member lists by root, sorted afterwards, was most
 * of the cluster stage on a million documents (issue #14).
 */
export function componentsOf(uf: UnionFind, n: number): { clusters: Cluster[]; clusterOf: Int32Array } {
  const clusterOf = new Int32Array(n);
  const size = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const r = uf.find(i);
    clusterOf[i] = r;
    size[r]!++;
  }
  // Each root of a group of two or more gets the next cluster number: in root order, which is id
  // order. Going through the documents in order then fills every group in ascending order.
  const number = size;
  const clusters: Cluster[] = [];
  for (let r = 0; r < n; r++) {
    if (size[r]! >= 2) {
      number[r] = clusters.length;
      clusters.push({ id: r, members: [] });
    } else number[r] = -1;
  }
  for (let i = 0; i < n; i++) {
    const k = number[clusterOf[i]!]!;
    if (k >= 0) clusters[k]!.members.push(i);
  }
  return { clusters, clusterOf };
}

/** Clusters of a graph given by its edges between document numbers (see {@link clustersOfPairs}). */
export interface SparseClusters {
  /** The documents in some pair (the clustered documents), ascending. */
  docs: Float64Array;
  /** Cluster k's members are `docs[order[start[k]]], …` up to start[k + 1], ascending; clusters in id (smallest member) order. */
  order: Int32Array;
  start: Int32Array;
}

/**
 * The clusters of the graph whose edges are pairs (a[i], b[i]), i < count, of document numbers
 * (any integers below 2^53): union-find over the documents that are in some pair only, so memory
 * grows with the clustered documents, never with the corpus: ~20 bytes per clustered document
 * besides the pairs (16 B each), and 40 B per pair more while their ends are sorted (a radix sort
 * when every number is below 2^32, else a binary search per end). The same clusters, in the same
 * order, as {@link clusterPairs} over all documents. When `pairCluster` is given, pair i's cluster
 * is written to `pairCluster[i]`.
 */
export function clustersOfPairs(a: Float64Array, b: Float64Array, count: number, pairCluster?: Int32Array): SparseClusters {
  const { docs, end } = compactEnds(a, b, count);
  const { order, start, clusterOf } = clustersOfUnions(docs.length, (union) => {
    for (let i = 0; i < count; i++) union(end(i), end(count + i));
  });
  if (pairCluster) { for (let i = 0; i < count; i++) pairCluster[i] = clusterOf[end(i)]!; }
  return { docs, order, start };
}

/** Clusters of a graph over positions 0 … P − 1 (see {@link clustersOfUnions}). */
export interface PositionClusters {
  /** Cluster k's members are positions `order[start[k]], …` up to start[k + 1], ascending; clusters in smallest-member order. */
  order: Int32Array;
  start: Int32Array;
  /** Each position's cluster. */
  clusterOf: Int32Array;
}

/**
 * The clusters of the graph over positions 0 … P − 1 whose edges `feed` gives to `union`, in any
 * order (edges need not be held together: they may be read a chunk at a time): what
 * {@link clustersOfPairs} gives once the ends are positions, with no memory per edge.
 */
export function clustersOfUnions(P: number, feed: (union: (x: number, y: number) => void) => void): PositionClusters {
  const uf = new UnionFind(P);
  feed((x, y) => uf.union(x, y));
  // Roots are the smallest members: numbered when first met, clusters come in id order.
  const number = new Int32Array(P);
  let clusters = 0;
  for (let p = 0; p < P; p++) {
    const r = uf.find(p);
    number[p] = r === p ? clusters++ : number[r]!;
  }
  const start = new Int32Array(clusters + 1);
  for (let p = 0; p < P; p++) start[number[p]! + 1]!++;
  for (let k = 0; k < clusters; k++) start[k + 1]! += start[k]!;
  const fill = start.slice(0, clusters);
  const order = new Int32Array(P);
  for (let p = 0; p < P; p++) order[fill[number[p]!]!++] = p;
  return { order, start, clusterOf: number };
}

/**
 * The distinct documents of the pairs' ends, ascending, and each end's position among them (end j
 * is a[j] for j < count, else b[j − count]).
 */
function compactEnds(a: Float64Array, b: Float64Array, count: number): { docs: Float64Array; end: (j: number) => number } {
  const m = 2 * count;
  let small = true;
  for (let i = 0; i < count && small; i++) small = a[i]! < 4294967296 && b[i]! < 4294967296;
  if (small) {
    // A radix sort of the ends: random binary searches over 10^7 documents were most of the time on 10^8.
    const key = new Uint32Array(m);
    for (let i = 0; i < count; i++) {
      key[i] = a[i]!;
      key[count + i] = b[i]!;
    }
    const order = radixOrder(key);
    const comp = new Int32Array(m);
    const distinct = new Uint32Array(m);
    let P = 0;
    for (let j = 0; j < m; j++) {
      const v = key[order[j]!]!;
      if (P === 0 || v !== distinct[P - 1]) distinct[P++] = v;
      comp[order[j]!] = P - 1;
    }
    return { docs: Float64Array.from(distinct.subarray(0, P)), end: (j) => comp[j]! };
  }
  const ends = new Float64Array(m);
  ends.set(a.subarray(0, count));
  ends.set(b.subarray(0, count), count);
  ends.sort();
  let P = 0;
  for (let i = 0; i < m; i++) if (i === 0 || ends[i] !== ends[i - 1]) ends[P++] = ends[i]!;
  const docs = ends.slice(0, P);
  const indexOf = (x: number): number => {
    let lo = 0;
    let hi = P - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (docs[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return { docs, end: (j) => indexOf(j < count ? a[j]! : b[j - count]!) };
}
