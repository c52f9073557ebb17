/**
 * Redis store (ioredis). Two key layouts (docs/stores.md), with P the prefix (default `nd`):
 *
 * Common to both:
 *   P:manifest           string  the index manifest (JSON)
 *   P:layout             string  `log <token>` or `sets` (absent: `sets`, stores made before layouts)
 *   P:doc:<id>           string  the document's encoded record
 *   P:ids                set     every document id (size, scan)
 *   P:expiry             zset    ids that have an expiry, scored by it (ms since the epoch)
 * `log` (the default for new stores; src/store/redis/logLayout.ts):
 *   P:log                list    one binary entry per write batch (src/store/redis/log.ts); every
 *                                process folds it into an in-memory band table and looks up there
 * `sets` (src/store/redis/setsLayout.ts):
 *   P:key:<decimal key>  set     ids of the documents that have this band key
 *
 * Standalone Redis: a write batch is one MULTI (log) or one Lua script call (sets): atomic, one round
 * trip. Redis Cluster: no multi-key commands; write order is postings (or the log entry) first, the
 * record last, and a reader ignores postings whose record is missing, so a writer dying mid-batch
 * never makes a half-written document visible.
 *
 * This class is the front: it opens the store, picks the layout object once (LayoutOps in
 * src/store/redis/shared.ts) and delegates to it; what both layouts share (records, ids, the write
 * lock, cluster labels, the store check) lives here.
 * @module
 */
import { Redis, Cluster } from 'ioredis';
import { randomBytes } from 'node:crypto';
import type { NearDupStore, PutEntry, RemoveEntry, StoredDoc, StoreManifest } from '../types.js';
import { RedisClusterState } from './clusters.js';
import type { ClusterState } from '../clusterState.js';
import { parseRedisUrl } from '../spec.js';
import {
  REDIS_COMMAND_TIMEOUT_MS,
  RedisKeys,
  RedisWhere,
  recordReader,
  unavailable,
  type Client,
  type LayoutOps,
  type LogCompaction,
  type RedisLayout,
} from './shared.js';
import { setsLayout } from './setsLayout.js';
import { LogLayout } from './logLayout.js';
import { OrderedAppend, TransactionAppend } from './logAppend.js';
import { RedisWriteLock } from './writeLock.js';

export { REDIS_COMMAND_TIMEOUT_MS, type RedisLayout, type LogCompaction };
export { REDIS_LOCK_WAIT_MS, REDIS_LOCK_TTL_MS } from './writeLock.js';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** Key prefix, so several indexes can share one Redis. Default `nd`. */
  prefix?: string;
  /**
   * Use multi-key commands (Lua scripts, MULTI, MGET, MSET). Default true on standalone Redis; always
   * false on Cluster. `false` on standalone Redis runs the Cluster code path.
   */
  scripts?: boolean;
  /**
   * Key layout of a new store: `log` (default; fast inserts, each process holds the band table in
   * memory) or `sets` (one Redis set per band key; no per-process memory, slower inserts). An
   * existing store keeps its layout; asking for another one is an error.
   */
  layout?: RedisLayout;
  /**
   * Take the write lock `P:writer` around each write batch (its lookups and its write), so that
   * documents added at once by several processes see each other. Default true; `false` for a
   * single writer process (saves two round trips per batch).
   */
  writeLock?: boolean;
  /** `host:port`, for messages (default: the client's own, or its first startup node). */
  address?: string;
}

/** A store in Redis, shareable by several processes. */
export class RedisStore implements NearDupStore {
  readonly kind = 'redis';
  private readonly keys: RedisKeys;
  /** Multi-key commands allowed: standalone Redis and not `scripts=0`. */
  private readonly multiKey: boolean;
  private readonly wantedLayout: RedisLayout | undefined;
  private readonly lock: RedisWriteLock | null;
  private readonly records: (ids: string[]) => Promise<(Buffer | null)[]>;
  /** The layout in force: sets until open() finds (or makes) a log-layout store. */
  private ops: LayoutOps;
  private clusters: RedisClusterState | undefined;
  private readonly where: RedisWhere;
  /** {@link unavailable}, naming this store's server and why it cannot be reached. */
  private readonly fail = (e: unknown): never => unavailable(e, this.where);

