/**
 * Redis store (ioredis). Two key layouts (docs/stores.md), with P the prefix (default `nd`):
 *
 * Common to both:
 *   P:manifest           string  the index manifest (JSON)
 *   P:layout             string  `log <token>` or `sets` (absent: `sets`, stores made before layouts)
 *   P:doc:<id>           string  the document's encoded record
 *   P:ids                set     every document id (size, scan)
 * `log` (the default for new stores):
 *   P:log                list    one binary entry per write batch (src/store/redisLog.ts); every
 *                                process folds it into an in-memory band table and looks up there
 * `sets`:
 *   P:key:<decimal key>  set     ids of the documents that have this band key
 *
 * Standalone Redis: a write batch is one MULTI (log) or one Lua script call (sets): atomic, one round
 * trip. Redis Cluster: no multi-key commands; write order is postings (or the log entry) first, the
 * record last, and a reader ignores postings whose record is missing, so a writer dying mid-batch
 * never makes a half-written document visible.
 * @module
 */
import { Redis, Cluster } from 'ioredis';
import type { NearDupStore, PutEntry, StoredDoc, StoreManifest } from './types.js';
import { StoreUnavailableError } from './errors.js';
import { LogReplica, encodeLogEntry, decodeLogEntry, type LogDoc } from './redisLog.js';
import { randomBytes } from 'node:crypto';
import { RedisClusterState } from './redisClusters.js';
import type { ClusterState } from './clusterState.js';

type Client = Redis | Cluster;

/** Default time a command may take before the request fails with 503 (a paused or partitioned Redis). */
export const REDIS_COMMAND_TIMEOUT_MS = 2000;

/** How long a writer waits for another process's write lock before giving up (ms). */
export const REDIS_LOCK_WAIT_MS = 30_000;
/**
 * Expiry of the write lock (ms): a process that dies holding it blocks other writers at most this
 * long. A write batch that takes longer loses the lock; its documents are still all written.
 */
export const REDIS_LOCK_TTL_MS = 10_000;

/** Deletes the lock key only when it still holds this writer's token. KEYS: lock. ARGV: token. */
const UNLOCK_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Reply errors that mean "not now" rather than "wrong request". */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|MISCONF|TRYAGAIN|CLUSTERDOWN|NOREPLICAS)\b/;

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTCONN', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const CONNECTION_MESSAGE = /Command timed out|Connection is closed|Stream isn't writeable|Failed to refresh slots|None of startup nodes/;

/**
 * Turns connection failures, timeouts and transient replies into {@link StoreUnavailableError}, so the
 * service answers 503 + Retry-After instead of 500 (or hanging) while Redis is away.
 */
function unavailable(e: unknown): never {
  const err = e as Error & { code?: string };
  const msg = err?.message ?? String(e);
  const transient =
    err?.name === 'ReplyError'
      ? TRANSIENT_REPLY.test(msg)
      : err?.name === 'MaxRetriesPerRequestError' || err?.name === 'ClusterAllFailedError' || NETWORK_CODES.has(err?.code ?? '') || CONNECTION_MESSAGE.test(msg);
  if (!transient) throw err;
  throw new StoreUnavailableError(`Redis unavailable: ${msg}`, 1, { cause: e });
}

/**
 * ARGV: prefix, then per document: id, record, new keys, old keys (each key list one string of
 * space-separated decimal keys: 4 arguments per document keep the client's encoding work small).
 */
const PUT_LUA = `
local p = ARGV[1]
for i = 2, #ARGV, 4 do
  local id = ARGV[i]
  for k in string.gmatch(ARGV[i + 3], '%d+') do redis.call('SREM', p .. ':key:' .. k, id) end
  for k in string.gmatch(ARGV[i + 2], '%d+') do redis.call('SADD', p .. ':key:' .. k, id) end
  redis.call('SET', p .. ':doc:' .. id, ARGV[i + 1])
  redis.call('SADD', p .. ':ids', id)
end
return 1`;

/**
 * ARGV: prefix, limit, then one key list per query. Returns per query {id, record, id, record, …}.
 * One SUNION and one MGET per query: two Redis calls instead of one per key and per candidate.
 */
