/**
 * NearDupIndex: an online near-duplicate index. Documents arrive one at a time (or in batches);
 * each `add` returns the already indexed near duplicates with exact Jaccard scores, then indexes
 * the document. Storage is pluggable (memory, SQLite, Redis); the search logic is here, once.
 * @module
 */
import { createShingler, type ShingleOptions, type ShingleKind } from '../text/shingler.js';
import { createMinHasher, estimateJaccard, type MinHasher, type MinHashMethod } from '../sketch/minhash.js';
import { chooseBands } from '../lsh/params.js';
import { jaccard, jaccardAtLeast } from '../similarity/jaccard.js';
import { decodeRecord, readRecordMeta, readRecordSketch, encodeIndexSnapshot, decodeIndexSnapshot, FORMAT_VERSION } from '../sketch/format.js';
import { KeyMaker, DEFAULT_FOREST, type ForestOptions } from './keys.js';
import { scoreContainment } from './containmentQuery.js';
import { DocPipeline } from './pipeline.js';
import type { NearDupStore, PutEntry, StoredDoc, StoreManifest } from '../store/types.js';
import { openStore } from '../store/open.js';
import { storedPresetName, type NormalizeOptions } from '../text/normalize.js';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { WorkerPool } from '../parallel/workerPool.js';
import type { PrepareReply, PrepareRequest } from './prepareWorker.js';
import type { IndexChange, IndexObserver } from './events.js';
import { OnlineClusters, type Cluster, type ClusterListOptions, type ClusterPage } from './clusters.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** How matches are scored. */
export type OnlineVerify = 'exact' | 'estimate';

/** Options of {@link NearDupIndex.open}. Every field has a default. */
export interface NearDupIndexOptions {
  /** Jaccard threshold of `add` and `query`. Default 0.8. */
  threshold?: number;
  /** Shingling. Default: char shingles, k 5, `default` normalization, seed 0. */
  shingle?: ShingleOptions;
  /** Shingle length; shorthand for `shingle.k`. */
  k?: number;
  /** Signature length. Default 128. */
  numPerm?: number;
  /** MinHash method. Default `oph`. */
  method?: MinHashMethod;
  /** MinHash seed. Default 1. */
  seed?: number;
  /** Explicit number of LSH bands (rows default to ⌊numPerm / bands⌋). */
  bands?: number;
  /** Explicit rows per band. */
  rows?: number;
  /** Required P(candidate) at the threshold when bands are chosen automatically. Default 0.99. */
  minRecall?: number;
  /**
   * `exact` (default): keep each document's fingerprint set (delta + varint) and score matches by
   * exact Jaccard. `estimate`: keep only the signature and score by the MinHash estimate (smaller
   * for long documents).
   */
  verify?: OnlineVerify;
  /** LSH-Forest prefix keys for {@link NearDupIndex.topK}; `false` disables topK. Default 8 trees, depths [3, 1]. */
  forest?: ForestOptions | false;
  /** A store instance or spec: `memory` (default), `sqlite:PATH`, `redis://HOST:PORT`. */
  store?: NearDupStore | string;
  /** Candidates examined per query at most (guards against huge buckets). Default 10,000. */
  maxCandidates?: number;
  /**
   * Worker threads that shingle, sign and encode the documents of {@link NearDupIndex.addMany}
   * batches (of 64 documents or more), so that the next batch is prepared while this thread talks to
   * the store. Default 0 (everything in the calling thread). Not available with a custom
   * normalization function (functions cannot be sent to threads).
   */
  workers?: number;
}

/** One match. */
export interface Match {
  /** Id of the indexed document. */
  id: string;
  /** The score used for ranking and thresholds: exact Jaccard with verify `exact`, else the estimate. */
  similarity: number;
  /** The MinHash estimate (fraction of equal signature slots). */
  estimate: number;
  /** The document's metadata, when it has some. */
  meta?: unknown;
  /**
   * With `measure: 'containment'`: `query` when the query (fewer shingles) is inside the document,
   * `document` when the document is inside the query. `similarity` is then |A ∩ B| / |A| for that
   * smaller A, and `estimate` the exact Jaccard similarity.
   */
  contained?: 'query' | 'document';
}

