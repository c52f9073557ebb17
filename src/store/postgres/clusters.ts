/**
 * Cluster labels in the PostgreSQL store's schema S (src/store/clusterState.ts):
 *   S.clusters(id text PRIMARY KEY, label text)   -- members of clusters of 2 or more; index on label
 *   S.meta('clusters') = 'ready'                  -- the labels cover every document
 * The cross-process lock is the store's write lock (the advisory lock of src/store/postgres/store.ts):
 * while one process updates clusters, other processes' writes wait, as with SQLite.
 * @module
 */
import type pg from 'pg';
import { byString, labelOf, type ClusterState, type ClusterSummary } from '../clusterState.js';

/** How the labels reach the database: the store's statement runner and its write lock. */
export interface PgRunner {
  /** Runs one statement (on the lock holder's connection inside `exclusive`). */
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
  /** The store's cross-process write lock (reentrant). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
}

/** Cluster labels in a PostgreSQL schema. */
export class PostgresClusterState implements ClusterState {
  /**
   * @param db the store's runner
   * @param s the schema, quoted
   */
  constructor(
    private readonly db: PgRunner,
    private readonly s: string,
  ) {}

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.db.exclusive(fn);
  }

  async isReady(): Promise<boolean> {
    return (await this.db.query(`SELECT 1 FROM ${this.s}.meta WHERE name = 'clusters' AND value = 'ready'`)).rowCount === 1;
  }

  async setReady(ready: boolean): Promise<void> {
    if (ready) await this.db.query(`INSERT INTO ${this.s}.meta (name, value) VALUES ('clusters', 'ready') ON CONFLICT (name) DO UPDATE SET value = 'ready'`);
    // One statement, so the flag and the labels go together.
    else await this.db.query(`WITH f AS (DELETE FROM ${this.s}.meta WHERE name = 'clusters') DELETE FROM ${this.s}.clusters`);
  }

  async labels(ids: string[]): Promise<(string | null)[]> {
    if (ids.length === 0) return [];
    const r = await this.db.query<{ id: string; label: string }>(`SELECT id, label FROM ${this.s}.clusters WHERE id = ANY($1::text[])`, [ids]);
    const by = new Map(r.rows.map((row) => [row.id, row.label]));
    return ids.map((id) => by.get(id) ?? null);
  }

  async members(label: string): Promise<string[]> {
    const r = await this.db.query<{ id: string }>(`SELECT id FROM ${this.s}.clusters WHERE label = $1`, [label]);
    return r.rows.map((row) => row.id).sort(byString);
  }

  async write(drop: string[], put: string[][]): Promise<void> {
    const ids: string[] = [];
    const labels: string[] = [];
    for (const g of put) {
      if (g.length < 2) continue;
      const l = labelOf(g);
      for (const id of g) {
        ids.push(id);
        labels.push(l);
      }
    }
    if (drop.length === 0 && ids.length === 0) return;
    // One statement (atomic): the dropped clusters' members that join no new group lose their
    // label, the others get their new one. The two parts touch disjoint rows, as one statement must.
    await this.db.query(
      `WITH gone AS (DELETE FROM ${this.s}.clusters WHERE label = ANY($1::text[]) AND NOT (id = ANY($2::text[])))
       INSERT INTO ${this.s}.clusters (id, label) SELECT * FROM unnest($2::text[], $3::text[])
       ON CONFLICT (id) DO UPDATE SET label = EXCLUDED.label`,
      [drop, ids, labels],
    );
  }

  async list(offset: number, limit: number): Promise<{ total: number; clusters: ClusterSummary[] }> {
    const [page, total] = await Promise.all([
      this.db.query<{ id: string; size: number }>(
        `SELECT label AS id, count(*)::int AS size FROM ${this.s}.clusters GROUP BY label ORDER BY size DESC, label LIMIT $1 OFFSET $2`,
        [limit, offset],
      ),
      this.db.query<{ n: number }>(`SELECT count(DISTINCT label)::int AS n FROM ${this.s}.clusters`),
    ]);
    // "C" collation orders by UTF-8 bytes, like JavaScript strings except beyond U+FFFF: ties re-sorted.
    return { total: total.rows[0]!.n, clusters: page.rows.sort((a, b) => b.size - a.size || byString(a.id, b.id)) };
  }
}
