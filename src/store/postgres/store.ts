/**
 * PostgreSQL store (node-postgres, `pg`). Layout, in the schema S named by the URL (default
 * `neardup`; docs/stores.md):
 *   S.meta(name text PRIMARY KEY, value text)        -- 'schema' (version), 'manifest' (JSON), 'clusters'
 *   S.docs(id text COLLATE "C" PRIMARY KEY, record bytea, keys bigint[],  -- GIN index on keys
 *          expires_at double precision)          -- ms since the epoch; partial index where not null (schema 2)
 *   S.clusters(id text PRIMARY KEY, label text)      -- src/store/postgres/clusters.ts
 * A document is one row: its band keys live in the row and PostgreSQL's GIN index answers "which
 * documents have one of these keys", so a document is visible with all of its keys or not at all,
 * and removing it (or many) is one DELETE.
 *
 * Writers take turns through an advisory lock on the schema's name (the role SQLite's BEGIN
 * IMMEDIATE and Redis' `P:writer` key play): {@link PostgresStore.exclusive} holds it as a session
 * lock on one connection across the index's lookups and write, and every statement inside runs on
 * that connection (AsyncLocalStorage), so concurrent adders in several processes see each other.
 * Each write is one statement, committed before its promise resolves: an acknowledged write
 * survives the writer being killed.
 * @module
 */
import pg from 'pg';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { NearDupStore, PutEntry, RemoveEntry, StoredDoc, StoreManifest } from '../types.js';
import type { ClusterState } from '../clusterState.js';
import { StoreUnavailableError } from '../errors.js';
import { UsageError } from '../../common/errors.js';
import { parsePostgresUrl } from '../spec.js';
import { PostgresClusterState, type PgRunner } from './clusters.js';

/**
 * Schema version stored in meta('schema'). 2 added `docs.expires_at` and its index; a version-1
 * schema is migrated when opened (ALTER TABLE … ADD COLUMN: its documents have no expiry).
 */
export const POSTGRES_SCHEMA_VERSION = 2;

/** How long a writer waits for another process's write lock before failing with 503 (ms). */
export const POSTGRES_LOCK_WAIT_MS = 30_000;

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions {
  /** node-postgres connection string (`postgres://user@host:port/db`). */
  connectionString: string;
  /** Schema holding the tables (a lower-case SQL identifier). Default `neardup`. */
  schema?: string;
  /** Connections per process. Default 4. */
  pool?: number;
  /** How long connecting may take, in ms, before a call fails with StoreUnavailableError. Default 2000. */
  connectTimeoutMs?: number;
  /** How long a writer waits for the write lock, in ms. Default {@link POSTGRES_LOCK_WAIT_MS}. */
  lockWaitMs?: number;
}

/** SQLSTATE classes and codes that mean "the server is away or busy, retry later". */
function isUnavailable(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  const code = err?.code ?? '';
  if (/^(08|57P|53)/.test(code) || code === '55P03') return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(err?.message ?? '');
}

/** Rethrows connection failures and lock timeouts as StoreUnavailableError (HTTP 503), others as they are. */
export function pgUnavailable(e: unknown): never {
  if (e instanceof StoreUnavailableError || !isUnavailable(e)) throw e;
  const code = (e as { code?: string }).code;
  const what = code === '55P03' ? 'another process held its write lock too long' : (e as Error).message;
  throw new StoreUnavailableError(`PostgreSQL store unavailable: ${what}`, 1, { cause: e });
}