  constructor(
    private readonly redis: Client,
    options: RedisStoreOptions = {},
  ) {
    this.keys = new RedisKeys(options.prefix ?? 'nd');
    // The listener also keeps a client made without one from ending the process with an
    // unhandled 'error' event when Redis goes away.
    this.where = new RedisWhere(options.address ?? addressOf(redis)).watch(redis);
    this.wantedLayout = options.layout;
    if (options.layout !== undefined && options.layout !== 'log' && options.layout !== 'sets') {
      throw new RangeError(`Redis layout must be log or sets, got "${String(options.layout)}"`);
    }
    // Scripts and transactions touch keys of many hash slots: only on standalone Redis.
    this.multiKey = redis instanceof Redis && options.scripts !== false;
    this.lock = options.writeLock ?? true ? new RedisWriteLock(redis, this.keys.writer, this.keys.prefix, this.fail) : null;
    this.records = recordReader(redis, this.keys, this.multiKey);
    this.ops = setsLayout(redis, this.keys, this.multiKey);
  }

  /** The layout in force (known after open). */
  get layout(): RedisLayout {
    return this.ops.name;
  }

  /**
   * Connects to `redis://[:password@]HOST:PORT[/DB][?prefix=NAME&layout=log|sets&cluster=1&scripts=0&timeout=MS&lock=0]`
   * (parsed by src/store/spec.ts). lock=0 turns the cross-process write lock off (one writer
   * process only). With cluster=1 the address is a seed node of a Redis Cluster; scripts=0 uses
   * single-key commands only (the Cluster code path) on standalone Redis too. `layout` picks the
   * key layout of a new store (default log). `timeout=MS` bounds each command (default
   * {@link REDIS_COMMAND_TIMEOUT_MS}): past it, or while Redis is unreachable, calls fail with
   * StoreUnavailableError.
   */
  static fromUrl(url: string): RedisStore {
    const o = parseRedisUrl(url);
    const timeout = o.timeoutMs;
    // Fail fast while Redis is away (one reconnection attempt per command, bounded command time)
    // and keep reconnecting in the background, so the service recovers without a restart.
    const common = {
      enableAutoPipelining: true,
      lazyConnect: false,
      commandTimeout: timeout,
      connectTimeout: timeout,
      maxRetriesPerRequest: 1,
      retryStrategy: (times: number) => Math.min(50 * times, 500),
    };
    const { prefix, layout, writeLock } = o;
    if (o.cluster) {
      const { maxRetriesPerRequest, retryStrategy, ...clusterCommon } = common;
      return new RedisStore(
        new Cluster([{ host: o.host, port: o.port }], {
          ...clusterCommon,
          clusterRetryStrategy: retryStrategy,
          redisOptions: { password: o.password, maxRetriesPerRequest, commandTimeout: timeout },
        }),
        { prefix, layout, writeLock, address: `${o.host}:${o.port}` },
      );
    }
    const client = new Redis(o.address, common);
    // Without a listener, every failed reconnection would print "Unhandled error event" (the
    // store adds one too, which keeps the last error for messages).
    client.on('error', () => undefined);
    return new RedisStore(client, { prefix, scripts: o.scripts, layout, writeLock, address: `${o.host}:${o.port}` });
  }

  /** Whether the store holds an index already (its manifest key), without creating anything. */
  async exists(): Promise<boolean> {
    return (await this.redis.get(this.keys.manifest).catch(this.fail)) !== null;
  }

  open(manifest: StoreManifest): Promise<StoreManifest | null> {
    return this.openRaw(manifest).catch(this.fail);
  }

