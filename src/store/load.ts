/**
 * Loads the SQLite and Redis store modules on first use. Their client packages (better-sqlite3,
 * ioredis) are optional peer dependencies: an application that keeps its index in memory never
 * installs or loads them, and one that names a store whose package is missing gets a
 * MissingDependencyError that says what to install, not a module-resolution stack trace.
 * @module
 */
import { MissingDependencyError } from './errors.js';

/** True when `e` says that the package `name` itself (not something inside it) cannot be found. */
function isMissingPackage(e: unknown, name: string): boolean {
  const err = e as { code?: string; message?: string };
  return (err?.code === 'ERR_MODULE_NOT_FOUND' || err?.code === 'MODULE_NOT_FOUND') && typeof err.message === 'string' && err.message.includes(`'${name}'`);
}

/** The SQLite store module; throws MissingDependencyError when better-sqlite3 is not installed. */
export async function loadSqliteStore(): Promise<typeof import('./sqlite.js')> {
  try {
    return await import('./sqlite.js');
  } catch (e) {
    if (isMissingPackage(e, 'better-sqlite3')) throw new MissingDependencyError('better-sqlite3', 'the SQLite store (sqlite:PATH)', { cause: e });
    throw e;
  }
}

/** The Redis store module; throws MissingDependencyError when ioredis is not installed. */
export async function loadRedisStore(): Promise<typeof import('./redis.js')> {
  try {
    return await import('./redis.js');
  } catch (e) {
    if (isMissingPackage(e, 'ioredis')) throw new MissingDependencyError('ioredis', 'the Redis store (redis://HOST:PORT)', { cause: e });
    throw e;
  }
}
