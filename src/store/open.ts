/**
 * Store specs: `memory`, `sqlite:PATH` and `redis://HOST:PORT[/DB][?prefix=NAME]`.
 * @module
 */
import type { NearDupStore } from './types.js';
import { MemoryStore } from './memory.js';
import { loadRedisStore, loadSqliteStore } from './load.js';

/**
 * Creates the store a spec names. SQLite and Redis are loaded on demand, so an index in memory
 * never loads the native module or opens a socket. Throws a RangeError naming a bad spec, and a
 * MissingDependencyError when the store's optional package (better-sqlite3, ioredis) is missing.
 */
export async function openStore(spec: string): Promise<NearDupStore> {
  if (spec === 'memory' || spec === '') return new MemoryStore();
  if (spec.startsWith('sqlite:')) {
    const path = spec.slice('sqlite:'.length);
    if (!path) throw new RangeError('store "sqlite:" needs a file path, e.g. sqlite:./index.db');
    const { SqliteStore } = await loadSqliteStore();
    return new SqliteStore(path);
  }
  if (spec.startsWith('redis://') || spec.startsWith('rediss://')) {
    const { RedisStore } = await loadRedisStore();
    return RedisStore.fromUrl(spec);
  }
  throw new RangeError(`unknown store "${spec}" (expected memory, sqlite:PATH or redis://HOST:PORT)`);
}
