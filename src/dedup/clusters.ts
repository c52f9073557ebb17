/**
 * Grouping verified pairs into clusters with union-find.
 * @module
 */

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
