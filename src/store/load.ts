/**
 * Loads the SQLite and Redis store modules on first use. Their client packages (better-sqlite3,
 * ioredis) are optional peer dependencies: an application that keeps its index in memory never
 * installs or loads them, and one that names a store whose package is missing gets a
 * MissingDependencyError (src/io/lazy.ts, the one loader of optional packages) that says what to
 * install.
 * @module
 */
import { loadOptional } from '../io/lazy.js';

/** The SQLite store module; throws MissingDependencyError when better-sqlite3 is not installed. */
export function loadSqliteStore(): Promise<typeof import('./sqlite.js')> {
  return loadOptional(() => import('./sqlite.js'), 'better-sqlite3', 'the SQLite store (sqlite:PATH)');
}

/** The Redis store module; throws MissingDependencyError when ioredis is not installed. */
export function loadRedisStore(): Promise<typeof import('./redis.js')> {
  return loadOptional(() => import('./redis.js'), 'ioredis', 'the Redis store (redis://HOST:PORT)');
}
