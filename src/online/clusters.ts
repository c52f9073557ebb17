/**
 * Clusters of the online index: connected components of the graph whose edges are the pairs of
 * indexed documents at or above the index threshold (the pairs `add` and `duplicatesOf` report).
 * Kept in the store (src/store/clusterState.ts), so every process sharing it sees the same
 * clusters, and kept right after every write:
 * - add: the new document's edges merge its cluster with its near duplicates' clusters;
 * - delete: the cluster the document was in is split into the components of its other members,
 *   recomputed by asking the index for each member's near duplicates (a delete can split a cluster:
 *   the deleted document may have been the only bridge);
 * - replace: a delete of the old version, then an add of the new one.
 * A store filled before clusters were kept (or from a snapshot) is read once, on the first cluster
 * request, to build them; until then the index does not maintain them.
 * @module
 */
import type { Match, QueryOptions } from './types.js';
import type { IndexChange, AddedDocument } from './events.js';
import type { NearDupStore } from '../store/types.js';
import { MemoryClusterState, type ClusterState } from '../store/clusterState.js';

/** One cluster: its label (the smallest member id), size and members. */
export interface OnlineCluster {
  /** The cluster's id: its smallest member id (stable while that member stays). */
  id: string;
  /** Number of members. */
  size: number;
  /** Member ids, sorted (all of them, or the first `members` in a listing). */
  members: string[];
}

/** Options of {@link OnlineClusters.list}. */
export interface ClusterListOptions {
  /** Clusters to skip (largest first). Default 0. */
  offset?: number;
  /** Clusters to return. Default 50. */
  limit?: number;
  /** Member ids listed per cluster at most (`size` is always the full count). Default 10. */
  members?: number;
  /**
   * When the clusters of a store filled earlier are still being built: wait for them (true,
   * default), or answer at once with `building` set and no clusters (false; the HTTP API does this).
   */
  wait?: boolean;
}

/** A page of clusters, largest first. */
export interface ClusterPage {
  /** Clusters of two or more documents. */
  total: number;
  /** The offset asked for. */
  offset: number;
  /** The clusters of this page. */
  clusters: OnlineCluster[];
  /** Present while the clusters of a store filled earlier are being built: documents read so far. */
  building?: { done: number; total: number };
}

/** What the clusters need from the index (its store, its near-duplicate search and its write lock). */
export interface ClusterHost {
  readonly store: NearDupStore;
  duplicatesOf(id: string, options: QueryOptions): Promise<Match[] | null>;
  duplicatesOfRecord(id: string, record: Uint8Array, options: QueryOptions): Promise<Match[]>;
  /** Runs `fn` under the index's write lock (no add or delete of this process in between). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
}

/** Internal searches are not the user's: they stay out of the index counters. */
const INTERNAL: QueryOptions = { internal: true };

/** Union-find over string ids (batch-local; small). */
class Components {
  private readonly parent = new Map<string, string>();

  find(x: string): string {
    let r = x;
    while (true) {
      const p = this.parent.get(r);
      if (p === undefined || p === r) break;
      r = p;
    }
    if (!this.parent.has(x)) this.parent.set(x, x);
    // Path compression.
    let y = x;
    while (y !== r) {
      const p = this.parent.get(y)!;
      this.parent.set(y, r);
      y = p;
    }
    return r;
  }

  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra, rb);
  }

  /** Every component of two or more ids. */
  groups(): string[][] {
    const by = new Map<string, string[]>();
    for (const x of this.parent.keys()) {
      const r = this.find(x);
      let g = by.get(r);
      if (!g) by.set(r, g = []);
      g.push(x);
    }
    return [...by.values()].filter((g) => g.length >= 2);
  }
}

/** The clusters of one index. Created by the index; use `index.clusterOf` and `index.clusters`. */
export class OnlineClusters {
  private ready = false;
  private building: Promise<void> | null = null;
  private progress = { done: 0, total: 0 };

  private constructor(
    private readonly host: ClusterHost,
    private readonly state: ClusterState,
  ) {}

  /** Attaches clusters to an index; a new (empty) store starts with complete, empty clusters. */
  static async attach(host: ClusterHost): Promise<OnlineClusters> {
    const state = host.store.clusterState?.() ?? new MemoryClusterState();
    const c = new OnlineClusters(host, state);
    c.ready = await state.isReady();
    if (!c.ready && (await host.store.size()) === 0) {
      await state.setReady(true);
      c.ready = true;
    }
    return c;
  }

  /** The index observer: keeps the clusters right after each write (runs under the write lock). */
  async onChange(change: IndexChange): Promise<void> {
    if (change.kind === 'bulk-load') {
      this.ready = false;
      await this.state.exclusive(() => this.state.setReady(false));
      if ((await this.host.store.size()) === 0) await this.state.setReady(true);
      return;
    }
    if (!this.ready && !(this.ready = await this.state.isReady())) return;
    // Most adds have no near duplicates and replace nothing: no cluster changes, no lock.
    if (change.kind === 'add' && change.documents.every((d) => d.duplicates.length === 0 && !d.replaced)) return;
    await this.state.exclusive(async () => {
      if (change.kind === 'remove') return this.detach(change.ids);
      await this.added(change.documents);
    });
  }

