/**
 * SQLite store (better-sqlite3), WAL mode. Schema (docs/stores.md):
 *   meta(name TEXT PRIMARY KEY, value TEXT)            -- 'manifest' (JSON), 'schema' (version)
 *   docs(n INTEGER PRIMARY KEY, id TEXT UNIQUE, record BLOB)
 *   postings(key INTEGER, doc INTEGER, PRIMARY KEY(key, doc)) WITHOUT ROWID  -- doc = docs.n
 *   expiry(doc INTEGER PRIMARY KEY, at REAL) + index on at   -- documents with an expiry (schema 2)
 * Every put/remove is one transaction: a document is visible with all its keys or not at all, and
 * once the promise resolves the transaction is in the WAL, so it survives the process being killed.
 *
 * Several writer processes take turns: every write transaction starts with BEGIN IMMEDIATE, which
 * waits for the write lock (a deferred transaction that reads first and then writes cannot wait: it
 * fails at once with SQLITE_BUSY when another process committed in between). {@link SqliteStore.exclusive}
 * holds the lock across the index's lookup and write, so concurrent adders see each other's
 * documents exactly as if they had run one after the other.
 * @module
 */
import type Database from 'better-sqlite3';
import { openDatabase } from './driver.js';
import { SqliteClusterState } from './clusters.js';
import type { ClusterState } from '../clusterState.js';
import type { NearDupStore, PutEntry, RemoveEntry, StoredDoc, StoreFile, StoreManifest } from '../types.js';
import { StoreUnavailableError } from '../errors.js';
import { UsageError } from '../../common/errors.js';

/** How long a writer waits for another process's write transaction before giving up (ms). */
export const SQLITE_BUSY_TIMEOUT_MS = 30_000;

function isBusy(e: unknown): boolean {
  const code = (e as { code?: string })?.code ?? '';
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs `fn` (a statement of the constructor, which is synchronous) again while it fails with
 * SQLITE_BUSY, sleeping 1, 2, 4 … 50 ms between tries (the thread blocks: only while opening), for
 * at most `timeoutMs`.
 */
function retryBusySync<T>(fn: () => T, timeoutMs: number): T {
  const deadline = Date.now() + timeoutMs;
  let wait = 1;
  for (;;) {
    try {
      return fn();
    } catch (e) {
      if (!isBusy(e) || Date.now() >= deadline) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait * (0.5 + Math.random()));
      wait = Math.min(wait * 2, 50);
    }
  }
}

/**
 * Schema version stored in meta('schema'). 2 added the table `expiry`; a version-1 file is migrated
 * when opened (the table is created empty: its documents have no expiry) and marked 2.
 */
export const SQLITE_SCHEMA_VERSION = 2;

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * `normal` (default): in WAL mode a committed transaction survives a process crash (kill -9);
   * the last ones may be lost on power failure. `full`: fsync at every commit, survives power loss.
   */
  synchronous?: 'normal' | 'full';
  /** SQLite page cache in MiB. Default 64. */
  cacheMiB?: number;
  /** How long a write waits for other processes' write transactions, in ms. Default {@link SQLITE_BUSY_TIMEOUT_MS}. */
  busyTimeoutMs?: number;
}

/** The statements a store runs, prepared once. */
interface Statements {
  docsOfKey: Database.Statement;
  liveDocsOfKey: Database.Statement;
  docByN: Database.Statement;
  docById: Database.Statement;
  nById: Database.Statement;
  insertDoc: Database.Statement;
  updateDoc: Database.Statement;
  deleteDoc: Database.Statement;
  insertPosting: Database.Statement;
  deletePosting: Database.Statement;
  setExpiry: Database.Statement;
  dropExpiry: Database.Statement;
  due: Database.Statement;
  countDue: Database.Statement;
  count: Database.Statement;
  all: Database.Statement;
}

