/**
 * The `log` key layout of the Redis store (the default for new stores): `P:log` is a list with one
 * binary entry per write batch (src/store/redis/log.ts); every process folds it into an in-memory
 * replica of the band table and looks candidates up there, then reads their records from Redis.
 * Inserts cost one list push and one record write per batch instead of one set insert per key.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { PutEntry, StoredDoc, StoreManifest, RemoveEntry } from '../types.js';
import { decodeLogEntry, encodeLogEntry, type LogDoc } from '../log/entry.js';
import { LogReplica } from '../log/replica.js';
import type { LogAppender } from './logAppend.js';
import { parseCompacted, rewriteLog } from './logCompact.js';
import { expiredAmong, type Client, type LayoutOps, type LogCompaction, type RedisKeys } from './shared.js';
import { ServerRun } from './serverRun.js';

/** Log entries read per round trip while catching up. */
const LOG_READ_CHUNK = 32;

/** What {@link LogLayout.open} opens the layout with. */
export interface LogLayoutOptions {
  redis: Client;
  keys: RedisKeys;
  /** The manifest in force, to recreate a store that disappeared. */
  manifest: StoreManifest;
  /** The layout value (`log <token>`) the folded table belongs to. */
  token: string;
  /** Appends write batches to the log. */
  append: LogAppender;
  /** Reads documents' records by id. */
  records: (ids: string[]) => Promise<(Buffer | null)[]>;
}

/** The log layout: see the module comment. */
export class LogLayout implements LayoutOps {
  readonly name = 'log' as const;
  private replica: LogReplica;
  private logChain: Promise<unknown> = Promise.resolve();
  private syncRunning: Promise<void> | null = null;
  private syncNext: Promise<void> | null = null;
  /** The server run the table was folded from: another run may have a shorter (older) log. */
  private readonly run: ServerRun;

  private readonly redis: Client;
  private readonly keys: RedisKeys;
  /** The manifest in force, to recreate a store that disappeared. */
  private readonly manifest: StoreManifest;
  /** The layout value (`log <token>`) the folded table belongs to. */
  private token: string;
  private readonly append: LogAppender;
  private readonly records: (ids: string[]) => Promise<(Buffer | null)[]>;

  private constructor(o: LogLayoutOptions, replica: LogReplica) {
    this.redis = o.redis;
    this.keys = o.keys;
    this.manifest = o.manifest;
    this.token = o.token;
    this.append = o.append;
    this.records = o.records;
    this.replica = replica;
    this.run = new ServerRun(o.redis);
  }