  private async added(docs: AddedDocument[]): Promise<void> {
    let edges: [string, string][] = [];
    for (const d of docs) {
      if (d.replaced) {
        // The old version's edges are gone: settle what came before, then split its old cluster.
        await this.merge(edges);
        edges = [];
        await this.detach([d.id]);
      }
      for (const o of d.duplicates) edges.push([d.id, o]);
    }
    await this.merge(edges);
  }

  /** Merges the clusters joined by `edges` (one read of labels, one write). */
  private async merge(edges: [string, string][]): Promise<void> {
    if (edges.length === 0) return;
    const ids = [...new Set(edges.flat())];
    const labels = await this.state.labels(ids);
    const touched = [...new Set(labels.filter((l): l is string => l !== null))];
    if (touched.length === 1 && labels.every((l) => l === touched[0])) return; // already one cluster
    const comp = new Components();
    for (const [a, b] of edges) comp.union(a, b);
    const members = await Promise.all(touched.map((l) => this.state.members(l)));
    for (const m of members) for (let i = 1; i < m.length; i++) comp.union(m[0]!, m[i]!);
    await this.state.write(touched, comp.groups());
  }

  /**
   * Takes `ids` out of their clusters and splits what remains of each into its connected
   * components (one label read, one write, however many ids and clusters).
   */
  private async detach(ids: string[]): Promise<void> {
    const labels = [...new Set((await this.state.labels(ids)).filter((l): l is string => l !== null))];
    if (labels.length === 0) return;
    const out = new Set(ids);
    const comp = new Components();
    for (const label of labels) {
      const rest = (await this.state.members(label)).filter((m) => !out.has(m));
      const inCluster = new Set(rest);
      for (const m of rest) {
        comp.find(m);
        for (const d of (await this.host.duplicatesOf(m, INTERNAL)) ?? []) if (inCluster.has(d.id)) comp.union(m, d.id);
      }
    }
    await this.state.write(labels, comp.groups());
  }

  /**
   * Builds the clusters of every stored document from scratch (a store filled before clusters were
   * kept). Runs once per store: under the index's write lock and the store's cluster lock.
   */
  private build(): Promise<void> {
    this.building ??= this.host
      .exclusive(() =>
        this.state.exclusive(async () => {
          if (await this.state.isReady()) return;
          await this.state.setReady(false);
          this.progress = { done: 0, total: await this.host.store.size() };
          const comp = new Components();
          for await (const d of this.host.store.scan()) {
            for (const m of await this.host.duplicatesOfRecord(d.id, d.record, INTERNAL)) comp.union(d.id, m.id);
            this.progress.done++;
          }
          const groups = comp.groups();
          for (let i = 0; i < groups.length; i += 500) await this.state.write([], groups.slice(i, i + 500));
          await this.state.setReady(true);
        })
      )
      .then(
        () => {
          this.ready = true;
        },
        (e: unknown) => {
          this.building = null;
          throw e;
        },
      );
    return this.building;
  }

  /** True when the clusters are complete; otherwise starts building them and waits or not. */
  private async ensure(wait: boolean): Promise<boolean> {
    if (this.ready) return true;
    if ((this.ready = await this.state.isReady())) return true;
    const b = this.build();
    if (wait) {
      await b;
      return true;
    }
    b.catch(() => undefined);
    return false;
  }

  /** The cluster of document `id` (itself alone when it has no near duplicates), or null when it is not indexed. */
  async clusterOf(id: string): Promise<OnlineCluster | null> {
    await this.ensure(true);
    const [label] = await this.state.labels([id]);
    if (label) {
      const members = await this.state.members(label);
      if (members.includes(id)) return { id: label, size: members.length, members };
    }
    const [rec] = await this.host.store.get([id]);
    return rec ? { id, size: 1, members: [id] } : null;
  }

  /** The cluster labelled `label` (its smallest member id), or null. */
  async get(label: string): Promise<OnlineCluster | null> {
    await this.ensure(true);
    const members = await this.state.members(label);
    return members.length ? { id: label, size: members.length, members } : null;
  }

  /** Clusters of two or more documents, largest first (ties: by id), one page. */
  async list(options: ClusterListOptions = {}): Promise<ClusterPage> {
    const offset = options.offset ?? 0;
    const limit = options.limit ?? 50;
    const per = options.members ?? 10;
    if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`offset must be a non-negative integer, got ${offset}`);
    if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`limit must be a positive integer, got ${limit}`);
    if (!(Number.isInteger(per) && per >= 0)) throw new RangeError(`members must be a non-negative integer, got ${per}`);
    if (!(await this.ensure(options.wait ?? true))) return { total: 0, offset, clusters: [], building: { ...this.progress } };
    const page = await this.state.list(offset, limit);
    const clusters = await Promise.all(
      page.clusters.map(async (c) => ({ id: c.id, size: c.size, members: per === 0 ? [] : (await this.state.members(c.id)).slice(0, per) })),
    );
    return { total: page.total, offset, clusters };
  }
}
