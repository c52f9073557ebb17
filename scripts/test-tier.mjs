// Runs one tier of the test suite on the compiled tests (dist/test): `node scripts/test-tier.mjs unit`
// or `node scripts/test-tier.mjs node-versioned`. Extra arguments go to `node --test`.
//
// unit: the in-process tests (no server, browser, Redis, PostgreSQL, S3 or CLI child process), each
// under ~10 s here: `npm run test:unit`, for a quick check while working (~1 min after tsc on 2
// cores). Everything else runs in `npm test`.
//
// node-versioned: what can behave differently on another Node version, run again on Node 22 and 24
// by .ci/run after the whole suite on Node 20. The SQLite store runs on node:sqlite there
// (better-sqlite3 on 20), the S3 SDK, Fastify, node-postgres and ioredis sit on Node's net and HTTP
// stacks, the signing and verification kernels on WebAssembly and worker threads, the decoders on
// zlib and streams, task processes on child_process IPC. The rest (batch dedup, the job stages and
// their files, the docs, the browser pages) is JavaScript over those same pieces, so it runs once.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TIERS = {
  unit: [
    'architecture', 'hash', 'text', 'seeds', 'cli-format', 'json-field', 'json-line', 'io-readers', 'io-formats',
    'io-writers', 'sort-pairs', 'pair-columns', 'lsh-params', 'lsh-candidates', 'minhash-stats', 'properties',
    'dedup', 'kinds-dedup', 'kinds-join-filters', 'kinds-online', 'perf-equivalence', 'parallel', 'harden-fuzz',
    'defects-readers', 'report-curves', 'viz-passages', 'online-format', 'online-memory-store', 'online-index',
    'online-duplicates', 'online-recall', 'cli-stream-corpus', 'alias', 'engine-options', 'cli-summary',
  ],
  'node-versioned': [
    'online-store-parity', 'online-expiry', 'online-expiry-http', 'online-clusters', 'online-ensemble', 'online-recall',
    'online-index', 'online-redis-log', 'online-redis-cluster', 'online-http', 'online-memory-store', 'online-format',
    'online-duplicates', 'online-sqlite-durability', 'stores-missing', 'optional-deps', 'store-spec', 'harden-crash',
    'harden-backup', 'harden-redis-outage', 'cli-index-add', 'serve-limits', 'viz-server', 'defects-auth', 's3',
    'parallel', 'perf-equivalence', 'probe-verify', 'decoders-verify', 'task-processes', 'cli-commands', 'dedup',
    'library-api', 'io-formats', 'io-writers', 'kijiji',
  ],
};

const tier = process.argv[2];
const files = TIERS[tier];
if (!files) {
  process.stderr.write(`usage: node scripts/test-tier.mjs ${Object.keys(TIERS).join('|')} [node --test options]\n`);
  process.exit(2);
}
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const paths = files.map((f) => path.join(root, 'dist', 'test', `${f}.test.js`));
const missing = paths.filter((p) => !existsSync(p));
if (missing.length > 0) {
  process.stderr.write(`test tier ${tier}: no such compiled test (run tsc first, or fix the list): ${missing.join(', ')}\n`);
  process.exit(2);
}
const args = [
  '--test', '--test-concurrency=2', '--test-force-exit', '--test-timeout=300000',
  '--test-reporter=spec', '--test-reporter-destination=stdout',
  `--test-reporter=${path.join(root, 'dist', 'test', 'reporters', 'skips.js')}`, '--test-reporter-destination=stdout',
  ...process.argv.slice(3), ...paths,
];
const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(r.status ?? 1);
