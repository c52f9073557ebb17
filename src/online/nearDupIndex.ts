/**
 * NearDupIndex: an online near-duplicate index. Each `add` returns the already indexed near
 * duplicates with exact Jaccard scores, then indexes the document; storage is pluggable (memory,
 * SQLite, Redis, PostgreSQL). This class holds the public surface over the modules of this folder:
 * manifest, preparer, pipeline, scoring, queries, containmentQuery, search/, insert, removal, etc.
 *
 * Why this file is long: it is the index's whole public surface, each method documented; the work is
 * in the modules named above.
 * @module
 */
import type { NearDupStore } from '../store/types.js';
import { openStore } from '../store/open/open.js';
import { storeFileAt } from '../store/localFiles.js';
import { checkThreshold } from '../lsh/params.js';
import type { MinHasher } from '../sketch/minhash.js';
import type { KeyMaker } from './keys/keys.js';
import type { IndexContext } from './context.js';
import { checkSignatureSpec, reconcileManifest, resolveSetup, samePipeline, sameJson } from './manifest.js';
import { DocPipeline } from './pipeline.js';
import { Preparer } from './preparer.js';
import { Scorer } from './scoring.js';
import { GroupCommit, WriteLock } from './writer.js';
import { insertPrepared } from './insert.js';
import { matchesOfRecord, thresholdMatches, topKMatches } from './queries.js';
import { containmentMatches } from './containmentQuery.js';
import { documentOfRecord, signatureOfRecord } from './document.js';
import { putSnapshotDocs, readSnapshotFile, snapshotOptions, writeSnapshotFile, type SnapshotContent } from './snapshot.js';
import type { IndexChange, IndexObserver } from './events.js';
import { OnlineClusters, type OnlineCluster, type ClusterListOptions, type ClusterPage } from './clusters.js';
import { selectMatchFields, type LeanMatch, type MatchField } from './fields.js';
import { recallWarning, type RecallWarning } from './keys/recall.js';
import { liveView, parseDuration, resolveExpiry } from './expiry.js';
import { purgeExpired, removeIds, type RemovalHost } from './removal.js';
import { compileFilter } from './search/filters.js';
import type {
  AddOptions,
  IndexedDocument,
  IndexManifest,
  IndexStats,
  Match,
  NearDupIndexOptions,
  NewDocument,
  Prepared,
  QueryOptions,
  TopKMatch,
  TopKOptions,
} from './types.js';

export type { RecallWarning } from './keys/recall.js';
export type {
  AddOptions,
  IndexedDocument,
  IndexManifest,
  IndexStats,
  Match,
  NearDupIndexOptions,
  NewDocument,
  OnlineVerify,
  QueryOptions,
  TopKMatch,
  TopKOptions,
} from './types.js';
export type { FilterScalar, MetaFilter } from './search/filters.js';
export { resolveManifest } from './manifest.js';
export { PURGE_BATCH } from './removal.js';

/** What every prepared document of an add carries from its options: `limit` (checked) and the compiled `filter`. */
function addCut(options: AddOptions): Pick<Prepared, 'limit' | 'filter'> {
  const { limit } = options;
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const filter = compileFilter(options.filter);
  return { ...(limit !== undefined ? { limit } : {}), ...(filter ? { filter } : {}) };
}

/**
 * An online near-duplicate index over a store. Create it with {@link NearDupIndex.open}. `Meta` is
 * the type of the documents' metadata (any JSON value; `unknown` by default), as stored by `add` and
 * returned with matches and by `get`: `NearDupIndex.open<{ url: string }>({ … })`. The index does
 * not check it: a store written with other metadata gives that back.
 */
export class NearDupIndex<Meta = unknown> {
  /** The parameters in force. */
  readonly manifest: IndexManifest;
  /** The store. */
  readonly store: NearDupStore;
  private readonly hasher: MinHasher;
  private readonly keyMaker: KeyMaker;
  private readonly preparer: Preparer;
  private readonly ctx: IndexContext;
  private readonly lock: WriteLock;
  /** Settles when the last {@link addMany} called has queued its insert (or failed). */
  private addTurn: Promise<void> = Promise.resolve();
  private readonly group: GroupCommit;
  private closed = false;
  private readonly counters = { adds: 0, queries: 0, removes: 0, topK: 0, candidates: 0, verified: 0, expired: 0 };
  private readonly live: NearDupStore; // the store with expired documents hidden (src/online/expiry.ts)
  private readonly now: () => number;
  private readonly ttl: number | undefined;
  private readonly removal: RemovalHost;
  private readonly observers: IndexObserver[] = [];
  private clusterSet!: OnlineClusters;

