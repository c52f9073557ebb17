/**
 * Where the online index keeps its clusters (connected components of the near-duplicate graph),
 * so that every process sharing a store sees the same clusters. A store only persists labels:
 * document id → cluster label, for documents in a cluster of two or more (a document without a
 * label is alone). The label of a cluster is its smallest member id (JavaScript string order), so it
 * does not depend on the order in which documents arrived. The maintenance logic (what to merge or
 * split after an add, a replace or a delete) lives in src/online/clusters.ts, once.
 * @module
 */

/** One cluster in a listing. */
export interface ClusterSummary {
  /** The cluster's label: its smallest member id. */
  id: string;
  /** Number of members (at least 2). */
  size: number;
}

/** Cluster labels in a store. Writers call the mutating methods inside {@link ClusterState.exclusive}. */
export interface ClusterState {
  /**
   * Runs `fn` while holding the store's cluster lock (one holder across all processes sharing the
   * store), so that a read-modify-write of labels never interleaves with another process's.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** True once the labels describe every document of the store (see src/online/clusters.ts). */
  isReady(): Promise<boolean>;
  /** Marks the labels complete (true) or forgets every label (false). */
  setReady(ready: boolean): Promise<void>;
  /** The label of each id (null: alone or unknown). */
  labels(ids: string[]): Promise<(string | null)[]>;
  /** Members of the cluster labelled `label`, sorted (empty when there is no such cluster). */
  members(label: string): Promise<string[]>;
  /**
   * Dissolves the clusters labelled `drop` (their members become alone), then makes one cluster of
   * each group in `put` (groups of fewer than two ids are ignored; each is labelled by its smallest
   * id). One call is applied atomically where the store can (memory, SQLite, standalone Redis).
   */
  write(drop: string[], put: string[][]): Promise<void>;
  /** Clusters, largest first (ties: label order), `limit` of them from `offset`, and how many exist. */
  list(offset: number, limit: number): Promise<{ total: number; clusters: ClusterSummary[] }>;
}

/** The smallest string of a non-empty list (the label of a group). */
export function labelOf(ids: readonly string[]): string {
  let m = ids[0]!;
  for (const x of ids) if (x < m) m = x;
  return m;
}

/** String order (code units), as labels and member lists use. */
export function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Cluster labels in this process's memory (the memory store, and stores without their own). */
export class MemoryClusterState implements ClusterState {
  private readonly label = new Map<string, string>();
  private readonly groups = new Map<string, Set<string>>();
  private ready = false;
  private chain: Promise<unknown> = Promise.resolve();

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  async isReady(): Promise<boolean> {
    return this.ready;
  }

  async setReady(ready: boolean): Promise<void> {
    this.ready = ready;
    if (!ready) {
      this.label.clear();
      this.groups.clear();
    }
  }

  async labels(ids: string[]): Promise<(string | null)[]> {
    return ids.map((id) => this.label.get(id) ?? null);
  }

  async members(label: string): Promise<string[]> {
    return [...(this.groups.get(label) ?? [])].sort(byString);
  }

  async write(drop: string[], put: string[][]): Promise<void> {
    for (const l of drop) {
      for (const id of this.groups.get(l) ?? []) this.label.delete(id);
      this.groups.delete(l);
    }
    for (const g of put) {
      if (g.length < 2) continue;
      const l = labelOf(g);
      this.groups.set(l, new Set(g));
      for (const id of g) this.label.set(id, l);
    }
  }

  async list(offset: number, limit: number): Promise<{ total: number; clusters: ClusterSummary[] }> {
    const all: ClusterSummary[] = [];
    for (const [id, g] of this.groups) all.push({ id, size: g.size });
    all.sort((a, b) => b.size - a.size || byString(a.id, b.id));
    return { total: all.length, clusters: all.slice(offset, offset + limit) };
  }
}