  private async openRaw(manifest: StoreManifest): Promise<StoreManifest | null> {
    const r = this.redis;
    const k = this.keys;
    let [raw, layoutValue] = await Promise.all([r.get(k.manifest), r.get(k.layout)]);
    let existing: StoreManifest | null = null;
    if (raw === null) {
      // A new store: the layout first (SET NX: of several processes starting at once, one decides),
      // then the manifest. A manifest without a layout key is a store made before layouts existed.
      const mine = (this.wantedLayout ?? 'log') === 'log' ? `log ${randomBytes(8).toString('hex')}` : 'sets';
      await r.set(k.layout, mine, 'NX');
      layoutValue = await r.get(k.layout);
      const ok = await r.set(k.manifest, JSON.stringify(manifest), 'NX');
      if (ok !== 'OK') raw = await r.get(k.manifest);
    }
    if (raw !== null) {
      try {
        existing = JSON.parse(raw) as StoreManifest;
      } catch {
        throw new Error(`Redis key ${k.manifest} is not valid JSON`);
      }
    }
    const layout: RedisLayout = layoutValue?.startsWith('log ') ? 'log' : 'sets';
    if (layoutValue !== null && layoutValue !== 'sets' && layout !== 'log') throw new Error(`Redis key ${k.layout} holds an unknown layout "${layoutValue}"`);
    if (this.wantedLayout && this.wantedLayout !== layout) {
      throw new RangeError(
        `the Redis store at prefix "${k.prefix}" uses the ${layout} layout, not ${this.wantedLayout} (use another prefix, or drop ?layout=)`,
      );
    }
    if (layout === 'log') {
      const append = this.multiKey ? new TransactionAppend(r as Redis, k) : new OrderedAppend(r, k);
      this.ops = await LogLayout.open({ redis: r, keys: k, manifest: existing ?? manifest, token: layoutValue!, append, records: this.records });
    }
    return existing;
  }

  /**
   * Rewrites the posting log of a log-layout store (standalone Redis only), dropping replaced and
   * removed versions and documents whose record is missing, while other processes keep using it.
   * A sets-layout store has no log: RangeError.
   */
  compact(): Promise<LogCompaction> {
    return this.ops.compact().catch(this.fail);
  }

  /**
   * Runs `fn` holding the write lock `P:writer` (src/store/redis/writeLock.ts), unless the store was
   * opened with `lock=0`.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock ? this.lock.run(fn) : fn();
  }

  lookup(queries: Float64Array[], limit: number, now?: number): Promise<StoredDoc[][]> {
    return this.ops.lookup(queries, limit, now).catch(this.fail);
  }

  /**
   * The batch, with the expiry index written just before it in the same pipeline (ids with an
   * expiry are added to `P:expiry`; replaced ones without are taken out). A crash in between leaves
   * at most an entry for a document not written, which a purge drops.
   */
  put(entries: PutEntry[]): Promise<void> {
    const k = this.keys;
    const scored: (string | number)[] = [];
    const unscored: string[] = [];
    for (const e of entries) {
      if (e.expiresAt !== undefined) scored.push(e.expiresAt, e.id);
      else if (e.oldKeys) unscored.push(e.id);
    }
    const index: Promise<unknown>[] = [];
    if (scored.length) index.push(this.redis.zadd(k.expiry, ...scored));
    if (unscored.length) index.push(this.redis.zrem(k.expiry, ...unscored));
    return Promise.all([...index, this.ops.put(entries)]).then(() => undefined, this.fail);
  }

  get(ids: string[]): Promise<(Uint8Array | null)[]> {
    return this.records(ids).catch(this.fail);
  }

  async remove(id: string, keys: Float64Array): Promise<boolean> {
    return (await this.removeMany([{ id, keys }]))[0]!;
  }

  /** The layout's removal, then the ids out of the expiry index (after the records: a crash between leaves entries a purge drops). */
  removeMany(entries: RemoveEntry[]): Promise<boolean[]> {
    if (!entries.length) return Promise.resolve([]);
    return this.ops
      .removeMany(entries)
      .then(async (removed) => {
        await this.redis.zrem(this.keys.expiry, ...entries.map((e) => e.id));
        return removed;
      })
      .catch(this.fail);
  }

  size(): Promise<number> {
    return this.redis.scard(this.keys.ids).catch(this.fail);
  }

