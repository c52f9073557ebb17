/**
 * The SQLite driver under the SQLite store (./store.ts): Node's built-in `node:sqlite` on Node ≥
 * 22.13 (no native build, no package), else the better-sqlite3 package (an optional peer, compiled on
 * install). The store is written against the part of better-sqlite3's API it uses; on `node:sqlite`
 * {@link NodeSqliteDatabase} gives that part over `DatabaseSync`: `pragma`, `exec`, `prepare` with
 * `pluck()`, `transaction(fn).immediate` (SAVEPOINT when nested, as better-sqlite3),
 * `inTransaction`, `open`, `close`, `backup`. Both write the same file format: a store file moves
 * between them. `NEARDUP_SQLITE_DRIVER=better-sqlite3|node:sqlite` forces one (tests run the store
 * tests on each). Node 22 prints an ExperimentalWarning when `node:sqlite` loads; it is dropped here,
 * once (Node 24 prints none).
 * @module
 */
import type BetterSqlite from 'better-sqlite3';

/** The driver in use: `node:sqlite` or `better-sqlite3`. */
export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

type Row = Record<string, unknown>;
type Param = null | number | bigint | string | Uint8Array;

// The part of node:sqlite the store uses, declared here: the repo builds against @types/node 20,
// which has no node:sqlite.
interface StatementSync {
  run(...params: Param[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: Param[]): unknown;
  all(...params: Param[]): unknown[];
}
interface DatabaseSync {
  readonly isOpen: boolean;
  readonly isTransaction: boolean;
  exec(sql: string): void;
  prepare(sql: string): StatementSync;
  close(): void;
}
interface NodeSqlite {
  DatabaseSync: new(path: string) => DatabaseSync;
  backup(source: DatabaseSync, dest: string): Promise<number>;
}

/** True when this Node has a `node:sqlite` the store can use: Node ≥ 22.13 (unflagged there). */
export function nodeSqliteAvailable(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 13);
}

/** The driver to use: NEARDUP_SQLITE_DRIVER when set, else `node:sqlite` where available. */
export function chooseSqliteDriver(env = process.env.NEARDUP_SQLITE_DRIVER): SqliteDriverName {
  if (env === 'node:sqlite' || env === 'node') {
    if (!nodeSqliteAvailable()) throw new Error(`NEARDUP_SQLITE_DRIVER=${env} needs Node ≥ 22.13 (this is ${process.versions.node})`);
    return 'node:sqlite';
  }
  if (env === 'better-sqlite3') return 'better-sqlite3';
  if (env) throw new Error(`NEARDUP_SQLITE_DRIVER must be node:sqlite or better-sqlite3, got "${env}"`);
  return nodeSqliteAvailable() ? 'node:sqlite' : 'better-sqlite3';
}

/** Imports node:sqlite without Node 22's one-time ExperimentalWarning. */
async function importNodeSqlite(): Promise<NodeSqlite> {
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning?.message;
    if (typeof text === 'string' && text.startsWith('SQLite is an experimental feature')) return;
    return (emit as (...a: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    const name = 'node:sqlite';
    return (await import(name)) as NodeSqlite;
  } finally {
    process.emitWarning = emit;
  }
}

/** The driver of this process, chosen once when the SQLite store module loads. */
export const sqliteDriver: SqliteDriverName = chooseSqliteDriver();
const nodeSqlite: NodeSqlite | undefined = sqliteDriver === 'node:sqlite' ? await importNodeSqlite() : undefined;
const Better: typeof BetterSqlite | undefined = sqliteDriver === 'better-sqlite3' ? (await import('better-sqlite3')).default : undefined;

/** Opens the database file `path` with the chosen driver, as a better-sqlite3 `Database` (the part the store uses). */
export function openDatabase(path: string): BetterSqlite.Database {
  if (nodeSqlite) return new NodeSqliteDatabase(nodeSqlite, path) as unknown as BetterSqlite.Database;
  return new Better!(path);
}

/** SQLite's primary result codes the store tells apart, by number (node:sqlite gives numbers). */
const CODE_NAMES: Record<number, string> = { 5: 'SQLITE_BUSY', 6: 'SQLITE_LOCKED' };

/** Runs `fn`, giving a node:sqlite error better-sqlite3's `code` (`SQLITE_BUSY`, …) where the store looks at it. */
function coded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const errcode = (e as { errcode?: number }).errcode;
    const name = typeof errcode === 'number' ? CODE_NAMES[errcode & 0xff] : undefined;
    if (name) {
      const err = new Error((e as Error).message, { cause: e }) as Error & { code: string };
      err.code = name;
      throw err;
    }
    throw e;
  }
}

