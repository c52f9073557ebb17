/**
 * `neardup serve`: the HTTP service over an online index.
 * @module
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { NearDupIndex, type NearDupIndexOptions } from '../../online/nearDupIndex.js';
import { buildApp, installShutdown } from '../../server/app.js';

function num(name: string, integer: boolean) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new InvalidArgumentError(`${name} must be ${integer ? 'an integer' : 'a number'}, got "${v}"`);
    return n;
  };
}

/** The options `serve` accepts, after parsing. */
export interface ServeOptions {
  store: string;
  port: number;
  host: string;
  token?: string;
  threshold?: number;
  k?: number;
  shingle?: 'char' | 'word' | 'spot';
  normalize?: 'default' | 'seed000' | 'none';
  numPerm?: number;
  bands?: number;
  rows?: number;
  minRecall?: number;
  verify?: 'exact' | 'estimate';
  forest: boolean;
  bodyLimit: number;
  log: boolean;
  workers: number;
}

/** The `serve` command, ready to add to a commander program. */
export function serveCommand(): Command {
  return new Command('serve')
    .description('serve an online near-duplicate index over HTTP (POST /v1/documents, /v1/query, …; see docs/http-api.md)')
    .option('--store <spec>', 'memory, sqlite:PATH or redis://HOST:PORT[?prefix=NAME&layout=log|sets] (docs/stores.md)', 'memory')
    .option('--port <n>', 'TCP port (0: any free port)', num('--port', true), 8080)
    .option('--host <addr>', 'address to listen on', '127.0.0.1')
    .addOption(new Option('--token <token>', 'require Authorization: Bearer <token>').env('NEARDUP_TOKEN'))
    .option('--threshold <t>', 'Jaccard threshold (default 0.8)', num('--threshold', false))
    .addOption(new Option('--shingle <kind>', 'shingle kind (default char)').choices(['char', 'word', 'spot']))
    .option('-k, --k <n>', 'shingle length (default 5 for char, 3 for word/spot)', num('--k', true))
    .addOption(new Option('--normalize <preset>', 'normalization preset (default default)').choices(['default', 'seed000', 'none']))
    .option('--num-perm <n>', 'MinHash signature length (default 128)', num('--num-perm', true))
    .option('--bands <n>', 'LSH bands (default: chosen for the threshold)', num('--bands', true))
    .option('--rows <n>', 'rows per band', num('--rows', true))
    .option('--min-recall <p>', 'P(candidate) at the threshold when choosing bands (default 0.99)', num('--min-recall', false))
    .addOption(new Option('--verify <mode>', 'exact Jaccard or MinHash estimate (default exact)').choices(['exact', 'estimate']))
    .option('--no-forest', 'no LSH-Forest keys (smaller, faster inserts; disables topK)')
    .option('--workers <n>', 'threads that shingle and sign the documents of batch requests (64 or more documents)', num('--workers', true), 0)
    .option('--body-limit <bytes>', 'maximum request body', num('--body-limit', true), 1024 * 1024)
    .option('--log', 'log every request (pino JSON on stdout)', false)
    .action(async (o: ServeOptions) => {
      await runServe(o);
    });
}

/** Opens the index, listens, and installs graceful shutdown. Resolves once listening. */
export async function runServe(o: ServeOptions): Promise<void> {
  const opts: NearDupIndexOptions = {
    store: o.store,
    ...(o.threshold !== undefined ? { threshold: o.threshold } : {}),
    ...(o.shingle || o.k !== undefined || o.normalize
      ? { shingle: { ...(o.shingle ? { kind: o.shingle } : {}), ...(o.k !== undefined ? { k: o.k } : {}), ...(o.normalize ? { normalize: { preset: o.normalize } } : {}) } }
      : {}),
    ...(o.numPerm !== undefined ? { numPerm: o.numPerm } : {}),
    ...(o.bands !== undefined ? { bands: o.bands } : {}),
    ...(o.rows !== undefined ? { rows: o.rows } : {}),
    ...(o.minRecall !== undefined ? { minRecall: o.minRecall } : {}),
    ...(o.verify ? { verify: o.verify } : {}),
    ...(o.forest ? {} : { forest: false as const }),
    ...(o.workers ? { workers: o.workers } : {}),
  };
  const index = await NearDupIndex.open(opts);
  const app = buildApp(index, { token: o.token, bodyLimit: o.bodyLimit, logger: o.log });
  installShutdown(app, index);
  const address = await app.listen({ port: o.port, host: o.host });
  const size = await index.size();
  process.stderr.write(`neardup serve: listening on ${address} (store ${index.store.kind}, ${size} documents, threshold ${index.manifest.threshold})\n`);
}
