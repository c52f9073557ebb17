/**
 * Cluster labels in the SQLite store's file (src/store/clusterState.ts):
 *   clusters(id TEXT PRIMARY KEY, label TEXT NOT NULL)   -- members of clusters of 2 or more
 *   meta('clusters') = 'ready'                           -- the labels cover every document
 * The cross-process lock is SQLite's own write lock (BEGIN IMMEDIATE … COMMIT): while one process
 * updates clusters, another process's writes wait (busy_timeout) instead of interleaving.
 * @module
 */
import type Database from 'better-sqlite3';
import { byString, labelOf, type ClusterState, type ClusterSummary } from '../clusterState.js';

/** Cluster labels in a SQLite database (the store's own connection). */
export class SqliteClusterState implements ClusterState {
  private readonly q: {
    label: Database.Statement;
    members: Database.Statement;
    del: Database.Statement;
    set: Database.Statement;
    ready: Database.Statement;
    page: Database.Statement;
    total: Database.Statement;
  };
  private readonly writeTx: (drop: string[], put: string[][]) => void;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS clusters (id TEXT PRIMARY KEY, label TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS clusters_label ON clusters (label);
    `);
    this.q = {
      label: db.prepare('SELECT label FROM clusters WHERE id = ?').pluck(),
      members: db.prepare('SELECT id FROM clusters WHERE label = ?').pluck(),
      del: db.prepare('DELETE FROM clusters WHERE label = ?'),
      set: db.prepare('INSERT OR REPLACE INTO clusters (id, label) VALUES (?, ?)'),
      ready: db.prepare("SELECT value FROM meta WHERE name = 'clusters'").pluck(),
      page: db.prepare('SELECT label AS id, count(*) AS size FROM clusters GROUP BY label ORDER BY size DESC, label LIMIT ? OFFSET ?'),
      total: db.prepare('SELECT count(DISTINCT label) FROM clusters').pluck(),
    };
    const q = this.q;
    this.writeTx = db.transaction((drop: string[], put: string[][]) => {
      for (const l of drop) q.del.run(l);
      for (const g of put) {
        if (g.length < 2) continue;
        const l = labelOf(g);
        for (const id of g) q.set.run(id, l);
      }
    });
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    // One holder per process (a second BEGIN on this connection would fail), then the file lock;
    // inside the store's own write transaction (SqliteStore.exclusive, same connection) the file
    // lock is already held and the cluster writes commit with the document write.
    const run = this.chain.then(async () => {
      if (this.db.inTransaction) return fn();
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const r = await fn();
        this.db.exec('COMMIT');
        return r;
      } catch (e) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw e;
      }
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  async isReady(): Promise<boolean> {
    return this.q.ready.get() === 'ready';
  }

  async setReady(ready: boolean): Promise<void> {
    if (ready) this.db.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES ('clusters', 'ready')").run();
    else {
      this.db.prepare("DELETE FROM meta WHERE name = 'clusters'").run();
      this.db.prepare('DELETE FROM clusters').run();
    }
  }

  async labels(ids: string[]): Promise<(string | null)[]> {
    return ids.map((id) => (this.q.label.get(id) as string | undefined) ?? null);
  }

  async members(label: string): Promise<string[]> {
    return (this.q.members.all(label) as string[]).sort(byString);
  }

  async write(drop: string[], put: string[][]): Promise<void> {
    this.writeTx(drop, put);
  }

  async list(offset: number, limit: number): Promise<{ total: number; clusters: ClusterSummary[] }> {
    // SQLite compares TEXT with memcmp on UTF-8, which orders like JavaScript strings except for
    // characters beyond U+FFFF; re-sort ties so every store lists in the same order.
    const clusters = (this.q.page.all(limit, offset) as ClusterSummary[]).sort((a, b) => b.size - a.size || byString(a.id, b.id));
    return { total: this.q.total.get() as number, clusters };
  }
}