/** A 32-bit FNV-1a hash of the schema name: the advisory lock of this index (key space 'nd'). */
function lockOf(schema: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < schema.length; i++) h = Math.imul(h ^ schema.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** Namespace of neardup's advisory locks (first key of the two-key form): 'nd'. */
const LOCK_SPACE = 0x6e64;

/** A key list as a PostgreSQL array literal (bigint[]); keys are 53-bit integers. */
function keyArray(keys: Float64Array): string {
  return `{${Array.from(keys).join(',')}}`;
}

/** The connection a write lock holder runs on, whether it has been released, and its last statement. */
interface Held {
  client: pg.PoolClient;
  released: boolean;
  /** Statements on one connection run one after the other: the index issues some at once. */
  last: Promise<unknown>;
}

/** A store in a PostgreSQL schema, shareable by several processes. */
export class PostgresStore implements NearDupStore {
  readonly kind = 'postgres';
  private readonly pool: pg.Pool;
  private readonly held = new AsyncLocalStorage<Held>();
  /** The schema, quoted for statements. */
  private readonly s: string;
  private readonly lock: number;
  private clusters: PostgresClusterState | undefined;

  constructor(readonly options: PostgresStoreOptions) {
    const schema = options.schema ?? 'neardup';
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new RangeError(`PostgreSQL schema must be a lower-case SQL identifier, got "${schema}"`);
    this.s = `"${schema}"`;
    this.lock = lockOf(schema);
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.pool ?? 4,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
      // Bounds the wait for the advisory lock (and any row lock): then 55P03, answered as 503.
      lock_timeout: options.lockWaitMs ?? POSTGRES_LOCK_WAIT_MS,
      application_name: 'neardup',
    });
    // An idle connection that breaks (server restart) is dropped by the pool; without a listener
    // the 'error' event would end the process.
    this.pool.on('error', () => undefined);
  }

  /**
   * Connects to `postgres://[USER[:PASSWORD]@]HOST[:PORT]/DB[?schema=NAME&pool=N&timeout=MS]`
   * (parsed by src/store/spec.ts). Nothing is sent before the first call.
   */
  static fromUrl(url: string): PostgresStore {
    const o = parsePostgresUrl(url);
    return new PostgresStore({ connectionString: o.connectionString, schema: o.schema, pool: o.pool, connectTimeoutMs: o.timeoutMs });
  }

  /** The schema name (unquoted). */
  get schema(): string {
    return this.s.slice(1, -1);
  }

  /**
   * One statement (an implicit transaction of its own): inside {@link exclusive} on the lock
   * holder's connection, after the statements issued before it; elsewhere on any pooled connection.
   */
  private async query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    const h = this.held.getStore();
    if (!h || h.released) return (this.pool.query(sql, params) as Promise<pg.QueryResult<R>>).catch(pgUnavailable);
    const run = h.last.then(() => h.client.query<R>(sql, params));
    h.last = run.catch(() => undefined);
    return run.catch(pgUnavailable);
  }

  /** What the cluster labels run their statements and lock through. */
  private readonly runner: PgRunner = {
    query: (sql, params) => this.query(sql, params),
    exclusive: (fn) => this.exclusive(fn),
  };

  /** Whether the schema holds an index already (its manifest), without creating anything. */
  async exists(): Promise<boolean> {
    const r = await this.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`${this.s}.meta`]);
    if (r.rows[0]!.t === null) return false;
    return (await this.query(`SELECT 1 FROM ${this.s}.meta WHERE name = 'manifest'`)).rowCount === 1;
  }

  async open(manifest: StoreManifest): Promise<StoreManifest | null> {
    // Created and read under the write lock: of several processes creating the store at once, one
    // creates the tables and writes the manifest, the others read it.
    return this.exclusive(async () => {
      await this.query(`
        CREATE SCHEMA IF NOT EXISTS ${this.s};
        CREATE TABLE IF NOT EXISTS ${this.s}.meta (name text PRIMARY KEY, value text NOT NULL);
        CREATE TABLE IF NOT EXISTS ${this.s}.docs (id text COLLATE "C" PRIMARY KEY, record bytea NOT NULL, keys bigint[] NOT NULL, expires_at double precision);
        CREATE INDEX IF NOT EXISTS docs_keys ON ${this.s}.docs USING gin (keys) WITH (fastupdate = off);
        CREATE TABLE IF NOT EXISTS ${this.s}.clusters (id text COLLATE "C" PRIMARY KEY, label text COLLATE "C" NOT NULL);
        CREATE INDEX IF NOT EXISTS clusters_label ON ${this.s}.clusters (label);`);
      const rows = (await this.query<{ name: string; value: string }>(`SELECT name, value FROM ${this.s}.meta WHERE name IN ('schema', 'manifest')`)).rows;
      const got = new Map(rows.map((r) => [r.name, r.value]));
      const raw = got.get('manifest');
      if (raw === undefined) {
        await this.query(`CREATE INDEX IF NOT EXISTS docs_expires ON ${this.s}.docs (expires_at) WHERE expires_at IS NOT NULL`);
        await this.query(`INSERT INTO ${this.s}.meta (name, value) VALUES ('schema', $1), ('manifest', $2)`, [
          String(POSTGRES_SCHEMA_VERSION),
          JSON.stringify(manifest),
        ]);
        return null;
      }
      let version = Number(got.get('schema'));
      if (version === 1) {
        // Version 1 → 2: the expiry column (NULL for every existing document: a catalog change only).
        await this.query(`ALTER TABLE ${this.s}.docs ADD COLUMN IF NOT EXISTS expires_at double precision;
          CREATE INDEX IF NOT EXISTS docs_expires ON ${this.s}.docs (expires_at) WHERE expires_at IS NOT NULL;
          UPDATE ${this.s}.meta SET value = '2' WHERE name = 'schema';`);
        version = 2;
      }
      if (version !== POSTGRES_SCHEMA_VERSION) {
        throw new UsageError(
          `PostgreSQL schema ${this.schema}: neardup schema version ${
            got.get('schema')
          }, this version reads ${POSTGRES_SCHEMA_VERSION} (and migrates 1): use the neardup version that wrote it, or another ?schema=`,
        );
      }
      try {
        return JSON.parse(raw) as StoreManifest;
      } catch {
        throw new UsageError(`PostgreSQL schema ${this.schema}: meta('manifest') is not valid JSON`);
      }
    }).catch((e: unknown) => {
      // SQLSTATE class 42 (undefined column or table, wrong type): tables of that name that are
      // not neardup's.
      const code = (e as { code?: string }).code ?? '';
      if (code.startsWith('42')) {
        throw new UsageError(`PostgreSQL schema ${this.schema} holds tables that are not a neardup index (${(e as Error).message}): give another ?schema=`);
      }
      throw e;
    });
  }

  /**
   * Runs `fn` holding this index's advisory lock (a session lock on one pooled connection, on which
   * every statement of `fn` runs), so no other process writes between its lookups and its write.
   * Reentrant. Waiting yields to the event loop; past the lock wait it fails with
   * StoreUnavailableError (nothing written; HTTP 503). A holder that dies loses its connection,
   * and PostgreSQL releases the lock at once.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const h = this.held.getStore();
    if (h && !h.released) return fn();
    const client = await this.pool.connect().catch(pgUnavailable);
    let broken: unknown;
    // The pool listens for errors of idle connections only: one that breaks while held here (the
    // server restarts or is killed) would end the process with an unhandled 'error' event. Its
    // statements fail (503) and it is closed on release.
    const onError = (e: Error) => (broken ??= e);
    client.on('error', onError);
    try {
      await client.query('SELECT pg_advisory_lock($1, $2)', [LOCK_SPACE, this.lock]).catch(pgUnavailable);
      const held: Held = { client, released: false, last: Promise.resolve() };
      try {
        return await this.held.run(held, fn);
      } finally {
        held.released = true;
        await held.last;
        await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_SPACE, this.lock]).catch((e: unknown) => {
          // A connection that cannot unlock is closed (which releases the lock), not reused.
          broken = e;
        });
      }
    } catch (e) {
      broken ??= isUnavailable(e) ? e : undefined;
      throw e;
    } finally {
      client.off('error', onError);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async lookup(queries: Float64Array[], limit: number, now?: number): Promise<StoredDoc[][]> {
    const out: StoredDoc[][] = queries.map(() => []);
    if (queries.length === 0) return out;
    // One round trip for every key list: a lateral GIN probe per list, at most `limit` rows each,
    // expired rows left out before the limit (with `now`).
    const r = await this.query<{ i: string; id: string; record: Buffer }>(
      `SELECT l.i, d.id, d.record FROM unnest($1::text[]) WITH ORDINALITY AS l(ks, i)
       CROSS JOIN LATERAL (SELECT id, record FROM ${this.s}.docs WHERE keys && l.ks::bigint[]
         AND ($3::float8 IS NULL OR expires_at IS NULL OR expires_at > $3::float8) LIMIT $2) d`,
      [queries.map(keyArray), Math.min(limit, 2 ** 31 - 1), now ?? null],
    );
    for (const row of r.rows) out[Number(row.i) - 1]!.push({ id: row.id, record: row.record });
    return out;
  }

  async put(entries: PutEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // One statement: the batch is written whole or not at all. A repeated id keeps its last version
    // (ON CONFLICT cannot touch one row twice in a statement).
    const last = new Map(entries.map((e) => [e.id, e]));
    const es = [...last.values()];
    await this.query(
      `INSERT INTO ${this.s}.docs (id, record, keys, expires_at)
       SELECT u.id, u.record, u.ks::bigint[], u.x FROM unnest($1::text[], $2::bytea[], $3::text[], $4::float8[]) AS u(id, record, ks, x)
       ON CONFLICT (id) DO UPDATE SET record = EXCLUDED.record, keys = EXCLUDED.keys, expires_at = EXCLUDED.expires_at`,
      [es.map((e) => e.id), es.map((e) => e.record), es.map((e) => keyArray(e.keys)), es.map((e) => e.expiresAt ?? null)],
    );
  }

  async get(ids: string[]): Promise<(Uint8Array | null)[]> {
    if (ids.length === 0) return [];
    const r = await this.query<{ id: string; record: Buffer }>(`SELECT id, record FROM ${this.s}.docs WHERE id = ANY($1::text[])`, [ids]);
    const by = new Map(r.rows.map((row) => [row.id, row.record]));
    return ids.map((id) => by.get(id) ?? null);
  }

  async remove(id: string): Promise<boolean> {
    return ((await this.query(`DELETE FROM ${this.s}.docs WHERE id = $1`, [id])).rowCount ?? 0) > 0;
  }

  async removeMany(entries: RemoveEntry[]): Promise<boolean[]> {
    if (entries.length === 0) return [];
    // One statement; the GIN index drops the keys with the rows.
    const r = await this.query<{ id: string }>(`DELETE FROM ${this.s}.docs WHERE id = ANY($1::text[]) RETURNING id`, [entries.map((e) => e.id)]);
    const gone = new Set(r.rows.map((row) => row.id));
    return entries.map((e) => gone.delete(e.id));
  }

  async size(): Promise<number> {
    return Number((await this.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.s}.docs`)).rows[0]!.n);
  }

  async expiredIds(now: number, limit: number): Promise<string[]> {
    // The partial index docs_expires answers the range and its order.
    const r = await this.query<{ id: string }>(
      `SELECT id FROM ${this.s}.docs WHERE expires_at IS NOT NULL AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
      [now, Math.min(limit, 2 ** 31 - 1)],
    );
    return r.rows.map((row) => row.id);
  }

  async countExpired(now: number): Promise<number> {
    return Number(
      (await this.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.s}.docs WHERE expires_at IS NOT NULL AND expires_at <= $1`, [now])).rows[0]!.n,
    );
  }

  async *scan(): AsyncIterable<StoredDoc> {
    // Pages by id (keyset), so no cursor stays open between yields while other writes run.
    let after: string | null = null;
    for (;;) {
      const r: pg.QueryResult<{ id: string; record: Buffer }> = await this.query(
        `SELECT id, record FROM ${this.s}.docs WHERE $1::text IS NULL OR id > $1::text ORDER BY id LIMIT 1000`,
        [after],
      );
      if (r.rows.length === 0) return;
      for (const row of r.rows) yield { id: row.id, record: row.record };
      after = r.rows[r.rows.length - 1]!.id;
    }
  }

  async stats(): Promise<Record<string, number | string>> {
    const r = await this.query<{ docs: string; keys: string; clusters: string }>(
      `SELECT pg_table_size($1::regclass) AS docs, pg_relation_size($2::regclass) AS keys, pg_total_relation_size($3::regclass) AS clusters`,
      [`${this.s}.docs`, `${this.s}.docs_keys`, `${this.s}.clusters`],
    );
    const row = r.rows[0]!;
    return { schema: this.schema, docsBytes: Number(row.docs), keysIndexBytes: Number(row.keys), clustersBytes: Number(row.clusters) };
  }

  async hasPostings(id: string, keys: Float64Array): Promise<boolean[]> {
    // The keys stored in the row are what the GIN index answers for: each must be there.
    const r = await this.query<{ keys: string[] }>(`SELECT keys FROM ${this.s}.docs WHERE id = $1`, [id]);
    const stored = new Set(r.rows[0]?.keys ?? []);
    return Array.from(keys, (k) => stored.has(String(k)));
  }

  /** Store-level consistency: the GIN index over the keys exists and is valid. */
  async checkStore(): Promise<{ errors: string[]; warnings: string[] }> {
    const r = await this.query<{ valid: boolean | null }>(`SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`, [
      `${this.s}.docs_keys`,
    ]);
    const errors: string[] = [];
    if (r.rows.length === 0) errors.push(`index ${this.schema}.docs_keys is missing: lookups scan every document`);
    else if (!r.rows[0]!.valid) errors.push(`index ${this.schema}.docs_keys is invalid (REINDEX it)`);
    const x = await this.query<{ valid: boolean | null }>(`SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`, [
      `${this.s}.docs_expires`,
    ]);
    if (x.rows.length === 0) errors.push(`index ${this.schema}.docs_expires is missing: a purge scans every document`);
    else if (!x.rows[0]!.valid) errors.push(`index ${this.schema}.docs_expires is invalid (REINDEX it)`);
    return { errors, warnings: [] };
  }

  /** Cluster labels in the table `clusters` of this schema. */
  clusterState(): ClusterState {
    return (this.clusters ??= new PostgresClusterState(this.runner, this.s));
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
