/**
 * How the log layout writes a batch to Redis, chosen once per store: {@link TransactionAppend} on
 * standalone Redis (one MULTI: log entry, records and ids appear together or not at all) or
 * {@link OrderedAppend} with single-key commands (Redis Cluster, or `scripts=0`), in an order that
 * never makes a half-written document visible (readers skip postings whose record is missing).
 * @module
 */
import type { Redis } from 'ioredis';
import type { PutEntry } from '../types.js';
import { execResults, recordBuffer, type Client, type RedisKeys } from './shared.js';

/**
 * Where an appended log entry landed: list position `at`, under the layout token `token` (null: the
 * token changed around the push, so the position's numbering is unknown and the caller folds all).
 */
export interface Appended {
  at: number;
  token: string | null;
}

/** Writes the Redis side of a log-layout batch. */
export interface LogAppender {
  /** True when multi-key commands are allowed (compaction needs them). */
  readonly multiKey: boolean;
  /** Appends `entry` (encoding the puts) and writes the records and ids. */
  put(entries: PutEntry[], entry: Buffer): Promise<Appended>;
  /** Deletes the records and ids, and appends `entry` (encoding the removal); `removed[i]`: ids[i] had a record. */
  removeMany(ids: string[], entry: Buffer): Promise<Appended & { removed: boolean[] }>;
}

/** Standalone Redis: each batch is one MULTI … EXEC. */
export class TransactionAppend implements LogAppender {
  readonly multiKey = true;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async put(entries: PutEntry[], entry: Buffer): Promise<Appended> {
    // The layout token read in the transaction tells which numbering of the log `at` belongs to.
    const pairs: (string | Buffer)[] = [];
    for (const e of entries) pairs.push(this.keys.doc(e.id), recordBuffer(e.record));
    const res = execResults(
      await this.redis
        .multi()
        .get(this.keys.layout)
        .rpush(this.keys.log, entry)
        .mset(...pairs)
        .sadd(this.keys.ids, ...entries.map((e) => e.id))
        .exec(),
    );
    return { token: res[0] as string | null, at: Number(res[1]) - 1 };
  }

  async removeMany(ids: string[], entry: Buffer): Promise<Appended & { removed: boolean[] }> {
    const k = this.keys;
    const m = this.redis.multi();
    for (const id of ids) m.del(k.doc(id));
    const res = execResults(await m.srem(k.ids, ...ids).get(k.layout).rpush(k.log, entry).exec());
    const n = ids.length;
    return { removed: res.slice(0, n).map((x) => x === 1), token: res[n + 1] as string | null, at: Number(res[n + 2]) - 1 };
  }
}

/** Single-key commands only, in crash-safe order. */
export class OrderedAppend implements LogAppender {
  readonly multiKey = false;

  constructor(
    private readonly redis: Client,
    private readonly keys: RedisKeys,
  ) {}

  async put(entries: PutEntry[], entry: Buffer): Promise<Appended> {
    // The entry first, then ids and records (readers skip postings without a record).
    const pushed = await this.push(entry);
    const r = this.redis;
    await Promise.all(entries.map((e) => r.sadd(this.keys.ids, e.id)));
    await Promise.all(entries.map((e) => r.set(this.keys.doc(e.id), recordBuffer(e.record))));
    return pushed;
  }

  async removeMany(ids: string[], entry: Buffer): Promise<Appended & { removed: boolean[] }> {
    // The records first (pipelined): from then on the documents are invisible even if the rest fails.
    const removed = (await Promise.all(ids.map((id) => this.redis.del(this.keys.doc(id))))).map((x) => x === 1);
    await this.redis.srem(this.keys.ids, ...ids);
    return { removed, ...(await this.push(entry)) };
  }

  /**
   * RPUSH without a transaction: the token read before and after the push; when they differ (a
   * compaction or a recreation happened meanwhile) the position's numbering is unknown.
   */
  private async push(entry: Buffer): Promise<Appended> {
    const r = this.redis;
    const before = await r.get(this.keys.layout);
    const at = (await r.rpush(this.keys.log, entry)) - 1;
    const after = await r.get(this.keys.layout);
    return { at, token: before === after ? before : null };
  }
}