  private constructor(pipe: DocPipeline, store: NearDupStore, options: NearDupIndexOptions) {
    const manifest = pipe.manifest;
    this.manifest = manifest;
    this.store = store;
    this.hasher = pipe.hasher;
    this.keyMaker = pipe.keyMaker;
    const maxCandidates = options.maxCandidates ?? 10000;
    if (!(Number.isInteger(maxCandidates) && maxCandidates > 0)) throw new RangeError('maxCandidates must be a positive integer');
    this.preparer = new Preparer(pipe, options.workers ?? 0, store.screens === true && manifest.verify === 'exact');
    this.now = options.now ?? Date.now;
    this.ttl = options.ttl === undefined ? undefined : parseDuration(options.ttl);
    this.live = liveView(store, this.now);
    this.ctx = {
      manifest,
      store: this.live,
      raw: store,
      now: this.now,
      hasher: this.hasher,
      keyMaker: this.keyMaker,
      scorer: new Scorer(manifest.verify, this.hasher, this.counters, pipe.textSets),
      preparer: this.preparer,
      maxCandidates,
      counters: this.counters,
      notify: (change) => this.notify(change),
    };
    this.lock = new WriteLock(store);
    this.removal = { store, now: this.now, keysOfRecord: (r) => this.keysOfRecord(r), notify: (c) => this.notify(c) };
    this.group = new GroupCommit(this.lock, (batch) => insertPrepared(this.ctx, batch));
  }

  /**
   * Opens an index on a store. A store that already holds an index keeps its parameters; an
   * explicitly given option that contradicts them is an error (RangeError naming the fields).
   */
  static async open<Meta = unknown>(options: NearDupIndexOptions = {}): Promise<NearDupIndex<Meta>> {
    const wanted = resolveSetup(options);
    const store = typeof options.store === 'object' ? options.store : await openStore(options.store ?? 'memory');
    try {
      const existing = (await store.open(wanted.manifest)) as IndexManifest | null;
      const manifest = existing ? reconcileManifest(existing, wanted.manifest, options) : wanted.manifest;
      const custom = options.shingle?.normalize?.custom;
      if (manifest.shingle.normalize.custom && !custom) {
        throw new RangeError('this index was built with a custom normalization function: pass the same shingle.normalize.custom');
      }
      // The pipeline resolveSetup built serves unless the store's index computes something else.
      const pipe = samePipeline(manifest, wanted.manifest) ? wanted.pipe.withManifest(manifest) : DocPipeline.fromManifest(manifest, custom);
      const idx = new NearDupIndex<Meta>(pipe, store, options);
      idx.clusterSet = await OnlineClusters.attach({
        store: idx.live,
        duplicatesOf: (id, o) => idx.duplicatesOf(id, o),
        duplicatesOfRecord: (id, r, o) => idx.duplicatesOfRecord(id, r, o),
        exclusive: (fn) => idx.lock.exclusive(fn),
      });
      idx.observe((c) => idx.clusterSet.onChange(c));
      return idx;
    } catch (e) {
      if (typeof options.store !== 'object') await store.close();
      throw e;
    }
  }

  /**
   * Calls `observer` after every write of this index (add, replace, delete), under the write lock
   * and before the write resolves (src/online/events.ts). Returns a function that stops it.
   */
  observe(observer: IndexObserver): () => void {
    this.observers.push(observer);
    return () => {
      const i = this.observers.indexOf(observer);
      if (i >= 0) this.observers.splice(i, 1);
    };
  }

  private async notify(change: IndexChange): Promise<void> {
    for (const o of this.observers) await o(change);
  }

