// Runs one tier of the test suite on the compiled tests (dist/test): `node scripts/test-tier.mjs all`,
// `node scripts/test-tier.mjs unit` or `node scripts/test-tier.mjs node-versioned`. Extra arguments:
// --test-name-pattern=RE, --test-reporter=FILE (to stdout), --test-concurrency=N (files at once,
// 2 by default). `--test-reporter=scripts/test-times.mjs` ends the run with each file's time. Tests are named by their path below test/
// without `.test.ts` (`io/read/formats`): test/ mirrors src/ (CONTRIBUTING.md, "Tests").
//
// all: every `*.test.js` below dist/test, in every sub-folder (`npm test`). Node 20's `node --test`
// does not expand globs itself and the shell does not expand `**`, so the files are listed here.
//
// unit: the in-process tests (no server, browser, Redis, PostgreSQL, S3 or CLI child process), each
// under ~10 s here: `npm run test:unit`, for a quick check while working (~1 min after tsc on 2
// cores). Everything else runs in `npm test`.
//
// Order: the files of LONGEST_FIRST (below; measured on 2 cores) start first, the rest follow in name
// order, 2 at a time. In name order (what Node 20's `node --test FILES` does whatever order they are
// given in) a 250 s file near the end (shard/files/integrity) ran alone while the other slot sat
// idle; longest first keeps both busy to the end. A file missing from the list only starts later.
//
// node-versioned: what can behave differently on another Node version, run again on Node 22 and 24
// by .ci/run beside the tail of the whole suite on Node 20 (NEARDUP_TIER_TAIL, below): one file per piece that sits on Node itself. The
// SQLite store runs on node:sqlite there (better-sqlite3 on 20: the parity, durability and
// concurrent-open tests), the file store on fs's fdatasync and appends, node-postgres and ioredis on
// net (store parity, a Redis outage), the S3 SDK and Fastify on HTTP (io/s3/s3 and server/http; the CLI's s3:// names, io/s3/staging, are JavaScript over that client and run once), the
// signing kernels on WebAssembly and worker threads (known answers, sign-corpus), shared memory sent
// to worker threads (V8's structured clone: shared-views), the word segmenter (ICU's, whose cost on
// long texts differs by version: text/segments), the decoders on
// zlib and streams, task processes on child_process IPC, the package's exports and optional native
// dependencies on the module loader, `serve` started again in place with huge pages by `process.execve` (22.15 and later: cli/huge-pages). The rest (batch dedup, the index's logic, the job stages and
// their files, the docs, the browser pages) is JavaScript over those same pieces, so it runs once.
import { run } from 'node:test';
import * as reporterKinds from 'node:test/reporters';
import { accessSync, chmodSync, constants, existsSync, mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TIERS = {
  unit: [
    'repo/architecture',
    'common/shared-views',
    'repo/function-size',
    'hash/hash',
    'text/text',
    'text/segments',
    'cli/report',
    'io/read/json-field',
    'io/read/json-line',
    'io/read/read',
    'io/read/formats',
    'io/write/write',
    'similarity/sort-pairs',
    'dedup/pair-columns',
    'lsh/params',
    'lsh/candidates',
    'sketch/minhash-stats',
    'text/properties',
    'dedup/dedup',
    'dedup/kinds',
    'similarity/prefix-join-filters',
    'online/kinds',
    'sketch/reference-equivalence',
    'parallel/sign-corpus',
    'io/read/fuzz',
    'text/fuzz',
    'dedup/fuzz',
    'io/read/round-trip',
    'report/curves',
    'report/passages',
    'online/records/format',
    'store/memory/store',
    'online/index',
    'online/duplicates',
    'online/recall',
    'online/search',
    'cli/corpus',
    'io/write/alias',
    'engine/options',
    'cli/summary',
    'sketch/known-answers',
    'online/signature-bits',
    'spans/spans',
    'common/roomArrays',
    'spans/file/file',
    'spans/file/bytePass1',
    'spans/growth',
    'cli/spans/spans',
    'online/registry/registry',
    'shard/files/clusterLines',
    'store/file/checkpoint',
    'io/read/input-stamps',
  ],
  'node-versioned': [
    'store/parity',
    'store/sqlite/durability',
    'store/file/durability',
    'store/missing',
    'common/optional-deps',
    'common/shared-views',
    'text/segments',
    'server/limits',
    'e2e/redis-outage',
    'io/s3/s3',
    'server/http',
    'parallel/sign-corpus',
    'sketch/known-answers',
    'io/codec/decoders',
    'run/local-tasks',
    'online/records/format',
    'online/index',
    'dedup/kijiji',
    'index',
    'cli/huge-pages',
  ],
};

/**
 * The longest files, longest first: seconds of the CI run of e398365 (2 cores, --test-concurrency=3,
 * wall time under that load; only their order counts). `--test-reporter=scripts/test-times.mjs`
 * prints a run's figures.
 */
const LONGEST_FIRST = [
  'e2e/job-differential', // 375
  'distributed/slurm', // 220
  'e2e/distributed-s3', // 206 and 173 for the two S3 files
  'e2e/distributed-s3-bullmq',
  'e2e/job-liveness', // 183
  'e2e/multi-input', // 175
  'cluster/keep-policy', // 174
  'dedup/ranged-source', // 173
  'cli/dedup/dedup', // 157
  'e2e/distributed', // 149
  'io/s3/staging', // 147
  'e2e/job-local', // 145
  'e2e/s3-job', // 114
  'e2e/s3-job-faults', // 100
  'e2e/job-spans', // 96
  'shard/files/integrity', // 96
  'repo/consumer-types', // 95
  'e2e/spans-collisions', // 92
  'e2e/crash', // 85
  'io/s3/s3', // 71
  'shard/stages/decideSpill', // 69
  'store/parity', // 65
  'server/limits', // 64
  'browser/page-trust', // 63
  'shard/plan/estimate', // 63
  'cluster/removal', // 61
  'io/read/json-raw', // 61
  'shard/stages/link', // 59
  'dedup/copy-groups', // 52
  'online/expiry', // 47
  'cli/formats', // 45
  'cli/kinds', // 44
  'cli/refusals', // 42
  'e2e/concurrent-writers', // 42
  'cli/index/add', // 40
  'cli/progress', // 36
  'e2e/redis-outage',
];

/** `files` with those of LONGEST_FIRST first, in its order, then the rest in their order. */
function longestFirst(files) {
  const rank = new Map(LONGEST_FIRST.map((f, i) => [f, i]));
  return [...files.filter((f) => rank.has(f)).sort((a, b) => rank.get(a) - rank.get(b)), ...files.filter((f) => !rank.has(f))];
}

/** Every compiled test below dist/test, as tier names (`io/read/formats`), sorted. */
function allTests(dir, prefix = '') {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...allTests(path.join(dir, e.name), `${prefix}${e.name}/`));
    else if (e.isFile() && e.name.endsWith('.test.js')) out.push(prefix + e.name.slice(0, -'.test.js'.length));
  }
  return out.sort();
}

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const tier = process.argv[2];
const files = tier === 'all' ? (existsSync(path.join(root, 'dist', 'test')) ? allTests(path.join(root, 'dist', 'test')) : []) : TIERS[tier];
if (tier === 'all' && files.length === 0) {
  process.stderr.write('test tier all: no compiled tests in dist/test (run tsc first)\n');
  process.exit(2);
}
if (!files) {
  process.stderr.write(`usage: node scripts/test-tier.mjs all|${Object.keys(TIERS).join('|')} [--test-name-pattern=RE] [--test-reporter=FILE]\n`);
  process.exit(2);
}
const paths = longestFirst(files).map((f) => path.join(root, 'dist', 'test', `${f}.test.js`));
const missing = paths.filter((p) => !existsSync(p));
if (missing.length > 0) {
  process.stderr.write(`test tier ${tier}: no such compiled test (run tsc first, or fix the list): ${missing.join(', ')}\n`);
  process.exit(2);
}
// node:test's run(), not `node --test FILES`: Node 20's CLI sorts the files it is given by name, which
// undid the longest-first order. The same settings as `node --test --test-concurrency=2
// --test-force-exit --test-timeout=900000` with the spec and skip-summary reporters (the timeout is
// per file: e2e/job-differential took 300–400 s on a loaded 2-core machine).
const patterns = [];
const reporters = [];
let concurrency = 2;
for (const a of process.argv.slice(3)) {
  const m = /^--test-(name-pattern|reporter|reporter-destination|concurrency)=(.*)$/.exec(a);
  if (m?.[1] === 'name-pattern') patterns.push(m[2]);
  else if (m?.[1] === 'concurrency' && /^[1-9]\d*$/.test(m[2])) concurrency = Number(m[2]);
  else if (m?.[1] === 'reporter') reporters.push(m[2]);
  else if (m?.[1] !== 'reporter-destination' || m[2] !== 'stdout') {
    process.stderr.write(`test tier ${tier}: ${a}: the options taken are --test-name-pattern=RE and --test-reporter=FILE (to stdout)\n`);
    process.exit(2);
  }
}
// Temp files on tmpfs: the tests make thousands of small files and directories (work dirs, shards,
// stores), and on this machine's ext4 root (mounted with `discard`) a file's create or delete costs
// ~1 ms of system time. shard/files/integrity, which copies ~160 small work dirs, took 68 s (35 s of
// it system time) with its temp dirs under /tmp and 23 s (5 s) under /dev/shm. Nothing in the suite
// depends on the disk behind os.tmpdir(): the crash tests kill processes, which tmpfs survives as a
// disk does. A TMPDIR the caller set is kept; the run's directory is removed when it ends.
const RAM_FS = 0x01021994; // statfs f_type of tmpfs
if (process.env.TMPDIR === undefined && existsSync('/dev/shm')) {
  try {
    accessSync('/dev/shm', constants.W_OK);
    if (statfsSync('/dev/shm').type === RAM_FS) {
      const tmp = mkdtempSync('/dev/shm/neardup-tests-');
      // As /tmp: the PostgreSQL tests run initdb and the server as the postgres user, under it.
      chmodSync(tmp, 0o1777);
      process.env.TMPDIR = tmp;
      process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
    }
  } catch {
    // No usable /dev/shm: the tests use the system's temp directory.
  }
}
// On Node 22 and 24 a test file's process could hang at its exit, every test passed (3 in 90
// runs of online/index on Node 24.22): process.exit joins V8's worker threads while one of them, in a
// concurrent Maglev compile, waits for a collection only the exiting main thread could run
// (nodejs/node#54918). Their compiles run on the main thread instead (0 hangs in 120 runs).
const major = Number(process.versions.node.split('.')[0]);
const execArgv = major >= 22 ? ['--no-concurrent-recompilation', '--no-concurrent-sparkplug'] : [];
const stream = run({
  files: paths,
  concurrency,
  forceExit: true,
  timeout: 900000,
  ...(execArgv.length > 0 ? { execArgv } : {}),
  ...(patterns.length > 0 ? { testNamePatterns: patterns } : {}),
});
// As `node --test` does: a failure (not a todo) fails the run. The skip summary fails it on a skip under NEARDUP_REQUIRE_ALL=1.
stream.on('test:fail', (d) => {
  if (d.todo === undefined || d.todo === false) process.exitCode = 1;
});
// NEARDUP_TIER_TAIL=FILE (.ci/run): FILE is written once every file has started and at most one
// still runs, the tail where the cores would idle: .ci/run starts the Node 22/24 tiers then. A
// file's start and end are its file-level test:dequeue and test:complete (named by its path).
if (process.env.NEARDUP_TIER_TAIL) {
  const tail = process.env.NEARDUP_TIER_TAIL;
  const started = new Set();
  const ended = new Set();
  const check = (d) => {
    if (!paths.includes(d.name)) return;
    if (d.type === 'start') started.add(d.name);
    else ended.add(d.name);
    if (started.size === paths.length && started.size - ended.size <= 1 && !existsSync(tail))
      writeFileSync(tail, `${ended.size} of ${paths.length} files done\n`);
  };
  stream.on('test:dequeue', (d) => check({ ...d, type: 'start' }));
  stream.on('test:complete', (d) => check({ ...d, type: 'end' }));
}
const sinks = [new reporterKinds.spec(), (await import(pathToFileURL(path.join(root, 'dist', 'test', 'reporters', 'skips.js')).href)).default];
for (const r of reporters) sinks.push((await import(pathToFileURL(path.resolve(r)).href)).default);
for (const sink of sinks) stream.pipe(sink).pipe(process.stdout, { end: false });
