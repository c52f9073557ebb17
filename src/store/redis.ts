/**
 * Redis store (ioredis). Key layout (docs/stores.md), with P the prefix (default `nd`):
 *   P:manifest           string  the index manifest (JSON)
 *   P:doc:<id>           string  the document's encoded record
 *   P:key:<base36 key>   set     ids of the documents that have this band key
 *   P:ids                set     every document id (size, scan)
 * Every command touches one key, and keys spread over hash slots, so it runs on Redis Cluster.
 * Commands are auto-pipelined: one batch costs one round trip per stage, not one per command.
 * Write order: postings first, the record last. A reader ignores postings whose record is missing,
 * so a writer dying mid-batch never makes a half-written document visible.
 * @module
 */
import { Redis, Cluster } from 'ioredis';
import type { NearDupStore, PutEntry, StoredDoc, StoreManifest } from './types.js';

type Client = Redis | Cluster;

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** Key prefix, so several indexes can share one Redis. Default `nd`. */
  prefix?: string;
}

/** A store in Redis, shareable by several processes. */
export class RedisStore implements NearDupStore {
  readonly kind = 'redis';
  private readonly p: string;

  constructor(
    private readonly redis: Client,
    options: RedisStoreOptions = {},
  ) {
    this.p = options.prefix ?? 'nd';
  }

  /**
   * Connects to `redis://[:password@]HOST:PORT[/DB][?prefix=NAME&cluster=1]`. With cluster=1 the
   * address is a seed node of a Redis Cluster.
   */
  static fromUrl(url: string): RedisStore {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new RangeError(`bad Redis URL "${url}"`);
    }
    const prefix = u.searchParams.get('prefix') ?? 'nd';
    const cluster = u.searchParams.get('cluster');
    const common = { enableAutoPipelining: true, lazyConnect: false };
    if (cluster === '1' || cluster === 'true') {
      const host = u.hostname || '127.0.0.1';
      const port = Number(u.port || 6379);
      return new RedisStore(new Cluster([{ host, port }], { ...common, redisOptions: { password: u.password || undefined } }), { prefix });
    }
    u.search = '';
    return new RedisStore(new Redis(u.toString(), { ...common, maxRetriesPerRequest: 3 }), { prefix });
  }

  private docKey(id: string): string {
    return `${this.p}:doc:${id}`;
  }

  private bandKey(k: number): string {
    return `${this.p}:key:${k.toString(36)}`;
  }

  async open(manifest: StoreManifest): Promise<StoreManifest | null> {
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

  async lookup(queries: Float64Array[], limit: number): Promise<StoredDoc[][]> {
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

  async put(entries: PutEntry[]): Promise<void> {
    const r = this.redis;
    const all: Promise<unknown>[] = [];
    for (const e of entries) {
      if (e.oldKeys) {
        const keep = new Set(e.keys);
        for (const k of e.oldKeys) if (!keep.has(k)) all.push(r.srem(this.bandKey(k), e.id));
      }
      for (const k of e.keys) all.push(r.sadd(this.bandKey(k), e.id));
      all.push(r.set(this.docKey(e.id), Buffer.from(e.record.buffer, e.record.byteOffset, e.record.byteLength)));
      all.push(r.sadd(`${this.p}:ids`, e.id));
    }
    await Promise.all(all);
  }

  async get(ids: string[]): Promise<(Uint8Array | null)[]> {
    return Promise.all(ids.map((id) => this.redis.getBuffer(this.docKey(id))));
  }

  async remove(id: string, keys: Float64Array): Promise<boolean> {
    const r = this.redis;
    // The record goes first: from then on the document is invisible even if the rest fails.
    const [n] = await Promise.all([r.del(this.docKey(id)), r.srem(`${this.p}:ids`, id), ...Array.from(keys, (k) => r.srem(this.bandKey(k), id))]);
    return n === 1;
  }

  async size(): Promise<number> {
    return this.redis.scard(`${this.p}:ids`);
  }

  async *scan(): AsyncIterable<StoredDoc> {
    let cursor = '0';
    do {
      const [next, ids] = await this.redis.sscan(`${this.p}:ids`, cursor, 'COUNT', 1000);
      cursor = next;
      const recs = await this.get(ids);
      for (let i = 0; i < ids.length; i++) if (recs[i]) yield { id: ids[i]!, record: recs[i]! };
    } while (cursor !== '0');
  }

  async stats(): Promise<Record<string, number | string>> {
    const info = this.redis instanceof Redis ? await this.redis.info('memory') : '';
    const m = /used_memory:(\d+)/.exec(info);
    return { prefix: this.p, ...(m ? { usedMemoryBytes: Number(m[1]) } : {}) };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
