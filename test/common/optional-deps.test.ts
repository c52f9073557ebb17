/**
 * better-sqlite3, ioredis and pg are optional peer dependencies: the library and the CLI work without
 * them until a store needs one, and then fail with an error that names the package to install.
 * "Not installed" is simulated with a resolve hook (helpers/hidePackages.ts) in a child process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { neardup, repoRoot, tmpDir } from '../cliUtil.js';

const hook = path.resolve(repoRoot, 'dist/test/helpers/hidePackages.js');
// The better-sqlite3 driver is forced so that its absence is tested on every Node: on Node ≥ 22.13
// the SQLite store would otherwise take node:sqlite and need no package (tested below).
const hide = { NEARDUP_HIDE_PACKAGES: 'better-sqlite3,ioredis,pg', NEARDUP_SQLITE_DRIVER: 'better-sqlite3' };

/** Runs an ES module snippet in a child Node with both optional packages hidden. */
function runHidden(code: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, '--input-type=module', '-e', code], {
    env: { ...process.env, ...hide },
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const index = pathToFileURL(path.resolve(repoRoot, 'dist/src/index.js')).href;

test('package.json: better-sqlite3, ioredis, pg, bullmq, @aws-sdk/client-s3 and @aws-sdk/lib-storage are optional peers, not dependencies', () => {
  const pkg = JSON.parse(readFileSync(path.resolve(repoRoot, 'package.json'), 'utf8'));
  for (const name of ['better-sqlite3', 'ioredis', 'pg', 'bullmq', '@aws-sdk/client-s3', '@aws-sdk/lib-storage']) {
    assert.equal(pkg.dependencies[name], undefined, `${name} must not be a dependency`);
    assert.equal(pkg.optionalDependencies?.[name], undefined, `${name} must not be an optional dependency (npm installs those)`);
    assert.ok(pkg.peerDependencies[name], `${name} is a peer dependency`);
    assert.equal(pkg.peerDependenciesMeta[name]?.optional, true, `${name} is optional`);
  }
});

test('the hook really hides the packages (else the tests below prove nothing)', () => {
  const r = runHidden(`await import('better-sqlite3').then(() => console.log('loaded'), (e) => console.log(e.code))`);
  assert.equal(r.stdout.trim(), 'ERR_MODULE_NOT_FOUND', r.stderr);
});

test('library without them: dedup and the memory index work; sqlite:, redis:// and postgres:// name the package to install', () => {
  const r = runHidden(`
    const nd = await import(${JSON.stringify(index)});
    const res = nd.dedup(['the cat sat on the mat today', 'the cat sat on the mat today!', 'something else entirely'], { threshold: 0.5 });
    const idx = await nd.NearDupIndex.open({ store: 'memory' });
    await idx.add('a', 'the cat sat on the mat today');
    const m = await idx.query('the cat sat on the mat today!');
    await idx.close();
    const out = [res.pairs.length, m.length];
    for (const spec of ['sqlite:${tmpDir()}/x.db', 'redis://127.0.0.1:1', 'postgres://127.0.0.1:1/db']) {
      try { await nd.openStore(spec); out.push('opened'); }
      catch (e) { out.push(e instanceof nd.MissingDependencyError, e.packageName, e.message); }
    }
    console.log(JSON.stringify(out));`);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.slice(0, 2), [1, 1]);
  assert.deepEqual(out.slice(2), [
    true,
    'better-sqlite3',
    'the SQLite store (sqlite:PATH) needs the package better-sqlite3, which is not installed: npm install better-sqlite3',
    true,
    'ioredis',
    'the Redis store (redis://HOST:PORT) needs the package ioredis, which is not installed: npm install ioredis',
    true,
    'pg',
    'the PostgreSQL store (postgres://HOST/DB) needs the package pg, which is not installed: npm install pg',
  ]);
});