  /** Opens the layout for a store whose layout key holds `o.token`, folding the whole log. */
  static async open(o: LogLayoutOptions): Promise<LogLayout> {
    const layout = new LogLayout(o, await LogReplica.create(o.manifest));
    await layout.run.start();
    await layout.sync();
    return layout;
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
  private sync(): Promise<void> {
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
    const k = this.keys;
    for (;;) {
      const rep = this.replica;
      const start = rep.applied;
      const last = Math.min(start + LOG_READ_CHUNK, end) - 1;
      if (last < start) return;
      const [token, entries] = await Promise.all([r.get(k.layout), r.lrangeBuffer(k.log, start, last)]);
      if (await this.newRun()) continue;
      if (token !== this.token) {
        // A compaction that rewrote entries [0, L) as c entries: a table that had folded at least
        // L entries is already what the rewritten part describes; it continues at c + (applied − L).
        const moved = token === null ? null : parseCompacted(await r.get(k.compacted));
        if (moved && moved.from === this.token && moved.to === token && rep.applied >= moved.rewritten) {
          rep.applied = moved.entries + (rep.applied - moved.rewritten);
          this.token = token;
          continue;
        }
        // Deleted and created again, or Redis lost its data: rebuild the table from what is there.
        // A store that is gone entirely is created again, with this index's manifest.
        this.replica = await LogReplica.create(this.manifest);
        if (token === null) {
          await r.set(k.layout, `log ${randomBytes(8).toString('hex')}`, 'NX');
          await r.set(k.manifest, JSON.stringify(this.manifest), 'NX');
          this.token = (await r.get(k.layout)) ?? '';
        } else this.token = token;
        continue;
      }
      for (const b of entries) {
        await rep.apply(decodeLogEntry(b, `Redis ${k.log}[${rep.applied}]`));
        rep.applied++;
      }
      if (entries.length < last - start + 1) {
        if (end !== Infinity) throw new Error(`Redis list ${k.log} has ${rep.applied} entries, ${end} expected (was it trimmed?)`);
        return;
      }
    }
  }

  /**
   * After the client reconnected to a new server run (a restart, a failover), whose log may be
   * shorter than what the table folded (an older snapshot) and then grow with other entries: drops
   * the table, to be folded again from the start. Returns whether it did.
   */
  private async newRun(): Promise<boolean> {
    if (!(await this.run.changed())) return false;
    this.replica = await LogReplica.create(this.manifest);
    return true;
  }

  /**
   * After this process appended its entry at list position `at` of the log that had layout token
   * `tokenAtPush`: folds the entries before it, then its own. When the token has changed since
   * (a compaction renumbered the list, or the store was recreated), a full fold covers the entry.
   */
  private foldOwn(at: number, tokenAtPush: string | null, op: 'put' | 'remove', docs: LogDoc[]): Promise<void> {
    return this.serialLog(async () => {
      // `at` counts in the new run's log (the push's reply came after the reconnection).
      await this.newRun();
      if (tokenAtPush !== this.token) return this.foldUpTo(Infinity);
      if (this.replica.applied > at) return; // already read back by a concurrent sync
      await this.foldUpTo(at);
      if (tokenAtPush !== this.token) return this.foldUpTo(Infinity);
      await this.replica.apply({ op, docs });
      this.replica.applied = at + 1;
    });
  }

  /**
   * Candidates from the local table, their records (and, with `now`, their expiries) from Redis in
   * one round trip. Candidates that are expired or have no record (a write in progress, or one that
   * died) are skipped without taking a place: while a list came back full and some were skipped,
   * the table is asked again for twice as many, until `limit` usable documents or the end.
   */
  async lookup(queries: Float64Array[], limit: number, now?: number): Promise<StoredDoc[][]> {
    await this.sync();
    const out: StoredDoc[][] = queries.map(() => []);
    const seen = queries.map(() => new Set<string>());
    let pending = queries.map((_, i) => i);
    for (let want = limit; pending.length; want *= 2) {
      const lists = await this.replica.table.lookup(pending.map((i) => queries[i]!), want);
      const fresh = lists.map((l, j) => l.map((c) => c.id).filter((id) => !seen[pending[j]!]!.has(id)));
      const ids = [...new Set(fresh.flat())];
      const [recs, expired] = await Promise.all([this.records(ids), now === undefined ? new Set<string>() : expiredAmong(this.redis, this.keys, ids, now)]);
      const byId = new Map<string, Buffer>();
      ids.forEach((id, i) => {
        if (recs[i] && !expired.has(id)) byId.set(id, recs[i]!);
      });
      const next: number[] = [];
      pending.forEach((qi, j) => {
        const got = out[qi]!;
        for (const id of fresh[j]!) {
          seen[qi]!.add(id);
          const rec = byId.get(id);
          if (rec && got.length < limit) got.push({ id, record: rec });
        }
        if (got.length < limit && lists[j]!.length >= want) next.push(qi);
      });
      pending = next;
    }
    return out;
  }

  async put(entries: PutEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const docs: LogDoc[] = entries.map((e) => ({ id: e.id, keys: e.keys }));
    // Refused before it is in the log: every process folds the log into a table of its own.
    this.replica.checkRoom(entries);
    const { at, token } = await this.append.put(entries, encodeLogEntry('put', docs));
    await this.foldOwn(at, token, 'put', docs);
  }

  async removeMany(entries: RemoveEntry[]): Promise<boolean[]> {
    // One log entry for the whole batch.
    const docs: LogDoc[] = entries.map((e) => ({ id: e.id }));
    const { at, token, removed } = await this.append.removeMany(docs.map((d) => d.id), encodeLogEntry('remove', docs));
    await this.foldOwn(at, token, 'remove', docs);
    return removed;
  }

  async hasPostings(id: string, keys: Float64Array): Promise<boolean[]> {
    await this.sync();
    // Key j of the document is posting j: on the chain of keys[j].
    const have = this.replica.keysOf(id);
    return Array.from(keys, (k, j) => have?.[j] === k);
  }

  async stats(): Promise<Record<string, number>> {
    await this.sync();
    const t = await this.replica.table.stats();
    return {
      logEntries: this.replica.applied,
      localDistinctKeys: t.distinctKeys as number,
      localTableBytes: (t.keyTableSlots as number) * 12 + (t.postingBytes as number) + (t.arenaBytes as number),
    };
  }

  async checkErrors(): Promise<string[]> {
    await this.sync();
    return this.replica.table.postingErrors();
  }

  async checkWarnings(): Promise<string[]> {
    await this.sync();
    let orphans = 0;
    for await (const d of this.replica.table.scan()) if (!(await this.redis.exists(this.keys.doc(d.id)))) orphans++;
    return orphans
      ? [`${orphans} documents in ${this.keys.log} without a record (left by writes that were never acknowledged; never returned by lookups)`]
      : [];
  }

  /**
   * Rewrites the log as one put entry per 1,000 live documents (standalone Redis only), dropping
   * replaced and removed versions and documents whose record is missing. Entries other processes
   * append meanwhile are kept after the rewritten part.
   */
  async compact(): Promise<LogCompaction> {
    if (!this.append.multiKey) throw new Error('compaction needs standalone Redis with multi-key commands (not Cluster, not scripts=0)');
    await this.sync();
    return this.serialLog(async () => {
      await this.foldUpTo(Infinity);
      const rep = this.replica;
      const L = rep.applied;
      // Each document's keys read from the table's chains (it keeps no keys of its own).
      const live = (function* () {
        for (const d of rep.table.live()) yield { id: d.id, keys: rep.keysOf(d.id)! };
      })();
      const w = await rewriteLog(this.redis as Redis, this.keys, live, { L, oldToken: this.token });
      rep.applied = w.entries;
      this.token = w.token;
      return { entriesBefore: L + w.tail, entriesAfter: w.entries + w.tail, documents: w.documents, bytesBefore: w.bytesBefore, bytesAfter: w.bytesAfter };
    });
  }
}
