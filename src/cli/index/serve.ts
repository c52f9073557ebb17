/**
 * `neardup serve`: the HTTP service over an online index.
 * @module
 */
import { Command, Option } from 'commander';
import { UsageError } from '../../common/errors.js';
import { bearerTokenProblem } from '../../common/bearer.js';
import type { IndexRegistry } from '../../online/registry/registry.js';
import { lockRegistry, makeRegistryDir, openRegistry } from './named.js';
import { addIndexOptions, checkStoreFile, duration, indexOptionsFrom, num, openIndex, storeSpecFlag, type IndexFlags } from './options.js';
import { refuseDirectoryHolding } from '../../io/write/alias.js';
import { withTextSets } from '../../online/manifest.js';

/** The options `serve` accepts, after parsing. */
export interface ServeOptions extends IndexFlags {
  port: number;
  host: string;
  token?: string;
  bodyLimit: number;
  log: boolean;
  storeText: boolean;
  requestTimeout: number;
  headerTimeout: number;
  shutdownTimeout: number;
  purgeInterval: number;
  /** The registry directory of named indexes. */
  indexes?: string;
}

/** The `serve` command, ready to add to a commander program. */
export function serveCommand(): Command {
  const cmd = new Command('serve').description('serve an online near-duplicate index over HTTP (POST /v1/documents, /v1/query, …; see docs/http-api.md)');
  addIndexOptions(cmd, { help: 'threads that shingle and sign the documents of batch requests (64 or more documents)', default: 0 });
  return cmd
    .option('--port <n>', 'TCP port (0: any free port)', num('--port', true), 8080)
    .option('--host <addr>', 'address to listen on', '127.0.0.1')
    .addOption(new Option('--token <token>', 'require Authorization: Bearer <token>').env('NEARDUP_TOKEN'))
    .option('--body-limit <bytes>', 'maximum request body', num('--body-limit', true), 1024 * 1024)
    .option('--log', 'log every request (pino JSON on stdout)', false)
    .option('--no-store-text', 'do not keep the texts of added documents (meta.text); the web page then cannot show what near duplicates share')
    .option('--request-timeout <ms>', 'time a client has to send a whole request, headers and body, then 408 (0: none)', num('--request-timeout', true), 30_000)
    .option('--header-timeout <ms>', 'time a client has to send the request headers, then 408', num('--header-timeout', true), 10_000)
    .option(
      '--shutdown-timeout <ms>',
      'on SIGTERM/SIGINT, time requests in flight have to finish before their connections are closed',
      num('--shutdown-timeout', true),
      10_000,
    )
    .option(
      '--indexes <dir>',
      'also serve the named indexes of this registry directory under /v1/indexes/NAME (created when missing; POST /v1/indexes creates one; docs/http-api.md)',
    )
    .option(
      '--purge-interval <duration>',
      'how often expired documents are purged in the background (1m, 30s; 0: never; they are hidden either way)',
      duration('--purge-interval', true),
      60_000,
    )
    .action(async (o: ServeOptions, cmd: Command) => {
      await runServe(o, cmd.getOptionValueSource('token') === 'env' ? 'NEARDUP_TOKEN' : '--token');
    });
}

/** The registry of `--indexes DIR`, created when missing and held while serving (its release closes it and lets the lock go). */
async function serveRegistry(dir: string): Promise<{ registry: IndexRegistry; release: () => Promise<void> }> {
  await makeRegistryDir(dir);
  const unlock = await lockRegistry(dir);
  try {
    const registry = await openRegistry(dir, true);
    return { registry, release: async () => (await registry.close(), await unlock()) };
  } catch (e) {
    await unlock();
    throw e;
  }
}

/**
 * Refuses (exit 2) a registry that is, holds or lies inside the directory of a file or SQLite
 * `--store`: named indexes are files and directories beside each other, so the two would take each
 * other's files (an index named `table` replaced a file store's checkpoint; a store in `DIR/NAME`
 * is the named index NAME, opened twice).
 */
async function refuseStoreInRegistry(indexes: string, store: string): Promise<void> {
  const spec = storeSpecFlag(store);
  if (spec.kind !== 'file' && spec.kind !== 'sqlite') return;
  const why = "the named indexes and the store would take each other's files";
  const [registry, st] = [{ what: '--indexes', path: indexes }, { what: '--store', path: spec.path }];
  await refuseDirectoryHolding(registry, st, why);
  if (spec.kind === 'file') await refuseDirectoryHolding(st, registry, why);
}

/**
 * Opens the index, listens, and installs graceful shutdown. Resolves once listening. `tokenFrom`
 * names where the token came from, for the message refusing an empty one.
 */
export async function runServe(o: ServeOptions, tokenFrom = '--token'): Promise<void> {
  // An empty token would serve every route without auth, silently; one no client can send would lock it.
  const problem = o.token === undefined ? undefined : bearerTokenProblem(o.token);
  if (problem === 'is empty')
    throw new UsageError(`${tokenFrom} is empty: give the bearer token clients must send, or leave ${tokenFrom} out to serve without auth`);
  if (problem) throw new UsageError(`${tokenFrom} ${problem}`);
  const opts = withTextSets(indexOptionsFrom(o), o.storeText);
  if (o.indexes !== undefined) await refuseStoreInRegistry(o.indexes, o.store);
  await checkStoreFile(o.store, false, 'serve');
  const index = await openIndex(opts);
  // Loaded here, not at the top: help and --version list this command without loading Fastify (~40 ms).
  const { buildApp, installShutdown } = await import('../../server/app.js');
  for (
    const [flag, v] of [['--request-timeout', o.requestTimeout], ['--header-timeout', o.headerTimeout], ['--shutdown-timeout', o.shutdownTimeout]] as const
  ) {
    if (v < 0) throw new UsageError(`${flag} must be 0 or more milliseconds, got ${v}`);
  }
  const named = o.indexes === undefined ? undefined : await serveRegistry(o.indexes);
  const app = buildApp(index, {
    token: o.token,
    bodyLimit: o.bodyLimit,
    logger: o.log,
    storeText: o.storeText,
    requestTimeout: o.requestTimeout,
    headerTimeout: o.headerTimeout,
    purgeInterval: o.purgeInterval,
    registry: named?.registry,
  });
  if (named) app.addHook('onClose', named.release);
  installShutdown(app, index, undefined, o.shutdownTimeout);
  await app.listen({ port: o.port, host: o.host });
  // The address listened on (Fastify's answer names 127.0.0.1 for --host 0.0.0.0).
  const bound = app.server.address();
  const address = bound && typeof bound === 'object'
    ? `http://${bound.family === 'IPv6' || bound.address.includes(':') ? `[${bound.address}]` : bound.address}:${bound.port}`
    : String(bound);
  const size = await index.size();
  const more = named ? `; ${named.registry.list().length} named indexes in ${o.indexes}` : '';
  process.stderr.write(`neardup serve: listening on ${address} (store ${index.store.kind}, ${size} documents, threshold ${index.manifest.threshold}${more})\n`);
}
