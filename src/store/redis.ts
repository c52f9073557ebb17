/**
 * Redis store (ioredis). Key layout (docs/stores.md), with P the prefix (default `nd`):
 *   P:manifest           string  the index manifest (JSON)
 *   P:doc:<id>           string  the document's encoded record
 *   P:key:<decimal key>  set     ids of the documents that have this band key
 *   P:ids                set     every document id (size, scan)
 * Standalone Redis: a batch of writes, and a batch of lookups, is one Lua script call each
 * (atomic, one round trip, no per-command client overhead). Redis Cluster: every command touches
 * one key and keys spread over hash slots; commands are auto-pipelined per node. Write order there:
 * postings first, the record last; a reader ignores postings whose record is missing, so a writer
 * dying mid-batch never makes a half-written document visible.
 * @module
 */
import { Redis, Cluster } from 'ioredis';
import type { NearDupStore, PutEntry, StoredDoc, StoreManifest } from './types.js';
import { StoreUnavailableError } from './errors.js';

type Client = Redis | Cluster;

/** Default time a command may take before the request fails with 503 (a paused or partitioned Redis). */
export const REDIS_COMMAND_TIMEOUT_MS = 2000;

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

interface Scripted {
  ndPutBuffer(...args: (string | Buffer)[]): Promise<unknown>;
  ndLookupBuffer(...args: string[]): Promise<Buffer[][]>;
}

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** Key prefix, so several indexes can share one Redis. Default `nd`. */
  prefix?: string;
  /** Batch writes and lookups in Lua scripts. Default true on standalone Redis; always false on Cluster. */
  scripts?: boolean;
}

/** A store in Redis, shareable by several processes. */
export class RedisStore implements NearDupStore {
  readonly kind = 'redis';
  private readonly p: string;
  private readonly scripted: boolean;

  constructor(
    private readonly redis: Client,
    options: RedisStoreOptions = {},
  ) {
    this.p = options.prefix ?? 'nd';
    // Scripts touch keys of many hash slots: only on standalone Redis.
    this.scripted = redis instanceof Redis && options.scripts !== false;
    if (this.scripted) {
      redis.defineCommand('ndPut', { numberOfKeys: 0, lua: PUT_LUA });
      redis.defineCommand('ndLookup', { numberOfKeys: 0, lua: LOOKUP_LUA });
    }
  }

  /**
   * Connects to `redis://[:password@]HOST:PORT[/DB][?prefix=NAME&cluster=1&scripts=0&timeout=MS]`.
   * With cluster=1 the address is a seed node of a Redis Cluster; scripts=0 uses plain pipelined
   * commands (the Cluster code path) on standalone Redis too. `timeout=MS` bounds each command
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
      return new RedisStore(new Cluster([{ host, port }], { ...clusterCommon, clusterRetryStrategy: retryStrategy, redisOptions: { password: u.password || undefined, maxRetriesPerRequest, commandTimeout: timeout } }), { prefix });
    }
    u.search = '';
    const client = new Redis(u.toString(), common);
    // Without a listener, every failed reconnection would print "Unhandled error event".
    client.on('error', () => undefined);
    return new RedisStore(client, { prefix, scripts });
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
    // SET NX: of several processes starting at once, exactly one writes the manifest.
    const ok = await this.redis.set(`${this.p}:manifest`, JSON.stringify(manifest), 'NX');
    if (ok === 'OK') return null;
    const raw = await this.redis.get(`${this.p}:manifest`);
    try {
      return JSON.parse(raw ?? 'null') as StoreManifest;
    } catch {
      throw new Error(`Redis key ${this.p}:manifest is not valid JSON`);
    }
  }

  lookup(queries: Float64Array[], limit: number): Promise<StoredDoc[][]> {
    return this.lookupRaw(queries, limit).catch(unavailable);
  }

  private async lookupRaw(queries: Float64Array[], limit: number): Promise<StoredDoc[][]> {
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
    return { prefix: this.p, ...(m ? { usedMemoryBytes: Number(m[1]) } : {}) };
  }

  async hasPostings(id: string, keys: Float64Array): Promise<boolean[]> {
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
    return { errors, warnings };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