  expiredIds(now: number, limit: number): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.expiry, '-inf', now, 'LIMIT', 0, limit).catch(this.fail);
  }

  countExpired(now: number): Promise<number> {
    return this.redis.zcount(this.keys.expiry, '-inf', now).catch(this.fail);
  }

  async *scan(): AsyncIterable<StoredDoc> {
    let cursor = '0';
    do {
      const [next, ids] = await this.redis.sscan(this.keys.ids, cursor, 'COUNT', 1000).catch(this.fail);
      cursor = next;
      const recs = await this.records(ids).catch(this.fail);
      for (let i = 0; i < ids.length; i++) if (recs[i]) yield { id: ids[i]!, record: recs[i]! };
    } while (cursor !== '0');
  }

  stats(): Promise<Record<string, number | string>> {
    return this.statsRaw().catch(this.fail);
  }

  private async statsRaw(): Promise<Record<string, number | string>> {
    const info = this.redis instanceof Redis ? await this.redis.info('memory') : '';
    const m = /used_memory:(\d+)/.exec(info);
    const expiring = await this.redis.zcard(this.keys.expiry);
    return { prefix: this.keys.prefix, layout: this.layout, ...(m ? { usedMemoryBytes: Number(m[1]) } : {}), expiring, ...(await this.ops.stats()) };
  }

  hasPostings(id: string, keys: Float64Array): Promise<boolean[]> {
    return this.ops.hasPostings(id, keys).catch(this.fail);
  }

  /** Store-level consistency: records missing from the ids set (errors), ids and postings left by unacknowledged writes (warnings). */
  checkStore(): Promise<{ errors: string[]; warnings: string[] }> {
    return this.checkRaw().catch(this.fail);
  }

  private async checkRaw(): Promise<{ errors: string[]; warnings: string[] }> {
    const errors: string[] = [];
    const warnings: string[] = [];
    const r = this.redis;
    const k = this.keys;
    if (!(r instanceof Redis)) return { errors, warnings: ['store check skipped on Redis Cluster'] };
    const docPrefix = k.doc('');
    let cursor = '0';
    let notListed = 0;
    do {
      const [next, docKeys] = await r.scan(cursor, 'MATCH', `${docPrefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of docKeys) {
        const id = key.slice(docPrefix.length);
        if (!(await r.sismember(k.ids, id))) {
          if (notListed++ < 5) errors.push(`document "${id}" has a record but is missing from ${k.ids}`);
        }
      }
    } while (cursor !== '0');
    if (notListed > 5) errors.push(`… ${notListed} documents missing from ${k.ids} in all`);
    let dangling = 0;
    cursor = '0';
    do {
      const [next, ids] = await r.sscan(k.ids, cursor, 'COUNT', 1000);
      cursor = next;
      for (const id of ids) if (!(await r.exists(k.doc(id)))) dangling++;
    } while (cursor !== '0');
    if (dangling) warnings.push(`${dangling} ids in ${k.ids} without a record (left by writes that were never acknowledged; harmless, counted by size())`);
    warnings.push(...(await this.ops.checkWarnings()));
    errors.push(...(await this.ops.checkErrors()));
    return { errors, warnings };
  }

  /** Cluster labels under P:cl:… (src/store/redis/clusters.ts), shared by every process. */
  clusterState(): ClusterState {
    return (this.clusters ??= new RedisClusterState(this.redis, this.keys.prefix, this.multiKey, this.fail));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
    // A QUIT that failed while Redis was away left the client reconnecting, which held the process
    // open forever (a CLI command against a refused port hung 2 runs in 12 under load).
    this.redis.disconnect();
  }
}

/** `host:port` of a client: its own options, or a Cluster's first startup node. */
function addressOf(redis: Client): string {
  if (redis instanceof Redis) return `${redis.options.host ?? '127.0.0.1'}:${redis.options.port ?? 6379}`;
  const node = (redis as unknown as { startupNodes?: { host?: string; port?: number }[] }).startupNodes?.[0];
  return node ? `${node.host ?? '127.0.0.1'}:${node.port ?? 6379}` : 'Redis Cluster';
}