const LOOKUP_LUA = `
local p = ARGV[1]
local limit = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV do
  local keys = {}
  for k in string.gmatch(ARGV[i], '%d+') do keys[#keys + 1] = p .. ':key:' .. k end
  local res = {}
  if #keys > 0 then
    local ids = redis.call('SUNION', unpack(keys))
    if #ids > limit then
      for j = #ids, limit + 1, -1 do ids[j] = nil end
    end
    -- MGET in chunks: Lua's unpack is limited to a few thousand values.
    for c = 1, #ids, 1000 do
      local dk = {}
      local last = math.min(#ids, c + 999)
      for j = c, last do dk[#dk + 1] = p .. ':doc:' .. ids[j] end
      local recs = redis.call('MGET', unpack(dk))
      for j = c, last do
        local rec = recs[j - c + 1]
        if rec then
          res[#res + 1] = ids[j]
          res[#res + 1] = rec
        end
      end
    end
  end
  out[#out + 1] = res
end
return out`;

/** The replies of a MULTI … EXEC, throwing the first command error (or a discarded transaction). */
function execResults(res: [Error | null, unknown][] | null): unknown[] {
  if (!res) throw new Error('Redis transaction was discarded');
  for (const [err] of res) if (err) throw err;
  return res.map(([, v]) => v);
}

/**
 * The atomic end of a compaction. KEYS: log, the rewritten list, layout, compacted. ARGV: L (entries
 * rewritten), the token the rewrite was made under, the new token, c (entries of the rewrite).
 * Appends the entries pushed since (positions ≥ L) to the rewrite, swaps it in, records the
 * renumbering and returns how many entries it carried over (−1: the store changed identity).
 */
const COMPACT_LUA = `
if redis.call('GET', KEYS[3]) ~= ARGV[2] then return -1 end
local L = tonumber(ARGV[1])
local tail = redis.call('LRANGE', KEYS[1], L, -1)
for i = 1, #tail, 1000 do redis.call('RPUSH', KEYS[2], unpack(tail, i, math.min(#tail, i + 999))) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[1]) else redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[3], ARGV[3])
redis.call('SET', KEYS[4], cjson.encode({ from = ARGV[2], to = ARGV[3], rewritten = L, entries = tonumber(ARGV[4]) }))
return #tail`;

/** The record of the last compaction (`P:compacted`), or null. */
function parseCompacted(raw: string | null): { from: string; to: string; rewritten: number; entries: number } | null {
  if (!raw) return null;
  try {
    const o = JSON.parse(raw) as { from: unknown; to: unknown; rewritten: unknown; entries: unknown };
    if (typeof o.from === 'string' && typeof o.to === 'string' && typeof o.rewritten === 'number' && typeof o.entries === 'number') {
      return { from: o.from, to: o.to, rewritten: o.rewritten, entries: o.entries };
    }
  } catch {
    // fall through: an unreadable record means a full fold
  }
  return null;
}

/** Total bytes of the first `n` entries of a list (read in chunks). */
async function logBytes(r: Redis, key: string, n: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < n; i += 64) for (const b of await r.lrangeBuffer(key, i, Math.min(n, i + 64) - 1)) total += b.length;
  return total;
}

interface Scripted {
  ndPutBuffer(...args: (string | Buffer)[]): Promise<unknown>;
  ndLookupBuffer(...args: string[]): Promise<Buffer[][]>;
}

/** The key layouts of {@link RedisStore}: see the module comment and docs/stores.md. */
export type RedisLayout = 'log' | 'sets';

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
}

/** Log entries read per round trip while catching up. */
const LOG_READ_CHUNK = 32;

/** A store in Redis, shareable by several processes. */
export class RedisStore implements NearDupStore {
  readonly kind = 'redis';
  private readonly p: string;
  private readonly scripted: boolean;
  private readonly wantedLayout: RedisLayout | undefined;
  /** The layout in force (known after open). */
  layout: RedisLayout = 'sets';
  private token = '';
  private replica: LogReplica | null = null;
  private manifest: StoreManifest | null = null;
  private logChain: Promise<unknown> = Promise.resolve();
  private syncRunning: Promise<void> | null = null;
  private syncNext: Promise<void> | null = null;
  private readonly writeLock: boolean;
  /**
   * Lock tokens this process may have left behind: a SET NX that timed out may still run when Redis
   * comes back, and an unlock may fail. They are released before the next acquisition.
   */
  private readonly strayLocks = new Set<string>();

