/**
 * Clusters for the web page. NearDupIndex has no cluster API (an online index only answers "what is
 * near this document"), so the server process keeps a union-find of document ids fed by the matches
 * that `add` returns: every added document is joined with each of its near duplicates. This sees
 * the documents added since the process started (through the page or the API), not those already in
 * a persistent store when it opened; removals hide a document but do not split its cluster.
 * @module
 */

/** One cluster as the page lists it. */
export interface TrackedCluster {
  /** The first member seen. */
  id: string;
  /** Live members. */
  size: number;
  /** Live member ids, in the order they were first seen. */
  members: string[];
}

/** A growable union-find over string ids. */
export class ClusterTracker {
  private readonly index = new Map<string, number>();
  private readonly ids: string[] = [];
  private parent = new Int32Array(64);
  private live = new Uint8Array(64);

  /** Documents seen (live or removed). */
  get tracked(): number {
    return this.ids.length;
  }

  private slot(id: string): number {
    let i = this.index.get(id);
    if (i === undefined) {
      i = this.ids.length;
      if (i === this.parent.length) {
        const p = new Int32Array(i * 2);
        p.set(this.parent);
        this.parent = p;
        const l = new Uint8Array(i * 2);
        l.set(this.live);
        this.live = l;
      }
      this.parent[i] = i;
      this.ids.push(id);
      this.index.set(id, i);
    }
    return i;
  }

  private find(x: number): number {
    const p = this.parent;
    while (p[x] !== x) {
      p[x] = p[p[x]!]!;
      x = p[x]!;
    }
    return x;
  }

  /** Records an added document and the near duplicates `add` returned for it. */
  added(id: string, duplicates: readonly { id: string }[]): void {
    const a = this.slot(id);
    this.live[a] = 1;
    for (const d of duplicates) {
      const b = this.slot(d.id);
      this.live[b] = 1;
      const ra = this.find(a);
      const rb = this.find(b);
      // The earlier-seen root stays the root, so a cluster keeps its name as it grows.
      if (ra < rb) this.parent[rb] = ra;
      else if (rb < ra) this.parent[ra] = rb;
    }
  }

  /** Records a removal: the document disappears from its cluster's member list. */
  removed(id: string): void {
    const i = this.index.get(id);
    if (i !== undefined) this.live[i] = 0;
  }

  /** Clusters with at least two live members, largest first (ties: earliest first), at most `limit`. */
  clusters(limit = Infinity): { total: number; clusters: TrackedCluster[] } {
    const groups = new Map<number, string[]>();
    for (let i = 0; i < this.ids.length; i++) {
      if (!this.live[i]) continue;
      const r = this.find(i);
      let g = groups.get(r);
      if (!g) groups.set(r, (g = []));
      g.push(this.ids[i]!);
    }
    const all: TrackedCluster[] = [];
    for (const g of groups.values()) if (g.length >= 2) all.push({ id: g[0]!, size: g.length, members: g });
    all.sort((x, y) => y.size - x.size || this.index.get(x.id)! - this.index.get(y.id)!);
    return { total: all.length, clusters: all.slice(0, limit) };
  }
}