/** Prepares the statements of {@link Statements} on `db`. */
function prepareStatements(db: Database.Database): Statements {
  return {
    docsOfKey: db.prepare('SELECT doc FROM postings WHERE key = ?').pluck(),
    // The expiry table is the expiry index: expired documents are left out before the limit.
    liveDocsOfKey: db.prepare('SELECT p.doc FROM postings p LEFT JOIN expiry e ON e.doc = p.doc WHERE p.key = ? AND (e.at IS NULL OR e.at > ?)').pluck(),
    docByN: db.prepare('SELECT id, record FROM docs WHERE n = ?'),
    docById: db.prepare('SELECT record FROM docs WHERE id = ?').pluck(),
    nById: db.prepare('SELECT n FROM docs WHERE id = ?').pluck(),
    insertDoc: db.prepare('INSERT INTO docs (id, record) VALUES (?, ?)'),
    updateDoc: db.prepare('UPDATE docs SET record = ? WHERE n = ?'),
    deleteDoc: db.prepare('DELETE FROM docs WHERE n = ?'),
    insertPosting: db.prepare('INSERT OR IGNORE INTO postings (key, doc) VALUES (?, ?)'),
    deletePosting: db.prepare('DELETE FROM postings WHERE key = ? AND doc = ?'),
    setExpiry: db.prepare('INSERT OR REPLACE INTO expiry (doc, at) VALUES (?, ?)'),
    dropExpiry: db.prepare('DELETE FROM expiry WHERE doc = ?'),
    due: db.prepare('SELECT d.id FROM expiry e JOIN docs d ON d.n = e.doc WHERE e.at <= ? ORDER BY e.at LIMIT ?').pluck(),
    countDue: db.prepare('SELECT count(*) FROM expiry WHERE at <= ?').pluck(),
    count: db.prepare('SELECT count(*) FROM docs').pluck(),
    all: db.prepare('SELECT n, id, record FROM docs WHERE n > ? ORDER BY n LIMIT 1000'),
  };
}

/** A store in one SQLite file. */
export class SqliteStore implements NearDupStore {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  private readonly q: Statements;

  private readonly putTx: (entries: PutEntry[]) => void;
  private hasStmt: Database.Statement | undefined;
  private readonly removeTx: (entries: RemoveEntry[]) => boolean[];
  private readonly busyTimeoutMs: number;

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    try {
      this.db = openDatabase(path);
    } catch (e) {
      throw new Error(`cannot open SQLite store ${path}: ${(e as Error).message}`);
    }
    const db = this.db;
    this.busyTimeoutMs = options.busyTimeoutMs ?? SQLITE_BUSY_TIMEOUT_MS;
    // First: switching to WAL and creating the tables are writes that another process may be doing.
    db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    // Pages freed by removals (expired documents purged) can be given back to the file system with
    // PRAGMA incremental_vacuum (reclaim()). Takes effect only on a file without tables yet: a file
    // created by an earlier version keeps auto_vacuum NONE (its free pages are reused, not returned).
    retryBusySync(() => db.pragma('auto_vacuum = INCREMENTAL'), this.busyTimeoutMs);
    // (Before the switch to WAL, which writes the file's first page.)
    // Two processes switching a new file to WAL at once can both hold a read lock while each needs
    // the write lock: SQLite then fails one at once with SQLITE_BUSY, without its busy handler (no
    // deadlock). Retried until the busy timeout, like any other wait for the lock.
    retryBusySync(() => db.pragma('journal_mode = WAL'), this.busyTimeoutMs);
    db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    // Postings are a B-tree of random keys: a larger page cache avoids most re-reads. 64 MiB.
    db.pragma(`cache_size = -${(options.cacheMiB ?? 64) * 1024}`);
    retryBusySync(
      () =>
        db.exec(`
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS docs (n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, record BLOB NOT NULL);
      CREATE TABLE IF NOT EXISTS postings (key INTEGER NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (key, doc)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS expiry (doc INTEGER PRIMARY KEY, at REAL NOT NULL);
      CREATE INDEX IF NOT EXISTS expiry_at ON expiry (at);
    `),
      this.busyTimeoutMs,
    );
    this.q = prepareStatements(db);