/** A document for {@link NearDupIndex.addMany}. */
export interface NewDocument {
  /** Unique id. */
  id: string;
  /** Text. */
  text: string;
  /** Any JSON value, returned with matches and by get. */
  meta?: unknown;
}

/** What {@link NearDupIndex.get} returns. */
export interface IndexedDocument {
  /** Id. */
  id: string;
  /** Metadata (undefined when none). */
  meta?: unknown;
  /** Number of distinct shingles (with verify `exact`). */
  shingles?: number;
  /** The signature, recomputed from the fingerprints when not stored; null for an empty document. */
  signature: Uint32Array | null;
}

/** Options of {@link NearDupIndex.query}. */
export interface QueryOptions {
  /** Maximum number of matches. Default: all. */
  limit?: number;
  /** Score threshold. Default: the index threshold. Lower values lose recall (use topK). */
  threshold?: number;
  /** Work the index does for itself (cluster upkeep): not counted in {@link IndexStats} counters. */
  internal?: boolean;
  /**
   * `jaccard` (default), or `containment`: documents the query is at least `threshold` inside, or
   * that are at least `threshold` inside the query (needs verify `exact` and the forest; see
   * `containmentQuery.ts` for the candidates and their recall).
   */
  measure?: 'jaccard' | 'containment';
}

/** The persistent parameters of an index (stored by every store, written in snapshots). */
export interface IndexManifest extends StoreManifest {
  format: number;
  threshold: number;
  verify: OnlineVerify;
  shingle: {
    kind: ShingleKind;
    k: number;
    seed: number;
    multiset: boolean;
    stopwords: string[] | { words: string[] };
    normalize: Omit<NormalizeOptions, 'custom'> & { custom: boolean };
  };
  minhash: { method: MinHashMethod; seed: number; numPerm: number };
  bands: number;
  rows: number;
  forest: ForestOptions | null;
  keysPerDoc: number;
}

/** Statistics of {@link NearDupIndex.stats}. */
export interface IndexStats {
  /** Documents indexed. */
  documents: number;
  /** Store kind. */
  store: string;
  /** The manifest. */
  manifest: IndexManifest;
  /** Counters since this process opened the index. */
  counters: { adds: number; queries: number; removes: number; topK: number; candidates: number; verified: number };
  /** Store-specific numbers. */
  storeStats: Record<string, number | string>;
}

