/**
 * Loads the SQLite, Redis and PostgreSQL store modules on first use. Their client packages
 * (better-sqlite3, ioredis, pg) are optional peer dependencies: an application that keeps its index in memory never
 * installs or loads them, and one that names a store whose package is missing gets a
 * MissingDependencyError (src/common/lazy.ts, the one loader of optional packages) that says what to
 * install.
 * @module
 */
import { loadOptional } from '../../common/lazy.js';

/** The SQLite store module; throws MissingDependencyError when better-sqlite3 is not installed. */
export function loadSqliteStore(): Promise<typeof import('../sqlite/store.js')> {
  return loadOptional(() => import('../sqlite/store.js'), 'better-sqlite3', 'the SQLite store (sqlite:PATH)');
}

/** The Redis store module; throws MissingDependencyError when ioredis is not installed. */
export function loadRedisStore(): Promise<typeof import('../redis/store.js')> {
  return loadOptional(() => import('../redis/store.js'), 'ioredis', 'the Redis store (redis://HOST:PORT)');
}

/** The PostgreSQL store module; throws MissingDependencyError when pg (node-postgres) is not installed. */
export function loadPostgresStore(): Promise<typeof import('../postgres/store.js')> {
  return loadOptional(() => import('../postgres/store.js'), 'pg', 'the PostgreSQL store (postgres://HOST/DB)');
}
