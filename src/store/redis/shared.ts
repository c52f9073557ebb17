/**
 * What every part of the Redis store shares: the client type, the key names under a prefix, the
 * translation of connection failures into {@link StoreUnavailableError}, and the interface each key
 * layout implements (src/store/redis/setsLayout.ts, logLayout.ts; docs/stores.md).
 * @module
 */
import { Redis, type Cluster } from 'ioredis';
import type { PutEntry, StoredDoc, StoreCompaction, RemoveEntry } from '../types.js';
import { StoreUnavailableError } from '../errors.js';
import { DEFAULT_REDIS_TIMEOUT_MS, type RedisLayoutName } from '../spec.js';

/** A standalone connection or a Redis Cluster client. */
export type Client = Redis | Cluster;

/** The key layouts of the Redis store: see docs/stores.md. */
export type RedisLayout = RedisLayoutName;

/** Default time a command may take before the request fails with 503 (a paused or partitioned Redis). */
export const REDIS_COMMAND_TIMEOUT_MS = DEFAULT_REDIS_TIMEOUT_MS;

/** Reply errors that mean "not now" rather than "wrong request". */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|MISCONF|TRYAGAIN|CLUSTERDOWN|NOREPLICAS)\b/;

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTCONN', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const CONNECTION_MESSAGE = /Command timed out|Connection is closed|Stream isn't writeable|Failed to refresh slots|None of startup nodes/;

/**
 * Where a store's Redis is (`host:port`, for messages) and the last connection error its client
 * reported (ioredis' own errors while it reconnects, such as "Reached the max retries per request
 * limit", say neither where nor why).
 */
export class RedisWhere {
  /** The last connection error since the client was last ready. */
  last: (Error & { code?: string }) | undefined;

  constructor(readonly address: string) {}

  /** Follows `client`'s connection errors (the listener also keeps them from ending the process). */
  watch(client: Client): this {
    client.on('error', (e: Error) => (this.last = e));
    client.on('ready', () => (this.last = undefined));
    return this;
  }
}

/** Why a connection failed, in words, from its error code. */
const CODE_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed',
  ENOTCONN: 'not connected',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EAI_AGAIN: 'host name not resolved',
  ENOTFOUND: 'host name not found',
};

/** The words of a connection failure, e.g. "127.0.0.1:6379 is unreachable (connection refused)". */
function describe(err: Error & { code?: string }, where: RedisWhere | undefined): string {
  const msg = err?.message ?? String(err);
  if (!where) return msg;
  const at = where.address;
  if (err?.name === 'ReplyError') return `${at} is not ready: ${msg}`;
  if (/Command timed out/.test(msg)) return `${at} did not answer in time (command timed out)`;
  const cause = CODE_WORDS[err?.code ?? ''] ? err : where.last;
  const code = cause?.code ?? '';
  const why = CODE_WORDS[code] ? `${CODE_WORDS[code]}, ${code}` : cause ? cause.message : 'not connected';
  return `${at} is unreachable (${why})`;
}

/**
 * Turns connection failures, timeouts and transient replies into {@link StoreUnavailableError}, so the
 * service answers 503 + Retry-After instead of 500 (or hanging) while Redis is away; with `where`,
 * the message names the server and why it cannot be reached. Other errors are rethrown unchanged.
 */
export function unavailable(e: unknown, where?: RedisWhere): never {
  const err = e as Error & { code?: string };
  const msg = err?.message ?? String(e);
  const transient = err?.name === 'ReplyError'
    ? TRANSIENT_REPLY.test(msg)
    : err?.name === 'MaxRetriesPerRequestError' || err?.name === 'ClusterAllFailedError' || NETWORK_CODES.has(err?.code ?? '') || CONNECTION_MESSAGE.test(msg);
  if (!transient) throw err;
  throw new StoreUnavailableError(`Redis unavailable: ${describe(err, where)}`, 1, { cause: e });
}

/** The replies of a MULTI … EXEC, throwing the first command error (or a discarded transaction). */
export function execResults(res: [Error | null, unknown][] | null): unknown[] {
  if (!res) throw new Error('Redis transaction was discarded');
  for (const [err] of res) if (err) throw err;
  return res.map(([, v]) => v);
}