/** Resolves options into a manifest. Throws a RangeError on bad options. */
export function resolveManifest(o: NearDupIndexOptions): IndexManifest {
  const threshold = o.threshold ?? 0.8;
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${threshold}`);
  const verify = o.verify ?? 'exact';
  if (verify !== 'exact' && verify !== 'estimate') throw new RangeError(`verify must be exact or estimate, got "${String(verify)}"`);
  const shingleOpts: ShingleOptions = { ...o.shingle, ...(o.k !== undefined ? { k: o.k } : {}) };
  const sh = createShingler(shingleOpts);
  const hasher = createMinHasher({ numPerm: o.numPerm, method: o.method, seed: o.seed });
  const choice = chooseBands(threshold, hasher.numPerm, {
    ...(o.bands !== undefined ? { bands: o.bands } : {}),
    ...(o.rows !== undefined ? { rows: o.rows } : {}),
    ...(o.minRecall !== undefined ? { minRecallAtThreshold: o.minRecall } : {}),
  });
  const forest = o.forest === false ? null : (o.forest ?? DEFAULT_FOREST);
  const keyMaker = new KeyMaker(choice.bands, choice.rows, forest, hasher.numPerm);
  const n = shingleOpts.normalize ?? {};
  return {
    format: FORMAT_VERSION,
    threshold,
    verify,
    shingle: {
      kind: sh.options.kind,
      k: sh.options.k,
      seed: sh.options.seed,
      multiset: sh.options.multiset,
      stopwords: sh.options.stopwords,
      normalize: {
        preset: storedPresetName(n.preset),
        keepCase: n.keepCase ?? false,
        stripPunctuation: n.stripPunctuation ?? false,
        stripDiacritics: n.stripDiacritics ?? false,
        custom: n.custom !== undefined,
      },
    },
    minhash: { method: hasher.method, seed: hasher.seed, numPerm: hasher.numPerm },
    bands: choice.bands,
    rows: choice.rows,
    forest: forest ? { trees: forest.trees, depths: [...forest.depths] } : null,
    keysPerDoc: keyMaker.keysPerDoc,
  };
}

/** The manifest fields an explicitly given option fixes, for the reopen check. */
function explicitFields(o: NearDupIndexOptions): string[] {
  const f: string[] = [];
  if (o.shingle !== undefined || o.k !== undefined) f.push('shingle');
  if (o.numPerm !== undefined || o.method !== undefined || o.seed !== undefined) f.push('minhash');
  if (o.bands !== undefined || o.rows !== undefined || o.minRecall !== undefined || o.threshold !== undefined) f.push('bands', 'rows');
  if (o.verify !== undefined) f.push('verify');
  if (o.forest !== undefined) f.push('forest');
  return f;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function byScore(a: Match, b: Match): number {
  return b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

interface Prepared {
  id: string;
  meta: unknown;
  set: Uint32Array;
  sig: Uint32Array | null;
  keys: Float64Array;
  /** The encoded record, when a prepare worker made it. */
  record?: Uint8Array;
  /** At most this many matches are returned for it (best first). */
  limit?: number;
}

/** Options of {@link NearDupIndex.add} and {@link NearDupIndex.addMany}. */
export interface AddOptions {
  /** Return at most this many near duplicates per document, best first. Default: all. */
  limit?: number;
}

function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new RangeError(`limit must be a positive integer, got ${limit}`);
}

/** addMany batches at least this large go to the prepare workers (smaller ones are not worth the trip). */
const WORKER_MIN_BATCH = 64;

/** An online near-duplicate index over a store. Create it with {@link NearDupIndex.open}. */
export class NearDupIndex {
  /** The parameters in force. */
  readonly manifest: IndexManifest;
  /** The store. */
  readonly store: NearDupStore;
  private readonly hasher: MinHasher;
  private readonly keyMaker: KeyMaker;
  /** Text → set, signature, keys and record (shared with the prepare workers). */
  private readonly pipe: DocPipeline;
  private readonly maxCandidates: number;
  private readonly pool: WorkerPool<PrepareRequest, PrepareReply> | null;
  private scratch = new Uint32Array(4096);
  private writeChain: Promise<unknown> = Promise.resolve();
  private queue: { p: Prepared; resolve: (m: Match[]) => void; reject: (e: unknown) => void }[] = [];
  private draining = false;
  private closed = false;
  private readonly counters = { adds: 0, queries: 0, removes: 0, topK: 0, candidates: 0, verified: 0 };
  private readonly observers: IndexObserver[] = [];
  private clusterSet!: OnlineClusters;

  private constructor(manifest: IndexManifest, store: NearDupStore, options: NearDupIndexOptions) {
    this.manifest = manifest;
    this.store = store;
    const s = manifest.shingle;
    if (s.normalize.custom && !options.shingle?.normalize?.custom) {
      throw new RangeError('this index was built with a custom normalization function: pass the same shingle.normalize.custom');
    }
    this.pipe = new DocPipeline(manifest, options.shingle?.normalize?.custom);
    this.hasher = this.pipe.hasher;
    this.keyMaker = this.pipe.keyMaker;
    this.maxCandidates = options.maxCandidates ?? 10000;
    if (!(Number.isInteger(this.maxCandidates) && this.maxCandidates > 0)) throw new RangeError('maxCandidates must be a positive integer');
    const workers = options.workers ?? 0;
    if (!(Number.isInteger(workers) && workers >= 0)) throw new RangeError(`workers must be a non-negative integer, got ${workers}`);
    if (workers > 0 && s.normalize.custom) throw new RangeError('workers cannot be used with a custom normalization function (functions cannot be sent to worker threads)');
    this.pool = workers > 0 ? new WorkerPool(new URL('./prepareWorker.js', import.meta.url), { manifest }, workers, 'prepare worker') : null;
  }

  /**
   * Opens an index on a store. A store that already holds an index keeps its parameters; an
   * explicitly given option that contradicts them is an error (RangeError naming the fields).
   */
  static async open(options: NearDupIndexOptions = {}): Promise<NearDupIndex> {
    const wanted = resolveManifest(options);
    const store = typeof options.store === 'object' ? options.store : await openStore(options.store ?? 'memory');
    let manifest = wanted;
    try {
      const existing = (await store.open(wanted)) as IndexManifest | null;
      if (existing) {
        if (existing.format !== FORMAT_VERSION) throw new RangeError(`store holds an index of format ${String(existing.format)}; this version reads ${FORMAT_VERSION}`);
        const bad = explicitFields(options).filter((f) => !sameJson((existing as Record<string, unknown>)[f], (wanted as Record<string, unknown>)[f]));
        // The bands follow from the threshold: when only the threshold was given, say so.
        const onlyThreshold = options.bands === undefined && options.rows === undefined && options.minRecall === undefined && options.threshold !== undefined;
        if (onlyThreshold && bad.includes('bands')) {
          const rest = bad.filter((f) => f !== 'bands' && f !== 'rows');
          throw new RangeError(
            `the store was created with threshold ${existing.threshold}, given ${options.threshold}: its LSH bands (${existing.bands} × ${existing.rows} rows) were chosen for ${existing.threshold}, and ${options.threshold} needs ${wanted.bands} × ${wanted.rows}. ` +
              `Open it without --threshold (or with ${existing.threshold}); a lower threshold per query is /v1/query's "threshold"${rest.length ? `; also different: ${rest.join(', ')}` : ''}`,
          );
        }
        if (bad.length) {
          throw new RangeError(
            `the store was created with different parameters (${bad
              .map((f) => `${f}: stored ${JSON.stringify((existing as Record<string, unknown>)[f])}, given ${JSON.stringify((wanted as Record<string, unknown>)[f])}`)
              .join('; ')})`,
          );
        }
        manifest = { ...existing, threshold: options.threshold ?? existing.threshold };
      }
      const idx = new NearDupIndex(manifest, store, options);
      idx.clusterSet = await OnlineClusters.attach({
        store,
        duplicatesOf: (id, o) => idx.duplicatesOf(id, o),
        duplicatesOfRecord: (id, r, o) => idx.duplicatesOfRecord(id, r, o),
        exclusive: (fn) => idx.exclusive(fn),
      });
      idx.observe((c) => idx.clusterSet.onChange(c));
      return idx;
    } catch (e) {
      if (typeof options.store !== 'object') await store.close();
      throw e;
    }
  }

  /**
   * Runs `fn` after every earlier write of this process, holding the store's cross-process write
   * lock when it has one: lookups and the insert that follows are atomic for every writer.
   */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const store = this.store;
    const locked = store.exclusive ? () => store.exclusive!(fn) : fn;
    const run = this.writeChain.then(locked, locked);
    this.writeChain = run.catch(() => undefined);
    return run;
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
  clusterOf(id: string): Promise<Cluster | null> {
    this.check();
    return this.clusterSet.clusterOf(id);
  }

  /** One cluster by its id (its smallest member id), or null. */
  cluster(id: string): Promise<Cluster | null> {
    this.check();
    return this.clusterSet.get(id);
  }

  /** Clusters of two or more documents, largest first, one page at a time. */
  clusters(options: ClusterListOptions = {}): Promise<ClusterPage> {
    this.check();
    return this.clusterSet.list(options);
  }

  private check(): void {
    if (this.closed) throw new Error('the index is closed');
  }

  private validate(id: string, text: string): void {
    if (typeof id !== 'string' || id.length === 0) throw new TypeError('document id must be a non-empty string');
    // Stores write ids as UTF-8: a lone surrogate would come back as U+FFFD, under another id.
    if (LONE_SURROGATE.test(id)) throw new TypeError(`document id ${JSON.stringify(id)} is not well-formed Unicode (lone surrogate)`);
    if (typeof text !== 'string') throw new TypeError(`text of document "${id}" must be a string`);
  }

  private prepare(id: string, text: string, meta: unknown): Prepared {
    this.validate(id, text);
    return { id, meta, ...this.pipe.sketch(text) };
  }

  private recordOf(p: Prepared): Uint8Array {
    return p.record ?? this.pipe.record(p, p.meta);
  }

  /** The band and forest keys of an encoded record, as the stores index it (used by `index check`). */
  keysOfRecord(bytes: Uint8Array): Float64Array {
    const r = readRecordSketch(bytes, this.scratch);
    const sig = r.signature ?? (r.set ? this.hasher.sign(r.set) : null);
    return sig ? this.keyMaker.keys(sig) : new Float64Array(0);
  }

  /**
   * Scores candidates against a prepared document. `min` < 0 keeps every candidate (topK).
   */
  private score(p: Prepared, cands: StoredDoc[], min: number, skip?: (id: string) => boolean, limit = Infinity, counted = true): Match[] {
    if (!p.sig) return [];
    const exact = this.manifest.verify === 'exact';
    if (counted) this.counters.candidates += cands.length;
    const kept: { m: Match; record: Uint8Array }[] = [];
    for (const c of cands) {
      if (skip?.(c.id)) continue;
      const r = readRecordSketch(c.record, this.scratch);
      if (r.set && r.set.length > this.scratch.length) this.scratch = new Uint32Array(r.set.length * 2);
      let similarity: number;
      let estimate = NaN;
      if (exact) {
        if (!r.set) continue;
        similarity = min > 0 ? jaccardAtLeast(p.set, r.set, min) : jaccard(p.set, r.set);
        if (similarity < 0 || similarity < min) continue;
      } else {
        if (!r.signature) continue;
        estimate = estimateJaccard(p.sig, r.signature);
        if (estimate < min) continue;
        similarity = estimate;
      }
      if (counted) this.counters.verified++;
      kept.push({ m: { id: c.id, similarity, estimate }, record: c.record });
    }
    kept.sort((a, b) => byScore(a.m, b.m));
    if (kept.length > limit) kept.length = limit;
    // Estimates (one signature each) and metadata only for the matches returned.
    for (const k of kept) {
      if (exact) {
        const r = readRecordSketch(k.record, this.scratch);
        const sig = r.set ? this.hasher.sign(r.set) : null;
        k.m.estimate = sig ? estimateJaccard(p.sig, sig) : 0;
      }
      this.withMeta(k.m, k.record);
    }
    return kept.map((k) => k.m);
  }

  private withMeta(m: Match, record: Uint8Array): Match {
    // Metadata is decoded only for matches, never for rejected candidates.
    if (record.length > 1 && record[1]! & 4) {
      const meta = readRecordMeta(record, `record of "${m.id}"`);
      if (meta !== undefined) m.meta = meta;
    }
    return m;
  }

  /** Adds one document; resolves to its near duplicates already in the index (best first). */
  async add(id: string, text: string, meta?: unknown, options: AddOptions = {}): Promise<Match[]> {
    this.check();
    checkLimit(options.limit);
    const p = this.prepare(id, text, meta);
    if (options.limit !== undefined) p.limit = options.limit;
    // Group commit: adds that arrive while a write is running are written together, in arrival
    // order, as one batch (one transaction or script call). Results are as if added one by one.
    return new Promise<Match[]>((resolve, reject) => {
      this.queue.push({ p, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        // drain() settles every add it takes; a failure here means the store's write lock could not
        // be taken (store unavailable or busy): the adds waiting for it fail with that error.
        this.exclusive(() => this.drain()).catch((e: unknown) => {
          this.draining = false;
          for (const t of this.queue.splice(0)) t.reject(e);
        });
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const ids = new Set<string>();
      const take: typeof this.queue = [];
      // A batch holds each id once; a repeated id waits for the next round.
      while (take.length < 1000 && this.queue.length && !ids.has(this.queue[0]!.p.id)) {
        const q = this.queue.shift()!;
        ids.add(q.p.id);
        take.push(q);
      }
      try {
        const res = await this.insertPrepared(take.map((t) => t.p));
        take.forEach((t, i) => t.resolve(res[i]!));
      } catch (e) {
        for (const t of take) t.reject(e);
      }
    }
    this.draining = false;
  }

  /**
   * Adds documents in order, as if added one by one: each sees the index plus the earlier
   * documents of the batch. An id already indexed is replaced (its old version is not reported).
   * Ids must be unique within a batch. Store writes are batched (one transaction or pipeline).
   */
  async addMany(docs: NewDocument[], options: AddOptions = {}): Promise<Match[][]> {
    this.check();
    checkLimit(options.limit);
    const seen = new Map<string, number>();
    docs.forEach((d, i) => {
      if (seen.has(d.id)) throw new RangeError(`duplicate id "${d.id}" in batch (items ${seen.get(d.id)} and ${i})`);
      seen.set(d.id, i);
    });
    let prepared: Prepared[];
    if (this.pool && docs.length >= WORKER_MIN_BATCH) {
      for (const d of docs) this.validate(d.id, d.text);
      prepared = await this.prepareInWorker(docs);
      this.check();
    } else prepared = docs.map((d) => this.prepare(d.id, d.text, d.meta));
    if (options.limit !== undefined) for (const p of prepared) p.limit = options.limit;
    return this.exclusive(() => this.insertPrepared(prepared));
  }

  /** Prepares a batch on a worker thread; results are views into the reply's transferred buffers. */
  private async prepareInWorker(docs: NewDocument[]): Promise<Prepared[]> {
    const metas = docs.map((d) => (d.meta === undefined ? undefined : JSON.stringify(d.meta)));
    const r = await this.pool!.run({ texts: docs.map((d) => d.text), metas });
    const P = this.manifest.minhash.numPerm;
    const K = this.manifest.keysPerDoc;
    const empty = new Float64Array(0);
    return docs.map((d, i) => ({
      id: d.id,
      meta: d.meta,
      set: r.sets.subarray(r.setOff[i]!, r.setOff[i + 1]!),
      sig: r.hasSig[i] ? r.sigs.subarray(i * P, (i + 1) * P) : null,
      keys: r.hasSig[i] ? r.keys.subarray(i * K, (i + 1) * K) : empty,
      record: r.records.subarray(r.recOff[i]!, r.recOff[i + 1]!),
    }));
  }

  /** Looks up, scores and writes prepared documents; runs under the write lock. */
  private async insertPrepared(prepared: Prepared[]): Promise<Match[][]> {
    const seen = new Map<string, number>();
    prepared.forEach((p, i) => seen.set(p.id, i));
    {
      const t = this.manifest.threshold;
      const [found, old] = await Promise.all([
        this.store.lookup(prepared.map((p) => this.keyMaker.bandPart(p.keys)), this.maxCandidates),
        this.store.get(prepared.map((p) => p.id)),
      ]);
      const results: Match[][] = [];
      const entries: PutEntry[] = [];
      // Within the batch: band key -> earlier batch items (a small numeric map, batch-local).
      const local = new Map<number, number[]>();
      for (let i = 0; i < prepared.length; i++) {
        const p = prepared[i]!;
        // Stored versions of ids that this or an earlier batch item replaces are not reported.
        const stale = (id: string): boolean => {
          const j = seen.get(id);
          return j !== undefined && j <= i;
        };
        const matches = this.score(p, found[i]!, t, stale, p.limit);
        const earlier = new Set<number>();
        const bk = this.keyMaker.bandPart(p.keys);
        for (let b = 0; b < bk.length; b++) for (const j of local.get(bk[b]!) ?? []) earlier.add(j);
        if (earlier.size) {
          const cands = [...earlier].map((j) => ({ id: prepared[j]!.id, record: entries[j]!.record }));
          matches.push(...this.score(p, cands, t));
          matches.sort(byScore);
        }
        if (p.limit !== undefined && matches.length > p.limit) matches.length = p.limit;
        for (let b = 0; b < bk.length; b++) {
          const l = local.get(bk[b]!);
          if (l) l.push(i);
          else local.set(bk[b]!, [i]);
        }
        const oldRec = old[i];
        entries.push({ id: p.id, record: this.recordOf(p), keys: p.keys, ...(oldRec ? { oldKeys: this.keysOfRecord(oldRec) } : {}) });
        results.push(matches);
      }
      await this.store.put(entries);
      this.counters.adds += prepared.length;
      await this.notify({ kind: 'add', documents: prepared.map((p, i) => ({ id: p.id, duplicates: results[i]!.map((m) => m.id), replaced: old[i] != null })) });
      return results;
    }
  }

  /** The indexed documents whose score against `text` reaches the threshold, best first. Indexes nothing. */
  async query(text: string, options: QueryOptions = {}): Promise<Match[]> {
    this.check();
    const t = options.threshold ?? this.manifest.threshold;
    if (!(t > 0 && t <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${t}`);
    const measure = options.measure ?? 'jaccard';
    if (measure !== 'jaccard' && measure !== 'containment') throw new RangeError(`unknown measure "${String(measure)}" (expected jaccard or containment)`);
    if (measure === 'containment' && this.manifest.verify !== 'exact') throw new RangeError('containment queries need the fingerprint sets: an index with verify "exact"');
    const p = this.prepare('(query)', text, undefined);
    this.counters.queries++;
    if (!p.sig) return [];
    if (measure === 'containment') return this.containmentMatches(p, t, options.limit);
    const [cands] = await this.store.lookup([this.keyMaker.bandPart(p.keys)], this.maxCandidates);
    return this.score(p, cands!, t, undefined, options.limit);
  }

  /** Containment matches of a prepared query: candidates from the bands and every forest level. */
  private async containmentMatches(p: Prepared, t: number, limit = Infinity): Promise<Match[]> {
    const lists = [this.keyMaker.bandPart(p.keys)];
    for (let l = 0; l < this.keyMaker.levels; l++) lists.push(this.keyMaker.levelPart(p.keys, l));
    const found = await this.store.lookup(lists, this.maxCandidates);
    const cands = found.flat();
    this.counters.candidates += cands.length;
    const hits = scoreContainment(p.set, cands, t);
    this.counters.verified += hits.length;
    if (hits.length > limit) hits.length = limit;
    return hits.map((h) => this.withMeta({ id: h.id, similarity: h.similarity, estimate: h.jaccard, contained: h.contained }, h.record));
  }

  /**
   * The near duplicates of an indexed document, from its stored record (no text needed), best first,
   * without the document itself; null when `id` is not indexed. Same scores as `query` with its text.
   */
  async duplicatesOf(id: string, options: QueryOptions = {}): Promise<Match[] | null> {
    this.check();
    const [bytes] = await this.store.get([id]);
    return bytes ? this.duplicatesOfRecord(id, bytes, options) : null;
  }

  /**
   * {@link duplicatesOf} for a record already in hand (a `StoredDoc` from `store.scan()`), without
   * fetching it again.
   */
  async duplicatesOfRecord(id: string, record: Uint8Array, options: QueryOptions = {}): Promise<Match[]> {
    this.check();
    const t = options.threshold ?? this.manifest.threshold;
    if (!(t > 0 && t <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${t}`);
    if (!options.internal) this.counters.queries++;
    // decodeRecord copies the set: score() reuses the scratch buffer readRecordSketch reads into.
    const rec = decodeRecord(record, `record of "${id}"`);
    const sig = rec.signature ?? (rec.set ? this.hasher.sign(rec.set) : null);
    if (!sig) return [];
    const keys = this.keyMaker.keys(sig);
    const p: Prepared = { id, meta: rec.meta, set: rec.set ?? new Uint32Array(0), sig, keys };
    const [cands] = await this.store.lookup([this.keyMaker.bandPart(keys)], this.maxCandidates);
    return this.score(p, cands!, t, (x) => x === id, options.limit, !options.internal);
  }

  /**
   * The k most similar indexed documents, even below the threshold, best first. Candidates come from
   * the LSH bands and the forest prefixes, deepest first; shallower prefixes are consulted only
   * while fewer than 4k candidates were found, and each level adds at most max(100, 10k)
   * candidates, those sharing a prefix in the most trees first. All candidates are scored exactly.
   * Approximate: a document sharing no prefix with the query is missed.
   */
  async topK(text: string, k: number): Promise<Match[]> {
    this.check();
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
    if (!this.manifest.forest) throw new Error('topK needs the forest: open the index without forest: false');
    const p = this.prepare('(query)', text, undefined);
    this.counters.topK++;
    if (!p.sig) return [];
    const byId = new Map<string, StoredDoc>();
    const [first] = await this.store.lookup([this.keyMaker.bandPart(p.keys)], this.maxCandidates);
    for (const c of first!) byId.set(c.id, c);
    // Shallow prefixes can have huge buckets: take at most `budget` candidates from each level,
    // preferring those that share a prefix in the most trees (a rough similarity order).
    const budget = Math.min(this.maxCandidates, Math.max(100, 10 * k));
    const trees = this.manifest.forest.trees;
    for (let l = 0; l < this.keyMaker.levels && byId.size < 4 * k; l++) {
      const lk = this.keyMaker.levelPart(p.keys, l);
      const lists = await this.store.lookup(Array.from({ length: trees }, (_, t) => lk.subarray(t, t + 1)), budget);
      const hits = new Map<string, { doc: StoredDoc; n: number }>();
      for (const list of lists) {
        for (const c of list) {
          if (byId.has(c.id)) continue;
          const h = hits.get(c.id);
          if (h) h.n++;
          else hits.set(c.id, { doc: c, n: 1 });
        }
      }
      const ranked = [...hits.values()].sort((a, b) => b.n - a.n);
      for (let i = 0; i < ranked.length && i < budget; i++) byId.set(ranked[i]!.doc.id, ranked[i]!.doc);
    }
    return this.score(p, [...byId.values()], 0, undefined, k);
  }

  /** Removes a document; false when it was not indexed. */
  remove(id: string): Promise<boolean> {
    this.check();
    return this.exclusive(async () => {
      const [rec] = await this.store.get([id]);
      if (!rec) return false;
      this.counters.removes++;
      const removed = await this.store.remove(id, this.keysOfRecord(rec));
      if (removed) await this.notify({ kind: 'remove', id });
      return removed;
    });
  }

  /** One indexed document, or null. */
  async get(id: string): Promise<IndexedDocument | null> {
    this.check();
    const [bytes] = await this.store.get([id]);
    if (!bytes) return null;
    const rec = decodeRecord(bytes, `record of "${id}"`);
    const signature = rec.signature ?? (rec.set ? this.hasher.sign(rec.set) : null);
    return {
      id,
      ...(rec.meta !== undefined ? { meta: rec.meta } : {}),
      ...(rec.set ? { shingles: rec.set.length } : {}),
      signature,
    };
  }

  /** Number of indexed documents. */
  size(): Promise<number> {
    return this.store.size();
  }

  /** Index statistics. */
  async stats(): Promise<IndexStats> {
    return {
      documents: await this.store.size(),
      store: this.store.kind,
      manifest: this.manifest,
      counters: { ...this.counters },
      storeStats: await this.store.stats(),
    };
  }

  /** Writes a snapshot of the whole index (docs/formats.md), atomically (temp file + rename). */
  async save(path: string): Promise<number> {
    this.check();
    const docs: { id: string; record: Uint8Array }[] = [];
    for await (const d of this.store.scan()) docs.push({ id: d.id, record: d.record.slice() });
    docs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const bytes = encodeIndexSnapshot({ manifest: this.manifest as unknown as Record<string, unknown>, docs });
    const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
    await writeFile(tmp, bytes);
    await rename(tmp, path);
    return docs.length;
  }

  /**
   * Loads a snapshot into a new index on `options.store` (default memory). The snapshot's
   * parameters are used; explicit options must agree with them.
   */
  static async load(path: string, options: Omit<NearDupIndexOptions, 'threshold'> & { threshold?: number } = {}): Promise<NearDupIndex> {
    const snap = decodeIndexSnapshot(await readFile(path), path);
    const m = snap.manifest as unknown as IndexManifest;
    const idx = await NearDupIndex.open({
      threshold: m.threshold,
      verify: m.verify,
      shingle: { ...m.shingle, normalize: { ...m.shingle.normalize, custom: options.shingle?.normalize?.custom } },
      numPerm: m.minhash.numPerm,
      method: m.minhash.method,
      seed: m.minhash.seed,
      bands: m.bands,
      rows: m.rows,
      forest: m.forest ?? false,
      ...options,
    });
    if (!sameJson({ ...idx.manifest, threshold: 0 }, { ...m, threshold: 0 })) {
      await idx.close();
      throw new RangeError(`${path}: snapshot parameters differ from the requested ones`);
    }
    const batch: PutEntry[] = [];
    for (const d of snap.docs) {
      batch.push({ id: d.id, record: d.record, keys: idx.keysOfRecord(d.record) });
      if (batch.length === 1000) await idx.store.put(batch.splice(0));
    }
    if (batch.length) await idx.store.put(batch);
    await idx.notify({ kind: 'bulk-load' });
    return idx;
  }

  /** Waits for writes in flight, then closes the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writeChain;
    await this.pool?.close();
    await this.store.close();
  }
}