test('CLI without them: dedup works; index add --store sqlite: exits 1 naming npm install better-sqlite3, no stack trace, no file', () => {
  const dir = tmpDir();
  const db = path.join(dir, 'x.db');
  const env = { ...hide, NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` };
  const ok = neardup(['dedup', 'docs.tsv', '--text', 'body'], { env });
  assert.equal(ok.code, 0, ok.stderr);
  const r = neardup(['index', 'add', 'docs.tsv', '--text', 'body', '--id', 'id', '--store', `sqlite:${db}`], { env });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /needs the package better-sqlite3, which is not installed: npm install better-sqlite3/);
  assert.doesNotMatch(r.stderr, /^\s+at /m);
  assert.equal(existsSync(db), false);
  const s = neardup(['serve', '--port', '0', '--store', 'redis://127.0.0.1:1'], { env });
  assert.equal(s.code, 1, s.stderr);
  assert.match(s.stderr, /npm install ioredis/);
  const p = neardup(['serve', '--port', '0', '--store', 'postgres://127.0.0.1:1/db'], { env });
  assert.equal(p.code, 1, p.stderr);
  assert.match(p.stderr, /^neardup: the PostgreSQL store \(postgres:\/\/HOST\/DB\) needs the package pg, which is not installed: npm install pg\n$/);
});

test('formats and bullmq use the same error: a missing hyparquet or bullmq is a MissingDependencyError; the CLI exits 1 naming npm install', () => {
  const dir = tmpDir();
  const pq = path.join(dir, 'docs.parquet');
  writeFileSync(pq, 'PAR1 not really parquet PAR1');
  const env = { NEARDUP_HIDE_PACKAGES: 'hyparquet,bullmq', NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` };
  const p = neardup(['dedup', pq, '--text', 'text'], { env });
  assert.equal(p.code, 1, p.stderr);
  assert.match(p.stderr, /^neardup: reading Parquet needs the package hyparquet, which is not installed: npm install hyparquet\n$/);
  const bullmq = pathToFileURL(path.resolve(repoRoot, 'dist/src/distributed/bullmq.js')).href;
  const r = spawnSync(process.execPath, [
    '--input-type=module',
    '-e',
    `
    const nd = await import(${JSON.stringify(index)});
    const { loadBullmq } = await import(${JSON.stringify(bullmq)});
    try { await loadBullmq(); console.log('loaded'); } catch (e) { console.log(JSON.stringify([e instanceof nd.MissingDependencyError, e.packageName, e.message])); }`,
  ], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  assert.deepEqual(JSON.parse(r.stdout), [true, 'bullmq', 'running distributed jobs needs the package bullmq, which is not installed: npm install bullmq']);
});

test('an s3:// name without @aws-sdk/client-s3 installed: exit 1 naming the package to install', () => {
  const env = { NEARDUP_HIDE_PACKAGES: '@aws-sdk/client-s3', NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` };
  const r = neardup(['dedup', 's3://bucket/docs.jsonl', '--s3-endpoint', 'http://127.0.0.1:1'], { env });
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /^neardup: reading and writing s3:\/\/ names needs the package @aws-sdk\/client-s3, which is not installed: npm install @aws-sdk\/client-s3\n$/,
  );
});

test('an s3:// object over 8 MiB written without @aws-sdk/lib-storage installed: the error names the package to install', () => {
  const big = path.join(tmpDir(), 'big.bin');
  writeFileSync(big, Buffer.alloc((8 << 20) + 1));
  const client = pathToFileURL(path.resolve(repoRoot, 'dist/src/io/s3/client.js')).href;
  const r = spawnSync(process.execPath, [
    '--input-type=module',
    '-e',
    `
    const nd = await import(${JSON.stringify(index)});
    const { s3Upload } = await import(${JSON.stringify(client)});
    try { await s3Upload(${JSON.stringify(big)}, ${
      (8 << 20) + 1
    }, 's3://bucket/big.bin'); console.log('uploaded'); } catch (e) { console.log(JSON.stringify([e instanceof nd.MissingDependencyError, e.packageName, e.message])); }`,
  ], {
    env: { ...process.env, NEARDUP_HIDE_PACKAGES: '@aws-sdk/lib-storage', NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` },
    encoding: 'utf8',
  });
  assert.deepEqual(JSON.parse(r.stdout), [
    true,
    '@aws-sdk/lib-storage',
    'writing s3:// objects over 8 MB needs the package @aws-sdk/lib-storage, which is not installed: npm install @aws-sdk/lib-storage',
  ]);
});

test('the SQLite store needs no package on Node ≥ 22.13 (node:sqlite), and better-sqlite3 below', () => {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const builtIn = major > 22 || (major === 22 && minor >= 13);
  const db = path.join(tmpDir(), 'x.db');
  const r = spawnSync(process.execPath, [
    '--import',
    pathToFileURL(hook).href,
    '--input-type=module',
    '-e',
    `
    const nd = await import(${JSON.stringify(index)});
    const { sqliteDriver } = await import(${
      JSON.stringify(pathToFileURL(path.resolve(repoRoot, 'dist/src/store/sqlite/driver.js')).href)
    }).catch((e) => ({ sqliteDriver: e.code }));
    try {
      const idx = await nd.NearDupIndex.open({ store: 'sqlite:${db}', threshold: 0.5 });
      await idx.add('a', 'the cat sat on the mat today');
      const m = await idx.query('the cat sat on the mat today!');
      await idx.close();
      console.log(JSON.stringify([sqliteDriver, m.length]));
    } catch (e) { console.log(JSON.stringify([sqliteDriver, e.name])); }`,
  ], {
    env: { ...process.env, NEARDUP_HIDE_PACKAGES: 'better-sqlite3', NEARDUP_SQLITE_DRIVER: '' },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), builtIn ? ['node:sqlite', 1] : ['ERR_MODULE_NOT_FOUND', 'MissingDependencyError']);
  // No ExperimentalWarning (Node 22 prints one when node:sqlite loads; the driver drops it).
  assert.doesNotMatch(r.stderr, /ExperimentalWarning/);
});