/** A prepared statement with better-sqlite3's `run`/`get`/`all` and `pluck()`. */
class NodeSqliteStatement {
  constructor(
    private readonly stmt: StatementSync,
    private readonly plucked = false,
  ) {}

  pluck(): NodeSqliteStatement {
    return new NodeSqliteStatement(this.stmt, true);
  }

  run(...params: Param[]): { changes: number | bigint; lastInsertRowid: number | bigint } {
    return coded(() => this.stmt.run(...params));
  }

  get(...params: Param[]): unknown {
    const row = coded(() => this.stmt.get(...params)) as Row | undefined;
    return this.plucked && row !== undefined ? firstValue(row) : row;
  }

  all(...params: Param[]): unknown[] {
    const rows = coded(() => this.stmt.all(...params)) as Row[];
    return this.plucked ? rows.map(firstValue) : rows;
  }
}

function firstValue(row: Row): unknown {
  for (const k in row) return row[k];
  return undefined;
}

type Tx = ((...args: unknown[]) => unknown) & {
  immediate: (...args: unknown[]) => unknown;
  deferred: (...args: unknown[]) => unknown;
  exclusive: (...args: unknown[]) => unknown;
};

/** A `DatabaseSync` with the part of better-sqlite3's `Database` the SQLite store uses. */
export class NodeSqliteDatabase {
  private readonly db: DatabaseSync;
  private readonly mod: NodeSqlite;
  private depth = 0;

  constructor(mod: NodeSqlite, path: string) {
    this.mod = mod;
    this.db = new mod.DatabaseSync(path);
  }

  get open(): boolean {
    return this.db.isOpen;
  }

  get inTransaction(): boolean {
    return this.db.isTransaction;
  }

  exec(sql: string): this {
    coded(() => this.db.exec(sql));
    return this;
  }

  prepare(sql: string): NodeSqliteStatement {
    return new NodeSqliteStatement(coded(() => this.db.prepare(sql)));
  }

  /** `PRAGMA …`; with `simple`, the first column of the first row. */
  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    const rows = coded(() => this.db.prepare(`PRAGMA ${source}`).all()) as Row[];
    return options.simple ? (rows[0] === undefined ? undefined : firstValue(rows[0])) : rows;
  }

  /** better-sqlite3's `transaction(fn)`: BEGIN … COMMIT, or a SAVEPOINT inside a transaction; ROLLBACK on a throw. */
  transaction(fn: (...args: unknown[]) => unknown): Tx {
    const run = (mode: string) => (...args: unknown[]): unknown => {
      const nested = this.db.isTransaction;
      const name = `neardup_sp${this.depth}`;
      this.exec(nested ? `SAVEPOINT ${name}` : `BEGIN ${mode}`);
      this.depth++;
      try {
        const result = fn(...args);
        this.exec(nested ? `RELEASE ${name}` : 'COMMIT');
        return result;
      } catch (e) {
        if (nested) {
          this.exec(`ROLLBACK TO ${name}`);
          this.exec(`RELEASE ${name}`);
        } else if (this.db.isTransaction) this.exec('ROLLBACK');
        throw e;
      } finally {
        this.depth--;
      }
    };
    return Object.assign(run('DEFERRED'), { deferred: run('DEFERRED'), immediate: run('IMMEDIATE'), exclusive: run('EXCLUSIVE') });
  }

  /** A consistent copy at `dest` with SQLite's online backup API. */
  async backup(dest: string): Promise<void> {
    await this.mod.backup(this.db, dest);
  }

  close(): void {
    this.db.close();
  }
}