  /** The cluster of an indexed document (alone: size 1), or null when `id` is not indexed. See src/online/clusters.ts. */
  async clusterOf(id: string): Promise<OnlineCluster | null> {
    await this.purgeIfDue();
    return this.clusterSet.clusterOf(id);
  }

  /** One cluster by its id (its smallest member id), or null. Cluster reads purge expired documents first. */
  async cluster(id: string): Promise<OnlineCluster | null> {
    await this.purgeIfDue();
    return this.clusterSet.get(id);
  }

  /** Clusters of two or more documents, largest first, one page at a time. */
  async clusters(options: ClusterListOptions = {}): Promise<ClusterPage> {
    await this.purgeIfDue();
    return this.clusterSet.list(options);
  }

  /** Purges expired documents when there are any, so clusters never count them. */
  private async purgeIfDue(): Promise<void> {
    if ((await this.store.expiredIds(this.now(), 1)).length) await this.purgeExpired();
  }

  private check(): void {
    if (this.closed) throw new Error('the index is closed');
  }

  /** The band and forest keys of an encoded record, as the stores index it (used by `index check`). */
  keysOfRecord(bytes: Uint8Array): Float64Array {
    return this.preparer.keysOfRecord(bytes);
  }

  /** Adds one document; resolves to its near duplicates already in the index (best first). */
  async add(id: string, text: string, meta?: Meta, options: AddOptions = {}): Promise<Match<Meta>[]> {
    this.check();
    const p = Object.assign(this.preparer.prepare(id, text, meta), addCut(options));
    p.expiresAt = resolveExpiry({}, options, this.ttl, this.now());
    // Group commit (src/online/writer.ts): written with the adds that arrive while a write runs.
    return this.group.add(p) as Promise<Match<Meta>[]>;
  }

  /**
   * Adds documents in order, as if added one by one: each sees the index plus the earlier
   * documents of the batch. An id already indexed is replaced (its old version is not reported).
   * Ids must be unique within a batch. Store writes are batched (one transaction or pipeline).
   */
  async addMany(docs: NewDocument<Meta>[], options: AddOptions = {}): Promise<Match<Meta>[][]> {
    this.check();
    const cut = addCut(options);
    const seen = new Map<string, number>();
    docs.forEach((d, i) => {
      if (seen.has(d.id)) throw new RangeError(`duplicate id "${d.id}" in batch (items ${seen.get(d.id)} and ${i})`);
      seen.set(d.id, i);
    });
    // Batches insert in call order whatever order their preparation ends in (two prepared at once
    // on two worker threads): each waits for the one called before it to take its turn.
    const before = this.addTurn;
    let turn!: () => void;
    this.addTurn = new Promise((r) => (turn = r));
    try {
      let prepared: Prepared[];
      if (this.preparer.usesWorkers(docs.length)) {
        prepared = await this.preparer.prepareInWorkers(docs);
        this.check();
      } else prepared = docs.map((d) => this.preparer.prepare(d.id, d.text, d.meta));
      for (const p of prepared) Object.assign(p, cut);
      prepared.forEach((p, i) => (p.expiresAt = resolveExpiry(docs[i]!, options, this.ttl, this.now())));
      await before;
      return this.lock.exclusive(() => insertPrepared(this.ctx, prepared)) as Promise<Match<Meta>[][]>;
    } finally {
      turn();
    }
  }

  /**
   * The indexed documents whose score against `text` reaches the threshold, best first. Indexes
   * nothing. With `options.fields`, lean matches holding only those fields.
   */
  query(text: string, options: QueryOptions & { fields: readonly MatchField[] }): Promise<LeanMatch<Meta>[]>;
  query(text: string, options?: QueryOptions): Promise<Match<Meta>[]>;
  async query(text: string, options: QueryOptions = {}): Promise<Match<Meta>[] | LeanMatch<Meta>[]> {
    const matches = await this.queryMatches(text, options);
    return options.fields ? this.select(matches, options.fields) : matches;
  }

