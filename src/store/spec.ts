/**
 * The one parser of store specs (`--store`, `NearDupIndexOptions.store`): `memory`, `sqlite:PATH`,
 * `file:DIR` or a bare path `DIR` (the file store: a directory of its own; the store a local path gets) and `redis://[:password@]HOST:PORT[/DB][?prefix=NAME&layout=log|sets&cluster=1&scripts=0&timeout=MS&lock=0]`
 * (also `rediss://`) and `postgres://[USER[:PASSWORD]@]HOST[:PORT]/DB[?schema=NAME&pool=N&timeout=MS]` (also
 * `postgresql://`). Pure parsing, no I/O and no optional package: the CLI checks a spec with it
 * before opening anything, and {@link openStore} opens what it describes. Errors are RangeErrors
 * that quote the spec (the CLI reports them as usage errors, exit 2).
 * @module
 */

/** The key layouts of the Redis store: see docs/stores.md. */
export type RedisLayoutName = 'log' | 'sets';

/** Default time a Redis command may take before the request fails with 503. */
export const DEFAULT_REDIS_TIMEOUT_MS = 2000;

/** The options a Redis URL carries. */
export interface RedisUrlOptions {
  /** The URL without its query string (what the client connects to). */
  address: string;
  /** Host and port (seed node of a Redis Cluster). */
  host: string;
  port: number;
  /** Password from the URL, if any. */
  password: string | undefined;
  /** `prefix=`: key prefix, default `nd`. */
  prefix: string;
  /** `scripts=0` turns multi-key commands off (the Cluster code path on standalone Redis). */
  scripts: boolean;
  /** `layout=`: the key layout of a new store (undefined: log for a new store, whatever an existing one has). */
  layout: RedisLayoutName | undefined;
  /** `lock=0` turns the cross-process write lock off (one writer process only). */
  writeLock: boolean;
  /** `cluster=1`: the address is a seed node of a Redis Cluster. */
  cluster: boolean;
  /** `timeout=MS`: bound of each command (default 2000). */
  timeoutMs: number;
}

/** The options a PostgreSQL URL carries (src/store/postgres/store.ts). */
export interface PostgresUrlOptions {
  /** The URL without neardup's own query options (what node-postgres connects to). */
  connectionString: string;
  /** `schema=`: the PostgreSQL schema holding the index's tables, default `neardup`. */
  schema: string;
  /** `pool=`: connections per process, default 4. */
  pool: number;
  /** `timeout=MS`: how long connecting may take before a request fails with 503 (default 2000). */
  timeoutMs: number;
}

/** A parsed store spec. */
export type StoreSpec =
  | { kind: 'memory' }
  | { kind: 'sqlite'; path: string }
  | { kind: 'file'; path: string }
  | { kind: 'redis'; url: string; redis: RedisUrlOptions }
  | { kind: 'postgres'; url: string; postgres: PostgresUrlOptions };

/** Default time connecting to PostgreSQL may take before a request fails with 503. */
export const DEFAULT_POSTGRES_TIMEOUT_MS = 2000;

/**
 * Parses a `postgres://` or `postgresql://` URL. neardup's options (`schema`, `pool`, `timeout`)
 * are taken out; the rest of the URL (user, password, host, port, database, `sslmode`…) goes to
 * node-postgres as is. The schema name is a plain SQL identifier (it is written into statements).
 */
export function parsePostgresUrl(url: string): PostgresUrlOptions {
  const u = parseUrl(url, 'PostgreSQL');
  const q = u.searchParams;
  const schema = q.get('schema') ?? 'neardup';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new RangeError(`bad PostgreSQL URL "${url}": schema must be a lower-case SQL identifier (letters, digits, _)`);
  const pool = Number(q.get('pool') ?? 4);
  if (!(Number.isInteger(pool) && pool >= 1 && pool <= 100)) throw new RangeError(`bad PostgreSQL URL "${url}": pool must be an integer from 1 to 100`);
  const timeoutMs = timeoutParam(q, DEFAULT_POSTGRES_TIMEOUT_MS, url, 'PostgreSQL');
  for (const k of ['schema', 'pool', 'timeout']) q.delete(k);
  return { connectionString: u.toString(), schema, pool, timeoutMs };
}

/** True when `spec` names a PostgreSQL store (by its scheme). */
export function isPostgresSpec(spec: string): boolean {
  return spec.startsWith('postgres://') || spec.startsWith('postgresql://');
}