  constructor(
    private readonly redis: Client,
    options: RedisStoreOptions = {},
  ) {
    this.p = options.prefix ?? 'nd';
    this.wantedLayout = options.layout;
    this.writeLock = options.writeLock ?? true;
    if (options.layout !== undefined && options.layout !== 'log' && options.layout !== 'sets') {
      throw new RangeError(`Redis layout must be log or sets, got "${String(options.layout)}"`);
    }
    // Scripts touch keys of many hash slots: only on standalone Redis.
    this.scripted = redis instanceof Redis && options.scripts !== false;
    if (this.scripted) {
      redis.defineCommand('ndPut', { numberOfKeys: 0, lua: PUT_LUA });
      redis.defineCommand('ndLookup', { numberOfKeys: 0, lua: LOOKUP_LUA });
    }
  }

  /**
   * Connects to `redis://[:password@]HOST:PORT[/DB][?prefix=NAME&layout=log|sets&cluster=1&scripts=0&timeout=MS&lock=0]`.
   * lock=0 turns the cross-process write lock off (one writer process only).
   * With cluster=1 the address is a seed node of a Redis Cluster; scripts=0 uses single-key
   * commands only (the Cluster code path) on standalone Redis too. `layout` picks the key layout of
   * a new store (default log). `timeout=MS` bounds each command
   * (default 2000): past it, or while Redis is unreachable, calls fail with {@link StoreUnavailableError}.
   */
  static fromUrl(url: string): RedisStore {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new RangeError(`bad Redis URL "${url}"`);
    }
    const prefix = u.searchParams.get('prefix') ?? 'nd';
    const scripts = u.searchParams.get('scripts') !== '0';
    const layoutParam = u.searchParams.get('layout');
    if (layoutParam !== null && layoutParam !== 'log' && layoutParam !== 'sets') {
      throw new RangeError(`bad Redis URL "${url}": layout must be log or sets`);
    }
    const layout = (layoutParam ?? undefined) as RedisLayout | undefined;
    const lockParam = u.searchParams.get('lock');
    if (lockParam !== null && lockParam !== '0' && lockParam !== '1') throw new RangeError(`bad Redis URL "${url}": lock must be 0 or 1`);
    const writeLock = lockParam !== '0';
    const cluster = u.searchParams.get('cluster');
    const timeout = Number(u.searchParams.get('timeout') ?? REDIS_COMMAND_TIMEOUT_MS);
    if (!(Number.isInteger(timeout) && timeout > 0)) throw new RangeError(`bad Redis URL "${url}": timeout must be a positive number of milliseconds`);
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
    if (cluster === '1' || cluster === 'true') {
      const host = u.hostname || '127.0.0.1';
      const port = Number(u.port || 6379);
      const { maxRetriesPerRequest, retryStrategy, ...clusterCommon } = common;
      return new RedisStore(new Cluster([{ host, port }], { ...clusterCommon, clusterRetryStrategy: retryStrategy, redisOptions: { password: u.password || undefined, maxRetriesPerRequest, commandTimeout: timeout } }), { prefix, layout, writeLock });
    }
    u.search = '';
    const client = new Redis(u.toString(), common);
    // Without a listener, every failed reconnection would print "Unhandled error event".
    client.on('error', () => undefined);
    return new RedisStore(client, { prefix, scripts, layout, writeLock });
  }

  private docKey(id: string): string {
    return `${this.p}:doc:${id}`;
  }

  private bandKey(k: number): string {
    return `${this.p}:key:${k}`;
  }

  open(manifest: StoreManifest): Promise<StoreManifest | null> {
    return this.openRaw(manifest).catch(unavailable);
  }

  private async openRaw(manifest: StoreManifest): Promise<StoreManifest | null> {
    const r = this.redis;
    const layoutKey = `${this.p}:layout`;
    let [raw, layoutValue] = await Promise.all([r.get(`${this.p}:manifest`), r.get(layoutKey)]);
    let existing: StoreManifest | null = null;
    if (raw === null) {
      // A new store: the layout first (SET NX: of several processes starting at once, one decides),
      // then the manifest. A manifest without a layout key is a store made before layouts existed.
      const mine = (this.wantedLayout ?? 'log') === 'log' ? `log ${randomBytes(8).toString('hex')}` : 'sets';
      await r.set(layoutKey, mine, 'NX');
      layoutValue = await r.get(layoutKey);
      const ok = await r.set(`${this.p}:manifest`, JSON.stringify(manifest), 'NX');
      if (ok !== 'OK') raw = await r.get(`${this.p}:manifest`);
    }
    if (raw !== null) {
      try {
        existing = JSON.parse(raw) as StoreManifest;
      } catch {
        throw new Error(`Redis key ${this.p}:manifest is not valid JSON`);
      }
    }
    const layout: RedisLayout = layoutValue?.startsWith('log ') ? 'log' : 'sets';
    if (layoutValue !== null && layoutValue !== 'sets' && layout !== 'log') throw new Error(`Redis key ${layoutKey} holds an unknown layout "${layoutValue}"`);
    if (this.wantedLayout && this.wantedLayout !== layout) {
      throw new RangeError(`the Redis store at prefix "${this.p}" uses the ${layout} layout, not ${this.wantedLayout} (use another prefix, or drop ?layout=)`);
    }
    this.layout = layout;
    this.manifest = existing ?? manifest;
    if (layout === 'log') {
      this.token = layoutValue!;
      this.replica = await LogReplica.create(this.manifest);
      await this.syncLog();
    }
    return existing;
  }

  private logKey(): string {
    return `${this.p}:log`;
  }

  /** Runs log-folding steps one at a time: a log entry is folded exactly once, in list order. */
  private serialLog<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.logChain.then(fn, fn);
    this.logChain = run.catch(() => undefined);
    return run;
  }

  /**
   * Folds the log entries other writers appended before this call (one round trip when none).
   * Callers arriving while a fold is running share the next one, which starts after they arrived:
   * concurrent queries cost one round trip together, not one each.
   */
  private syncLog(): Promise<void> {
    if (this.syncNext) return this.syncNext;
    if (this.syncRunning) {
      this.syncNext = this.syncRunning
        .catch(() => undefined)
        .then(() => {
          this.syncNext = null;
          return this.startSync();
        });
      return this.syncNext;
    }
    return this.startSync();
  }

  private startSync(): Promise<void> {
    const run: Promise<void> = this.serialLog(() => this.foldUpTo(Infinity)).finally(() => {
      if (this.syncRunning === run) this.syncRunning = null;
    });
    this.syncRunning = run;
    return run;
  }

  /**
   * Folds log entries until `end` entries are folded (or the list ends). A changed layout token
   * means the store was deleted and created again (or Redis lost its data): the table is rebuilt.
   */
  private async foldUpTo(end: number): Promise<void> {
    const r = this.redis;
    for (;;) {
      const rep = this.replica!;
      const start = rep.applied;
      const last = Math.min(start + LOG_READ_CHUNK, end) - 1;
      if (last < start) return;
      const [token, entries] = await Promise.all([r.get(`${this.p}:layout`), r.lrangeBuffer(this.logKey(), start, last)]);
      if (token !== this.token) {
        // A compaction that rewrote entries [0, L) as c entries: a table that had folded at least
        // L entries is already what the rewritten part describes; it continues at c + (applied − L).
        const moved = token === null ? null : parseCompacted(await r.get(`${this.p}:compacted`));
        if (moved && moved.from === this.token && moved.to === token && rep.applied >= moved.rewritten) {
          rep.applied = moved.entries + (rep.applied - moved.rewritten);
          this.token = token;
          continue;
        }
        // Deleted and created again, or Redis lost its data: rebuild the table from what is there.
        // A store that is gone entirely is created again, with this index's manifest.
        this.replica = await LogReplica.create(this.manifest!);
        if (token === null) {
          await r.set(`${this.p}:layout`, `log ${randomBytes(8).toString('hex')}`, 'NX');
          await r.set(`${this.p}:manifest`, JSON.stringify(this.manifest), 'NX');
          this.token = (await r.get(`${this.p}:layout`)) ?? '';
        } else this.token = token;
        continue;
      }
      for (const b of entries) {
        await rep.apply(decodeLogEntry(b, `Redis ${this.logKey()}[${rep.applied}]`));
        rep.applied++;
      }
      if (entries.length < last - start + 1) {
        if (end !== Infinity) throw new Error(`Redis list ${this.logKey()} has ${rep.applied} entries, ${end} expected (was it trimmed?)`);
        return;
      }
    }
  }

  /**
   * After this process appended its entry at list position `at` of the log that had layout token
   * `tokenAtPush`: folds the entries before it, then its own. When the token has changed since
   * (a compaction renumbered the list, or the store was recreated), a full fold covers the entry.
   */
  private foldOwn(at: number, tokenAtPush: string | null, op: 'put' | 'remove', docs: LogDoc[]): Promise<void> {
    return this.serialLog(async () => {
      if (tokenAtPush !== this.token) return this.foldUpTo(Infinity);
      if (this.replica!.applied > at) return; // already read back by a concurrent sync
      await this.foldUpTo(at);
      if (tokenAtPush !== this.token) return this.foldUpTo(Infinity);
      await this.replica!.apply({ op, docs });
      this.replica!.applied = at + 1;
    });
  }

  /**
   * Rewrites the log as one put entry per 1,000 live documents (standalone Redis only), dropping
   * replaced and removed versions and documents whose record is missing. Entries other processes
   * append meanwhile are kept after the rewritten part. Processes that had folded the whole
   * rewritten part carry on where they were; others fold the new log from the start.
   */
  compact(): Promise<{ entriesBefore: number; entriesAfter: number; documents: number; bytesBefore: number; bytesAfter: number }> {
    return this.compactRaw().catch(unavailable);
  }

  private async compactRaw(): Promise<{ entriesBefore: number; entriesAfter: number; documents: number; bytesBefore: number; bytesAfter: number }> {
    if (!this.replica) throw new Error('compaction applies to the log layout; this store uses the sets layout');
    if (!this.scripted) throw new Error('compaction needs standalone Redis with multi-key commands (not Cluster, not scripts=0)');
    const r = this.redis as Redis;
    await this.syncLog();
    return this.serialLog(async () => {
      await this.foldUpTo(Infinity);
      const rep = this.replica!;
      const L = rep.applied;
      const oldToken = this.token;
      const bytesBefore = await logBytes(r, this.logKey(), L);
      const tmp = `${this.p}:log:compacting`;
      await r.del(tmp);
      let batch: LogDoc[] = [];
      let entries = 0;
      let documents = 0;
      let bytesAfter = 0;
      const flush = async () => {
        if (!batch.length) return;
        // Only documents whose record exists: the rest are leftovers of writes that died.
        const ids = batch.map((d) => d.id);
        const exists = await Promise.all(ids.map((id) => r.exists(this.docKey(id))));
        const live = batch.filter((_, i) => exists[i] === 1);
        batch = [];
        if (!live.length) return;
        const e = encodeLogEntry('put', live);
        await r.rpush(tmp, e);
        entries++;
        documents += live.length;
        bytesAfter += e.length;
      };
      for await (const d of rep.table.scan()) {
        batch.push({ id: d.id, keys: new Float64Array(d.record.slice().buffer) });
        if (batch.length === 1000) await flush();
      }
      await flush();
      const newToken = `log ${randomBytes(8).toString('hex')}`;
      const tail = (await r.eval(COMPACT_LUA, 4, this.logKey(), tmp, `${this.p}:layout`, `${this.p}:compacted`, String(L), oldToken, newToken, String(entries))) as number;
      if (tail < 0) throw new Error(`the Redis store at prefix "${this.p}" changed identity during compaction; nothing was rewritten`);
      rep.applied = entries;
      this.token = newToken;
      return { entriesBefore: L + tail, entriesAfter: entries + tail, documents, bytesBefore, bytesAfter };
    });
  }

  /**
   * Runs `fn` holding the write lock `P:writer` (SET NX PX with a random token, released by a
   * compare-and-delete script), so that no other process writes between this process's lookups and
   * its write. Waits up to {@link REDIS_LOCK_WAIT_MS}, then fails with {@link StoreUnavailableError}.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.writeLock) return fn();
    const key = `${this.p}:writer`;
    for (const t of this.strayLocks) {
      await this.redis.eval(UNLOCK_LUA, 1, key, t).catch(unavailable);
      this.strayLocks.delete(t);
    }
    const token = randomBytes(12).toString('hex');
    const deadline = Date.now() + REDIS_LOCK_WAIT_MS;
    let wait = 1;
    for (;;) {
      let ok: string | null;
      try {
        ok = await this.redis.set(key, token, 'PX', REDIS_LOCK_TTL_MS, 'NX');
      } catch (e) {
        this.strayLocks.add(token);
        unavailable(e);
      }
      if (ok === 'OK') break;
      if (Date.now() >= deadline) throw new StoreUnavailableError(`Redis store at prefix "${this.p}" is busy: another process held ${key} for ${REDIS_LOCK_WAIT_MS / 1000} s`, 1);
      await sleep(wait * (0.5 + Math.random()));
      wait = Math.min(wait * 2, 20);
    }
    try {
      return await fn();
    } finally {
      await this.redis.eval(UNLOCK_LUA, 1, key, token).catch(() => this.strayLocks.add(token));
    }
  }

  lookup(queries: Float64Array[], limit: number): Promise<StoredDoc[][]> {
    return this.lookupRaw(queries, limit).catch(unavailable);
  }

  private async lookupRaw(queries: Float64Array[], limit: number): Promise<StoredDoc[][]> {
    if (this.replica) return this.lookupLog(queries, limit);
    if (this.scripted) {
      const args = [this.p, String(limit)];
      for (const keys of queries) args.push(keys.join(' '));
      const res = await (this.redis as unknown as Scripted).ndLookupBuffer(...args);
      return res.map((flat) => {
        const out: StoredDoc[] = [];
        for (let i = 0; i < flat.length; i += 2) out.push({ id: flat[i]!.toString('utf8'), record: flat[i + 1]! });
        return out;
      });
    }
    const r = this.redis;
    const members = await Promise.all(queries.map((keys) => Promise.all(Array.from(keys, (k) => r.smembers(this.bandKey(k))))));
    const wanted = new Map<string, Promise<Buffer | null>>();
    const perQuery = members.map((lists) => {
      const ids = new Set<string>();
      for (const l of lists) {
        for (const id of l) {
          if (ids.size >= limit) break;
          ids.add(id);
        }
      }
      for (const id of ids) if (!wanted.has(id)) wanted.set(id, r.getBuffer(this.docKey(id)));
      return ids;
    });
    const records = new Map<string, Buffer | null>();
    await Promise.all([...wanted].map(async ([id, pr]) => records.set(id, await pr)));
    return perQuery.map((ids) => {
      const out: StoredDoc[] = [];
      for (const id of ids) {
        const rec = records.get(id);
        if (rec) out.push({ id, record: rec });
      }
      return out;
    });
  }

  put(entries: PutEntry[]): Promise<void> {
    return this.putRaw(entries).catch(unavailable);
  }

  private async putRaw(entries: PutEntry[]): Promise<void> {
    if (this.replica) return this.putLog(entries);
    if (this.scripted) {
      const args: (string | Buffer)[] = [this.p];
      for (const e of entries) {
        args.push(e.id, Buffer.from(e.record.buffer, e.record.byteOffset, e.record.byteLength), e.keys.join(' '), e.oldKeys ? e.oldKeys.join(' ') : '');
      }
      await (this.redis as unknown as Scripted).ndPutBuffer(...args);
      return;
    }
    const r = this.redis;
    const all: Promise<unknown>[] = [];
    for (const e of entries) {
      if (e.oldKeys) {
        const keep = new Set(e.keys);
        for (const k of e.oldKeys) if (!keep.has(k)) all.push(r.srem(this.bandKey(k), e.id));
      }
      for (const k of e.keys) all.push(r.sadd(this.bandKey(k), e.id));
      // The record last (commands run in call order on the connection): a record that exists always
      // has its postings and its ids entry, whatever point a crash or an outage stopped the batch at.
      all.push(r.sadd(`${this.p}:ids`, e.id));
      all.push(r.set(this.docKey(e.id), Buffer.from(e.record.buffer, e.record.byteOffset, e.record.byteLength)));
    }
    await Promise.all(all);
  }

  get(ids: string[]): Promise<(Uint8Array | null)[]> {
    return this.getRaw(ids).catch(unavailable);
  }

  private async getRaw(ids: string[]): Promise<(Uint8Array | null)[]> {
    if (ids.length === 0) return [];
    // One MGET on standalone Redis; per-key GETs (auto-pipelined) on Cluster, where keys span slots.
    if (this.scripted) return this.redis.mgetBuffer(ids.map((id) => this.docKey(id)));
    return Promise.all(ids.map((id) => this.redis.getBuffer(this.docKey(id))));
  }

  remove(id: string, keys: Float64Array): Promise<boolean> {
    return this.removeRaw(id, keys).catch(unavailable);
  }

  private async removeRaw(id: string, keys: Float64Array): Promise<boolean> {
    if (this.replica) return this.removeLog(id);
    const r = this.redis;
    // The record goes first: from then on the document is invisible even if the rest fails.
    const [n] = await Promise.all([r.del(this.docKey(id)), r.srem(`${this.p}:ids`, id), ...Array.from(keys, (k) => r.srem(this.bandKey(k), id))]);
    return n === 1;
  }

  size(): Promise<number> {
    return this.sizeRaw().catch(unavailable);
  }

  private async sizeRaw(): Promise<number> {
    return this.redis.scard(`${this.p}:ids`);
  }

  async *scan(): AsyncIterable<StoredDoc> {
    let cursor = '0';
    do {
      const [next, ids] = await this.redis.sscan(`${this.p}:ids`, cursor, 'COUNT', 1000).catch(unavailable);
      cursor = next;
      const recs = await this.getRaw(ids).catch(unavailable);
      for (let i = 0; i < ids.length; i++) if (recs[i]) yield { id: ids[i]!, record: recs[i]! };
    } while (cursor !== '0');
  }

  stats(): Promise<Record<string, number | string>> {
    return this.statsRaw().catch(unavailable);
  }

  private async statsRaw(): Promise<Record<string, number | string>> {
    const info = this.redis instanceof Redis ? await this.redis.info('memory') : '';
    const m = /used_memory:(\d+)/.exec(info);
    const out: Record<string, number | string> = { prefix: this.p, layout: this.layout, ...(m ? { usedMemoryBytes: Number(m[1]) } : {}) };
    if (this.replica) {
      await this.syncLog();
      out.logEntries = this.replica.applied;
      const t = await this.replica.table.stats();
      out.localDistinctKeys = t.distinctKeys!;
      out.localTableBytes = (t.keyTableSlots as number) * 12 + (t.postingBytes as number) + (t.arenaBytes as number);
    }
    return out;
  }

  // ---- log layout ----

  /** Records by id, in order (MGET on standalone Redis, one GET per id on Cluster). */
  private records(ids: string[]): Promise<(Buffer | null)[]> {
    if (ids.length === 0) return Promise.resolve([]);
    if (this.scripted) return this.redis.mgetBuffer(ids.map((id) => this.docKey(id)));
    return Promise.all(ids.map((id) => this.redis.getBuffer(this.docKey(id))));
  }

  private async lookupLog(queries: Float64Array[], limit: number): Promise<StoredDoc[][]> {
    await this.syncLog();
    const lists = await this.replica!.table.lookup(queries, limit);
    const ids = [...new Set(lists.flatMap((l) => l.map((c) => c.id)))];
    const recs = await this.records(ids);
    const byId = new Map<string, Buffer>();
    ids.forEach((id, i) => {
      if (recs[i]) byId.set(id, recs[i]!);
    });
    // A posting whose record is missing belongs to a write in progress (or one that died): skip it.
    return lists.map((l) => l.flatMap((c) => (byId.has(c.id) ? [{ id: c.id, record: byId.get(c.id)! }] : [])));
  }

  private async putLog(entries: PutEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const docs: LogDoc[] = entries.map((e) => ({ id: e.id, keys: e.keys }));
    const entry = encodeLogEntry('put', docs);
    const r = this.redis;
    let at: number;
    let token: string | null;
    if (this.scripted) {
      // One transaction: the log entry, the records and the ids appear together or not at all;
      // the layout token read in it tells which numbering of the log `at` belongs to.
      const pairs: (string | Buffer)[] = [];
      for (const e of entries) pairs.push(this.docKey(e.id), Buffer.from(e.record.buffer, e.record.byteOffset, e.record.byteLength));
      const res = execResults(
        await (r as Redis)
          .multi()
          .get(`${this.p}:layout`)
          .rpush(this.logKey(), entry)
          .mset(...pairs)
          .sadd(`${this.p}:ids`, ...entries.map((e) => e.id))
          .exec(),
      );
      token = res[0] as string | null;
      at = Number(res[1]) - 1;
    } else {
      // Cluster: the entry first, then ids and records (readers skip postings without a record).
      ({ at, token } = await this.pushOutsideTransaction(entry));
      await Promise.all(entries.map((e) => r.sadd(`${this.p}:ids`, e.id)));
      await Promise.all(entries.map((e) => r.set(this.docKey(e.id), Buffer.from(e.record.buffer, e.record.byteOffset, e.record.byteLength))));
    }
    await this.foldOwn(at, token, 'put', docs);
  }

  private async removeLog(id: string): Promise<boolean> {
    const r = this.redis;
    const entry = encodeLogEntry('remove', [{ id }]);
    let at: number;
    let token: string | null;
    let removed: boolean;
    if (this.scripted) {
      const res = execResults(await (r as Redis).multi().del(this.docKey(id)).srem(`${this.p}:ids`, id).get(`${this.p}:layout`).rpush(this.logKey(), entry).exec());
      removed = res[0] === 1;
      token = res[2] as string | null;
      at = Number(res[3]) - 1;
    } else {
      // The record first: from then on the document is invisible even if the rest fails.
      removed = (await r.del(this.docKey(id))) === 1;
      await r.srem(`${this.p}:ids`, id);
      ({ at, token } = await this.pushOutsideTransaction(entry));
    }
    await this.foldOwn(at, token, 'remove', [{ id }]);
    return removed;
  }

  /**
   * RPUSH without a transaction (Cluster): the token read before and after the push; when they
   * differ (a compaction or a recreation happened meanwhile) the position's numbering is unknown and
   * null makes foldOwn fold everything.
   */
  private async pushOutsideTransaction(entry: Buffer): Promise<{ at: number; token: string | null }> {
    const r = this.redis;
    const before = await r.get(`${this.p}:layout`);
    const at = (await r.rpush(this.logKey(), entry)) - 1;
    const after = await r.get(`${this.p}:layout`);
    return { at, token: before === after ? before : null };
  }

  async hasPostings(id: string, keys: Float64Array): Promise<boolean[]> {
    if (this.replica) {
      await this.syncLog().catch(unavailable);
      const have = new Set(await this.replica.keysOf(id));
      return Array.from(keys, (k) => have.has(k));
    }
    const r = this.redis;
    const got = await Promise.all(Array.from(keys, (k) => r.sismember(this.bandKey(k), id))).catch(unavailable);
    return got.map((x) => x === 1);
  }

  /** Store-level consistency: records missing from the ids set (errors), ids and postings left by unacknowledged writes (warnings). */
  async checkStore(): Promise<{ errors: string[]; warnings: string[] }> {
    const errors: string[] = [];
    const warnings: string[] = [];
    const r = this.redis;
    if (!(r instanceof Redis)) return { errors, warnings: ['store check skipped on Redis Cluster'] };
    const docPrefix = `${this.p}:doc:`;
    let cursor = '0';
    let notListed = 0;
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${docPrefix}*`, 'COUNT', 1000).catch(unavailable);
      cursor = next;
      for (const k of keys) {
        const id = k.slice(docPrefix.length);
        if (!(await r.sismember(`${this.p}:ids`, id).catch(unavailable))) {
          if (notListed++ < 5) errors.push(`document "${id}" has a record but is missing from ${this.p}:ids`);
        }
      }
    } while (cursor !== '0');
    if (notListed > 5) errors.push(`… ${notListed} documents missing from ${this.p}:ids in all`);
    let dangling = 0;
    cursor = '0';
    do {
      const [next, ids] = await r.sscan(`${this.p}:ids`, cursor, 'COUNT', 1000).catch(unavailable);
      cursor = next;
      for (const id of ids) if (!(await r.exists(this.docKey(id)).catch(unavailable))) dangling++;
    } while (cursor !== '0');
    if (dangling) warnings.push(`${dangling} ids in ${this.p}:ids without a record (left by writes that were never acknowledged; harmless, counted by size())`);
    if (this.replica) {
      await this.syncLog().catch(unavailable);
      let orphans = 0;
      for await (const d of this.replica.table.scan()) if (!(await r.exists(this.docKey(d.id)).catch(unavailable))) orphans++;
      if (orphans) warnings.push(`${orphans} documents in ${this.logKey()} without a record (left by writes that were never acknowledged; never returned by lookups)`);
    }
    return { errors, warnings };
  }

  private clusters: RedisClusterState | undefined;

  /** Cluster labels under P:cl:… (src/store/redisClusters.ts), shared by every process. */
  clusterState(): ClusterState {
    return (this.clusters ??= new RedisClusterState(this.redis, this.p, this.scripted, unavailable));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