  private async queryMatches(text: string, options: QueryOptions): Promise<Match<Meta>[]> {
    this.check();
    const t = options.threshold ?? this.manifest.threshold;
    checkThreshold(t);
    const measure = options.measure ?? 'jaccard';
    if (measure !== 'jaccard' && measure !== 'containment') throw new RangeError(`unknown measure "${String(measure)}" (expected jaccard or containment)`);
    if (measure === 'containment' && this.manifest.verify !== 'exact')
      throw new RangeError('containment queries need the fingerprint sets: an index with verify "exact"');
    const cut = { limit: options.limit, filter: compileFilter(options.filter) };
    const p = this.preparer.prepare('(query)', text, undefined);
    this.counters.queries++;
    if (!p.sig) return [];
    if (measure === 'containment') return containmentMatches(this.ctx, p, t, cut) as Promise<Match<Meta>[]>;
    return thresholdMatches(this.ctx, p, t, cut) as Promise<Match<Meta>[]>;
  }

  /**
   * The near duplicates of an indexed document, from its stored record (no text needed), best first,
   * without the document itself; null when `id` is not indexed. Same scores as `query` with its text.
   */
  duplicatesOf(id: string, options: QueryOptions & { fields: readonly MatchField[] }): Promise<LeanMatch<Meta>[] | null>;
  duplicatesOf(id: string, options?: QueryOptions): Promise<Match<Meta>[] | null>;
  async duplicatesOf(id: string, options: QueryOptions = {}): Promise<Match<Meta>[] | LeanMatch<Meta>[] | null> {
    this.check();
    const [bytes] = await this.live.get([id]);
    if (!bytes) return null;
    const matches = await this.duplicatesOfRecord(id, bytes, options);
    return options.fields ? this.select(matches, options.fields) : matches;
  }

  /**
   * How much a Jaccard query at `threshold` can miss: null when the threshold is not below the
   * index's, else the probability p(threshold) that a document exactly at it is found (a lower
   * bound of the recall; src/online/keys/recall.ts), with a message. `query` still returns what it finds.
   */
  recallAt(threshold: number): RecallWarning | null {
    checkThreshold(threshold);
    return recallWarning(this.manifest, threshold);
  }

  /** Only `fields` of each match (lean replies, src/online/fields.ts); the signatures are read from the store when asked for. */
  select(matches: Match<Meta>[], fields: readonly MatchField[]): Promise<LeanMatch<Meta>[]> {
    return selectMatchFields(
      matches,
      fields,
      async (ids) => (await this.live.get(ids)).map((b, i) => (b ? signatureOfRecord(b, ids[i]!, this.preparer) : null)),
    );
  }

  /**
   * {@link duplicatesOf} for a record already in hand (a `StoredDoc` from `store.scan()`), without
   * fetching it again.
   */
  async duplicatesOfRecord(id: string, record: Uint8Array, options: QueryOptions = {}): Promise<Match<Meta>[]> {
    this.check();
    const t = options.threshold ?? this.manifest.threshold;
    checkThreshold(t);
    const filter = compileFilter(options.filter);
    if (!options.internal) this.counters.queries++;
    return matchesOfRecord(this.ctx, id, record, { t, limit: options.limit, counted: !options.internal, filter }) as Promise<Match<Meta>[]>;
  }

  /**
   * The k most similar distinct texts, even below the threshold, best first, each hit listing its
   * copies (same fingerprint set, or signature with verify `estimate`; the hit is the copy with the
   * smallest id: src/online/search/copies.ts). Candidates: see `topKMatches` (src/online/queries.ts);
   * all are scored exactly. Approximate: a document sharing no prefix with the query is missed.
   */
  async topK(text: string, k: number, options: TopKOptions = {}): Promise<TopKMatch<Meta>[]> {
    this.check();
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
    if (!this.manifest.forest) throw new Error('topK needs the forest: open the index without forest: false');
    const filter = compileFilter(options.filter);
    const p = this.preparer.prepare('(query)', text, undefined);
    this.counters.topK++;
    if (!p.sig) return [];
    return topKMatches(this.ctx, p, { k, trees: this.manifest.forest.trees, filter }) as Promise<TopKMatch<Meta>[]>;
  }

  /** Removes a document; false when it was not indexed. */
  async remove(id: string): Promise<boolean> {
    return (await this.removeMany([id]))[0]!;
  }