/** A store URL, or a RangeError naming it (`what`: Redis, PostgreSQL). */
function parseUrl(url: string, what: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new RangeError(`bad ${what} URL "${url}"`);
  }
}

/** `timeout=MS` of a store URL: a positive integer of milliseconds (default `dflt`), else a RangeError naming the URL. */
function timeoutParam(q: URLSearchParams, dflt: number, url: string, what: string): number {
  const ms = Number(q.get('timeout') ?? dflt);
  if (!(Number.isInteger(ms) && ms > 0)) throw new RangeError(`bad ${what} URL "${url}": timeout must be a positive number of milliseconds`);
  return ms;
}

/** Parses the query options of a `redis://` or `rediss://` URL. */
export function parseRedisUrl(url: string): RedisUrlOptions {
  const u = parseUrl(url, 'Redis');
  const q = u.searchParams;
  const layout = q.get('layout');
  if (layout !== null && layout !== 'log' && layout !== 'sets') throw new RangeError(`bad Redis URL "${url}": layout must be log or sets`);
  const lock = q.get('lock');
  if (lock !== null && lock !== '0' && lock !== '1') throw new RangeError(`bad Redis URL "${url}": lock must be 0 or 1`);
  const cluster = q.get('cluster');
  const timeoutMs = timeoutParam(q, DEFAULT_REDIS_TIMEOUT_MS, url, 'Redis');
  const host = u.hostname || '127.0.0.1';
  const port = Number(u.port || 6379);
  const password = u.password || undefined;
  const prefix = q.get('prefix') ?? 'nd';
  const scripts = q.get('scripts') !== '0';
  // Read every option before this: clearing the query string empties u.searchParams too.
  u.search = '';
  return {
    address: u.toString(),
    host,
    port,
    password,
    prefix,
    scripts,
    layout: layout ?? undefined,
    writeLock: lock !== '0',
    cluster: cluster === '1' || cluster === 'true',
    timeoutMs,
  };
}

/** True when `spec` names a Redis store (by its scheme; the rest is checked by {@link parseStoreSpec}). */
export function isRedisSpec(spec: string): boolean {
  return spec.startsWith('redis://') || spec.startsWith('rediss://');
}

/**
 * A spec that starts with a scheme (`name:`, two letters or more, so a drive letter is not one): a
 * store kind must follow. Anything else is a local path.
 */
const SCHEME = /^[a-z][a-z0-9+.-]+:/i;

/** The spec forms of each store kind, for help texts and messages (one wording everywhere). */
export const STORE_FORMS = {
  memory: 'memory',
  file: 'DIR or file:DIR',
  sqlite: 'sqlite:PATH',
  redis: 'redis://HOST:PORT[?prefix=NAME]',
  postgres: 'postgres://HOST/DB[?schema=NAME]',
} as const satisfies Record<StoreSpec['kind'], string>;

/** The spec forms of some store kinds, as a list in prose ("DIR or file:DIR, sqlite:PATH or …"). */
export function storeForms(kinds: readonly StoreSpec['kind'][]): string {
  const forms = kinds.map((k) => STORE_FORMS[k]);
  return forms.length < 2 ? (forms[0] ?? '') : `${forms.slice(0, -1).join(', ')} or ${forms[forms.length - 1]}`;
}

/**
 * Parses a store spec; `''` means `memory`, and a path without a scheme (`./ads`, `/var/lib/nd/ads`)
 * the file store in that directory. Throws a RangeError naming what is wrong.
 */
export function parseStoreSpec(spec: string): StoreSpec {
  if (spec === 'memory' || spec === '') return { kind: 'memory' };
  if (spec.startsWith('sqlite:')) {
    const path = spec.slice('sqlite:'.length);
    if (!path) throw new RangeError('store "sqlite:" needs a file path, e.g. sqlite:./index.db');
    return { kind: 'sqlite', path };
  }
  if (spec.startsWith('file:')) {
    const path = spec.slice('file:'.length);
    if (!path) throw new RangeError('store "file:" needs a directory, e.g. file:./index');
    return { kind: 'file', path };
  }
  if (isRedisSpec(spec)) return { kind: 'redis', url: spec, redis: parseRedisUrl(spec) };
  if (isPostgresSpec(spec)) return { kind: 'postgres', url: spec, postgres: parsePostgresUrl(spec) };
  if (!SCHEME.test(spec)) return { kind: 'file', path: spec };
  throw new RangeError(
    `unknown store "${spec}" (expected ${storeForms(['memory', 'file', 'sqlite', 'redis', 'postgres'])}; a directory whose name has a colon: file:${spec})`,
  );
}
