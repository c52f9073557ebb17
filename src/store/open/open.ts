/**
 * Opening a store from its spec (`memory`, `sqlite:PATH`, `file:DIR`, `redis://HOST:PORT[/DB][?prefix=NAME…]`,
 * `postgres://HOST/DB[?schema=NAME…]`;
 * the grammar is in src/store/spec.ts).
 * @module
 */
import type { NearDupStore } from '../types.js';
import { MemoryStore } from '../memory/store.js';
import { loadPostgresStore, loadRedisStore, loadSqliteStore } from './load.js';
import { parseStoreSpec } from '../spec.js';

/**
 * Creates the store a spec names. SQLite, Redis and PostgreSQL are loaded on demand, so an index in memory
 * never loads the native module or opens a socket. Throws a RangeError naming a bad spec, and a
 * MissingDependencyError when the store's optional package (better-sqlite3, ioredis, pg) is missing.
 */
export async function openStore(spec: string): Promise<NearDupStore> {
  const s = parseStoreSpec(spec);
  switch (s.kind) {
    case 'memory':
      return new MemoryStore();
    case 'sqlite': {
      const { SqliteStore } = await loadSqliteStore();
      return new SqliteStore(s.path);
    }
    case 'file': {
      // Loaded on first use like the others (no optional package: it is plain node:fs).
      const { FileStore } = await import('../file/store.js');
      return new FileStore(s.path);
    }
    case 'redis': {
      const { RedisStore } = await loadRedisStore();
      return RedisStore.fromUrl(s.url);
    }
    case 'postgres': {
      const { PostgresStore } = await loadPostgresStore();
      return PostgresStore.fromUrl(s.url);
    }
  }
}