/** A record's bytes as a Buffer over the same memory (no copy). */
export function recordBuffer(record: Uint8Array): Buffer {
  return Buffer.from(record.buffer, record.byteOffset, record.byteLength);
}

/** The key names of one store, P its prefix (module comment of src/store/redis/store.ts). */
export class RedisKeys {
  /** `P:manifest`: the index manifest (JSON). */
  readonly manifest: string;
  /** `P:layout`: `log <token>` or `sets`. */
  readonly layout: string;
  /** `P:ids`: every document id. */
  readonly ids: string;
  /** `P:log`: the posting log (log layout). */
  readonly log: string;
  /** `P:compacted`: the record of the last compaction (log layout). */
  readonly compacted: string;
  /** `P:writer`: the cross-process write lock. */
  readonly writer: string;
  /** `P:expiry`: sorted set of the ids that have an expiry, scored by it (ms since the epoch). */
  readonly expiry: string;

  constructor(readonly prefix: string) {
    this.manifest = `${prefix}:manifest`;
    this.layout = `${prefix}:layout`;
    this.ids = `${prefix}:ids`;
    this.log = `${prefix}:log`;
    this.compacted = `${prefix}:compacted`;
    this.writer = `${prefix}:writer`;
    this.expiry = `${prefix}:expiry`;
  }

  /** `P:doc:<id>`: a document's record. */
  doc(id: string): string {
    return `${this.prefix}:doc:${id}`;
  }

  /** `P:key:<k>`: the ids having band key k (sets layout). */
  band(k: number): string {
    return `${this.prefix}:key:${k}`;
  }
}

/**
 * Reads records by id, in order: one MGET when multi-key commands are allowed (standalone Redis),
 * else one GET per id (auto-pipelined), since on Cluster the keys span slots.
 */
export function recordReader(redis: Client, keys: RedisKeys, multiKey: boolean): (ids: string[]) => Promise<(Buffer | null)[]> {
  if (multiKey) return (ids) => (ids.length === 0 ? Promise.resolve([]) : redis.mgetBuffer(ids.map((id) => keys.doc(id))));
  return (ids) => Promise.all(ids.map((id) => redis.getBuffer(keys.doc(id))));
}

/** The ids among `ids` whose expiry in `P:expiry` is at or before `now` (one ZMSCORE per 10,000 ids). */
export async function expiredAmong(redis: Client, keys: RedisKeys, ids: string[], now: number): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < ids.length; i += 10_000) {
    const chunk = ids.slice(i, i + 10_000);
    const at = await redis.zmscore(keys.expiry, ...chunk);
    chunk.forEach((id, j) => {
      if (at[j] !== null && Number(at[j]) <= now) out.add(id);
    });
  }
  return out;
}

/** What a compaction of the posting log reports (NearDupStore.compact). */
export type LogCompaction = StoreCompaction;

/**
 * One key layout of the Redis store, chosen once when the store opens. Methods may throw raw
 * ioredis errors: the store front turns them into {@link StoreUnavailableError} where they mean
 * "Redis is away".
 */
export interface LayoutOps {
  /** `log` or `sets`. */
  readonly name: RedisLayout;
  /** See NearDupStore.lookup. */
  lookup(queries: Float64Array[], limit: number, now?: number): Promise<StoredDoc[][]>;
  /** See NearDupStore.put. */
  put(entries: PutEntry[]): Promise<void>;
  /** See NearDupStore.removeMany (never called with no entries). */
  removeMany(entries: RemoveEntry[]): Promise<boolean[]>;
  /** See NearDupStore.hasPostings. */
  hasPostings(id: string, keys: Float64Array): Promise<boolean[]>;
  /** Layout-specific counters added to the store's stats. */
  stats(): Promise<Record<string, number>>;
  /** Layout-specific consistency warnings added to the store check. */
  checkWarnings(): Promise<string[]>;
  /** Layout-specific consistency errors added to the store check (the log layout's band table: src/store/memory/postingCheck.ts). */
  checkErrors(): Promise<string[]>;
  /** Rewrites the posting log; a layout without one throws a RangeError saying so. */
  compact(): Promise<LogCompaction>;
}