  /**
   * Removes documents in one store write (one transaction, statement or pipeline) and splits their
   * clusters once; for each id, whether it was indexed (a repeated id: true at its first place
   * only). Ids are looked up in one read, so a batch costs a few round trips whatever its size.
   */
  removeMany(ids: readonly string[]): Promise<boolean[]> {
    this.check();
    return this.lock.exclusive(async () => {
      // An expired document is removed too, but reported as not indexed (it was no longer visible).
      const { gone, live } = await removeIds(this.removal, [...new Set(ids)], false);
      this.counters.removes += live.size;
      return ids.map((id) => gone.delete(id) && live.has(id));
    });
  }

  /**
   * Removes the documents whose expiry has passed (by the index's clock), {@link PURGE_BATCH} per
   * store write, found through the store's expiry index, through the bulk-delete path: their
   * clusters split as for removeMany. Then the store gives the space back (SQLite: incremental
   * vacuum). Returns the removed ids (src/online/removal.ts).
   */
  async purgeExpired(): Promise<string[]> {
    this.check();
    const ids = await purgeExpired(this.removal, this.lock);
    this.counters.expired += ids.length;
    return ids;
  }

  /** One indexed document, or null. */
  async get(id: string): Promise<IndexedDocument<Meta> | null> {
    this.check();
    const [bytes] = await this.live.get([id]);
    return bytes ? documentOfRecord<Meta>(id, bytes, this.preparer) : null;
  }

  /** Number of indexed documents (expired ones not counted, purged or not). */
  size(): Promise<number> {
    return this.live.size();
  }

  /** Index statistics. */
  async stats(): Promise<IndexStats> {
    return {
      documents: await this.live.size(),
      store: this.store.kind,
      manifest: this.manifest,
      counters: { ...this.counters },
      storeStats: await this.store.stats(),
    };
  }

  /**
   * Writes a snapshot of the whole index to `path` (format: docs/formats.md, "Index snapshot"):
   * every document's record in id order with the index's parameters, written to a temp file and
   * renamed into place, so `path` holds the old snapshot or the new one, never a partial one. Adds
   * still in flight when it is called may or may not be in it (await them first). Load it with
   * {@link NearDupIndex.load} (any store kind; the keys are recomputed).
   * @param path the snapshot file to write (replaced if it exists); a file of the index's own store (any file in a file store's directory, a SQLite database or its journals, under any name) is refused with a RangeError
   * @returns the number of documents written to the snapshot
   */
  async save(path: string): Promise<number> {
    this.check();
    const own = this.store.localFiles ? storeFileAt(this.store.localFiles(), path) : undefined;
    if (own !== undefined)
      throw new RangeError(`cannot save a snapshot to ${path}: it would write over ${own}, a file of this index's store; save it outside the store`);
    return writeSnapshotFile(this.live, this.manifest, path);
  }

  /**
   * Loads a snapshot into a new index on `options.store` (default memory). The snapshot's
   * parameters are used; explicit options must agree with them.
   */
  static async load<Meta = unknown>(path: string, options: Omit<NearDupIndexOptions, 'threshold'> & { threshold?: number } = {}): Promise<NearDupIndex<Meta>> {
    return NearDupIndex.fromSnapshot<Meta>(await readSnapshotFile(path), path, options);
  }

  /** {@link NearDupIndex.load} of a snapshot already read (and checked) from `path`. */
  static async fromSnapshot<Meta = unknown>(
    snap: SnapshotContent,
    path: string,
    options: Omit<NearDupIndexOptions, 'threshold'> & { threshold?: number } = {},
  ): Promise<NearDupIndex<Meta>> {
    const m = snap.manifest;
    checkSignatureSpec(m, path);
    const idx = await NearDupIndex.open<Meta>(snapshotOptions(m, options));
    if (!sameJson({ ...idx.manifest, threshold: 0 }, { ...m, threshold: 0 })) {
      await idx.close();
      throw new RangeError(`${path}: snapshot parameters differ from the requested ones`);
    }
    await putSnapshotDocs(idx.store, snap.docs, (r) => idx.preparer.entryOfRecord(r));
    await idx.notify({ kind: 'bulk-load' });
    return idx;
  }

  /** Waits for writes in flight, then closes the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.lock.idle();
    await this.preparer.close();
    await this.store.close();
  }
}
