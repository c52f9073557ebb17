/**
 * The `sets` key layout of the Redis store: `P:key:<decimal key>` is a Redis set of the ids having
 * that band key. No per-process memory; inserts cost one set insert per key. Two variants, chosen
 * once: {@link ScriptedSetsLayout} (standalone Redis: one Lua call per batch, atomic) and
 * {@link PlainSetsLayout} (Redis Cluster, or `scripts=0`: single-key commands in a crash-safe order).
 * @module
 */
import { Redis } from 'ioredis';
import type { PutEntry, StoredDoc, RemoveEntry } from '../types.js';
import { expiredAmong, recordBuffer, type Client, type LayoutOps, type LogCompaction, type RedisKeys } from './shared.js';

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
 * ARGV: prefix, limit, now ('' for none), then one key list per query. Returns per query {id,
 * record, id, record, …}. One SUNION and one MGET per query: two Redis calls instead of one per key
 * and per candidate. With `now`, ids whose score in P:expiry is at or before it are left out before
 * the limit (expired documents not purged yet must not take the places of live ones).
 */
const LOOKUP_LUA = `
local p = ARGV[1]
local limit = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local out = {}
for i = 4, #ARGV do
  local keys = {}
  for k in string.gmatch(ARGV[i], '%d+') do keys[#keys + 1] = p .. ':key:' .. k end
  local res = {}
  if #keys > 0 then
    local all = redis.call('SUNION', unpack(keys))
    local ids = {}
    for j = 1, #all do
      if #ids >= limit then break end
      local live = true
      if now then
        local at = redis.call('ZSCORE', p .. ':expiry', all[j])
        if at and tonumber(at) <= now then live = false end
      end
      if live then ids[#ids + 1] = all[j] end
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

/** The commands defineCommand adds to the client. */
interface Scripted {
  ndPutBuffer(...args: (string | Buffer)[]): Promise<unknown>;
  ndLookupBuffer(...args: string[]): Promise<Buffer[][]>;
}

/** What both variants of the sets layout do the same way. */
abstract class SetsLayout implements LayoutOps {
  readonly name = 'sets' as const;

  constructor(
    protected readonly redis: Client,
    protected readonly keys: RedisKeys,
  ) {}

  abstract lookup(queries: Float64Array[], limit: number, now?: number): Promise<StoredDoc[][]>;
  abstract put(entries: PutEntry[]): Promise<void>;

  async removeMany(entries: RemoveEntry[]): Promise<boolean[]> {
    const r = this.redis;
    const k = this.keys;
    // One pipeline (auto-pipelining): the records go first, so from then on the documents are
    // invisible even if the rest fails; then the ids and every posting.
    const dels = Promise.all(entries.map((e) => r.del(k.doc(e.id))));
    const rest = Promise.all([r.srem(k.ids, ...entries.map((e) => e.id)), ...entries.flatMap((e) => Array.from(e.keys, (key) => r.srem(k.band(key), e.id)))]);
    const [n] = await Promise.all([dels, rest]);
    return n.map((x) => x === 1);
  }

  async hasPostings(id: string, keys: Float64Array): Promise<boolean[]> {
    const got = await Promise.all(Array.from(keys, (k) => this.redis.sismember(this.keys.band(k), id)));
    return got.map((x) => x === 1);
  }

  stats(): Promise<Record<string, number>> {
    return Promise.resolve({});
  }

  checkWarnings(): Promise<string[]> {
    return Promise.resolve([]);
  }

  checkErrors(): Promise<string[]> {
    // Postings are Redis sets, checked key by key through hasPostings.
    return Promise.resolve([]);
  }

  compact(): Promise<LogCompaction> {
    return Promise.reject(new RangeError(`the Redis store at prefix "${this.keys.prefix}" uses the sets layout, which has no log to compact`));
  }
}

/** Sets layout on standalone Redis: a write batch is one Lua script call (atomic, one round trip). */
export class ScriptedSetsLayout extends SetsLayout {
  constructor(redis: Redis, keys: RedisKeys) {
    super(redis, keys);
    redis.defineCommand('ndPut', { numberOfKeys: 0, lua: PUT_LUA });
    redis.defineCommand('ndLookup', { numberOfKeys: 0, lua: LOOKUP_LUA });
  }

  async lookup(queries: Float64Array[], limit: number, now?: number): Promise<StoredDoc[][]> {
    const args = [this.keys.prefix, String(limit), now === undefined ? '' : String(now)];
    for (const keys of queries) args.push(keys.join(' '));
    const res = await (this.redis as unknown as Scripted).ndLookupBuffer(...args);
    return res.map((flat) => {
      const out: StoredDoc[] = [];
      for (let i = 0; i < flat.length; i += 2) out.push({ id: flat[i]!.toString('utf8'), record: flat[i + 1]! });
      return out;
    });
  }

  async put(entries: PutEntry[]): Promise<void> {
    const args: (string | Buffer)[] = [this.keys.prefix];
    for (const e of entries) args.push(e.id, recordBuffer(e.record), e.keys.join(' '), e.oldKeys ? e.oldKeys.join(' ') : '');
    await (this.redis as unknown as Scripted).ndPutBuffer(...args);
  }
}

/**
 * Sets layout with single-key commands only (Redis Cluster, where keys span hash slots, or
 * `scripts=0`): postings first, the record last, so a record that exists always has its postings.
 */
export class PlainSetsLayout extends SetsLayout {
  async lookup(queries: Float64Array[], limit: number, now?: number): Promise<StoredDoc[][]> {
    const r = this.redis;
    const members = await Promise.all(queries.map((keys) => Promise.all(Array.from(keys, (k) => r.smembers(this.keys.band(k))))));
    // With `now`: the expiry index (one ZMSCORE) leaves expired ids out before the limit.
    const expired = now === undefined ? new Set<string>() : await expiredAmong(r, this.keys, [...new Set(members.flat(2))], now);
    const wanted = new Map<string, Promise<Buffer | null>>();
    const perQuery = members.map((lists) => {
      const ids = new Set<string>();
      for (const l of lists) {
        for (const id of l) {
          if (ids.size >= limit) break;
          if (!expired.has(id)) ids.add(id);
        }
      }
      for (const id of ids) if (!wanted.has(id)) wanted.set(id, r.getBuffer(this.keys.doc(id)));
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

  async put(entries: PutEntry[]): Promise<void> {
    const r = this.redis;
    const all: Promise<unknown>[] = [];
    for (const e of entries) {
      if (e.oldKeys) {
        const keep = new Set(e.keys);
        for (const k of e.oldKeys) if (!keep.has(k)) all.push(r.srem(this.keys.band(k), e.id));
      }
      for (const k of e.keys) all.push(r.sadd(this.keys.band(k), e.id));
      // The record last (commands run in call order on the connection): a record that exists always
      // has its postings and its ids entry, whatever point a crash or an outage stopped the batch at.
      all.push(r.sadd(this.keys.ids, e.id));
      all.push(r.set(this.keys.doc(e.id), recordBuffer(e.record)));
    }
    await Promise.all(all);
  }
}

/** The sets layout for this client: scripted on standalone Redis unless `multiKey` is false. */
export function setsLayout(redis: Client, keys: RedisKeys, multiKey: boolean): LayoutOps {
  return multiKey && redis instanceof Redis ? new ScriptedSetsLayout(redis, keys) : new PlainSetsLayout(redis, keys);
}