    const q = this.q;
    // .immediate: BEGIN IMMEDIATE (waits in the busy handler) when not already inside exclusive().
    this.putTx = db.transaction((entries: PutEntry[]) => {
      for (const e of entries) {
        let n = q.nById.get(e.id) as number | undefined;
        if (n !== undefined) {
          if (e.oldKeys) { for (const k of e.oldKeys) q.deletePosting.run(k, n); }
          q.updateDoc.run(e.record, n);
          if (e.expiresAt === undefined) q.dropExpiry.run(n);
        } else {
          n = Number(q.insertDoc.run(e.id, e.record).lastInsertRowid);
        }
        if (e.expiresAt !== undefined) q.setExpiry.run(n, e.expiresAt);
        for (const k of e.keys) q.insertPosting.run(k, n);
      }
    }).immediate;
    // One transaction for a whole batch of removals.
    this.removeTx = db.transaction((entries: RemoveEntry[]) =>
      entries.map(({ id, keys }) => {
        const n = q.nById.get(id) as number | undefined;
        if (n === undefined) return false;
        for (const k of keys) q.deletePosting.run(k, n);
        q.dropExpiry.run(n);
        q.deleteDoc.run(n);
        return true;
      })
    ).immediate;
  }

  localFiles(): StoreFile[] {
    return ['', '-wal', '-shm', '-journal'].map((s) => ({ path: this.path + s }));
  }

  async open(manifest: StoreManifest): Promise<StoreManifest | null> {
    // Read and create in one immediate transaction: of several processes creating the store at
    // once, one writes the manifest and the others read it.
    const get = this.db.prepare("SELECT value FROM meta WHERE name = 'manifest'").pluck();
    const ins = this.db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)');
    const getSchema = this.db.prepare("SELECT value FROM meta WHERE name = 'schema'").pluck();
    const setSchema = this.db.prepare("UPDATE meta SET value = ? WHERE name = 'schema'");
    const { row, schema } = this.db
      .transaction(() => {
        const r = get.get() as string | undefined;
        if (r === undefined) {
          ins.run('schema', String(SQLITE_SCHEMA_VERSION));
          ins.run('manifest', JSON.stringify(manifest));
          return { row: r, schema: SQLITE_SCHEMA_VERSION };
        }
        let v = Number(getSchema.get());
        // Version 1 → 2: the constructor created the (empty) expiry table; record the new version.
        if (v === 1) setSchema.run(String(v = 2));
        return { row: r, schema: v };
      })
      .immediate();
    if (row !== undefined) {
      if (schema !== SQLITE_SCHEMA_VERSION)
        throw new UsageError(
          `${this.path}: SQLite schema version ${schema}, this version reads ${SQLITE_SCHEMA_VERSION} (and migrates 1): use the neardup version that wrote it`,
        );
      try {
        return JSON.parse(row) as StoreManifest;
      } catch {
        throw new Error(`${this.path}: meta('manifest') is not valid JSON`);
      }
    }
    return null;
  }

  /**
   * Runs `fn` (lookups, then writes) inside one BEGIN IMMEDIATE transaction, so no other process
   * writes between the lookup and the write. Waiting for the lock yields to the event loop (the
   * server keeps answering); past the busy timeout it fails with {@link StoreUnavailableError}
   * (nothing written; HTTP 503, safe to retry).
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const db = this.db;
    if (db.inTransaction) return fn();
    const deadline = Date.now() + this.busyTimeoutMs;
    let wait = 1;
    // Short waits inside SQLite, longer ones on the event loop.
    db.pragma('busy_timeout = 20');
    try {
      for (;;) {
        try {
          db.exec('BEGIN IMMEDIATE');
          break;
        } catch (e) {
          if (!isBusy(e)) throw e;
          if (Date.now() >= deadline) {
            throw new StoreUnavailableError(`SQLite store ${this.path} is busy: another process held its write lock for ${this.busyTimeoutMs / 1000} s`, 1, {
              cause: e,
            });
          }
          await sleep(wait * (0.5 + Math.random()));
          wait = Math.min(wait * 2, 50);
        }
      }
    } finally {
      db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
    try {
      const result = await fn();
      db.exec('COMMIT');
      return result;
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw e;
    }
  }

  async lookup(queries: Float64Array[], limit: number, now?: number): Promise<StoredDoc[][]> {
    const q = this.q;
    const docsOf = (k: number) => (now === undefined ? q.docsOfKey.all(k) : q.liveDocsOfKey.all(k, now)) as number[];
    return queries.map((keys) => {
      const seen = new Set<number>();
      const out: StoredDoc[] = [];
      for (const k of keys) {
        for (const n of docsOf(k)) {
          if (seen.has(n)) continue;
          seen.add(n);
          const row = q.docByN.get(n) as { id: string; record: Buffer } | undefined;
          if (row) out.push({ id: row.id, record: row.record });
          if (out.length >= limit) return out;
        }
      }
      return out;
    });
  }

  async put(entries: PutEntry[]): Promise<void> {
    this.putTx(entries);
  }

  async get(ids: string[]): Promise<(Uint8Array | null)[]> {
    return ids.map((id) => (this.q.docById.get(id) as Buffer | undefined) ?? null);
  }

  async remove(id: string, keys: Float64Array): Promise<boolean> {
    return this.removeTx([{ id, keys }])[0]!;
  }

  async removeMany(entries: RemoveEntry[]): Promise<boolean[]> {
    return this.removeTx(entries);
  }

  async size(): Promise<number> {
    return this.q.count.get() as number;
  }

  async expiredIds(now: number, limit: number): Promise<string[]> {
    return this.q.due.all(now, limit) as string[];
  }

  async countExpired(now: number): Promise<number> {
    return this.q.countDue.get(now) as number;
  }

  /** Returns the free pages to the file system (`PRAGMA incremental_vacuum`), on a file with incremental auto-vacuum. */
  async reclaim(): Promise<void> {
    if ((this.db.pragma('auto_vacuum', { simple: true }) as number) === 2) this.db.pragma('incremental_vacuum');
  }

  async *scan(): AsyncIterable<StoredDoc> {
    // Pages by rowid, so no statement stays open between yields (other writes may run meanwhile).
    let after = -1;
    for (;;) {
      const rows = this.q.all.all(after) as { n: number; id: string; record: Buffer }[];
      if (rows.length === 0) return;
      for (const r of rows) yield { id: r.id, record: r.record };
      after = rows[rows.length - 1]!.n;
    }
  }

  async stats(): Promise<Record<string, number | string>> {
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const postings = this.db.prepare('SELECT count(*) FROM postings').pluck().get() as number;
    const freePages = this.db.pragma('freelist_count', { simple: true }) as number;
    const expiring = this.db.prepare('SELECT count(*) FROM expiry').pluck().get() as number;
    return { path: this.path, fileBytes: pageSize * pages, freeBytes: pageSize * freePages, postings, expiring };
  }

  /**
   * A consistent copy of the database at `dest`, taken with SQLite's online backup API while
   * other connections (a running `neardup serve`) keep reading and writing.
   */
  async backup(dest: string): Promise<void> {
    await this.db.backup(dest);
  }

  async hasPostings(id: string, keys: Float64Array): Promise<boolean[]> {
    const n = this.q.nById.get(id) as number | undefined;
    if (n === undefined) return Array.from(keys, () => false);
    const has = (this.hasStmt ??= this.db.prepare('SELECT 1 FROM postings WHERE key = ? AND doc = ?').pluck());
    return Array.from(keys, (k) => has.get(k, n) !== undefined);
  }

  /** Store-level consistency: postings of missing documents, SQLite's own integrity check. */
  async checkStore(): Promise<{ errors: string[]; warnings: string[] }> {
    const errors: string[] = [];
    const integrity = this.db.pragma('quick_check', { simple: true }) as string;
    if (integrity !== 'ok') errors.push(`SQLite quick_check: ${integrity}`);
    const orphans = this.db.prepare('SELECT count(*) FROM postings p LEFT JOIN docs d ON d.n = p.doc WHERE d.n IS NULL').pluck().get() as number;
    if (orphans) errors.push(`${orphans} postings point to no document`);
    const lost = this.db.prepare('SELECT count(*) FROM expiry e LEFT JOIN docs d ON d.n = e.doc WHERE d.n IS NULL').pluck().get() as number;
    if (lost) errors.push(`${lost} expiry entries point to no document`);
    return { errors, warnings: [] };
  }

  private clusters: SqliteClusterState | undefined;

  /** Cluster labels in this file (table `clusters`). */
  clusterState(): ClusterState {
    return (this.clusters ??= new SqliteClusterState(this.db));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
