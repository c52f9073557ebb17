/**
 * The one store-spec parser (src/store/spec.ts), used by openStore, RedisStore.fromUrl and the
 * index CLI: what each spec form parses to, and the errors that name a bad one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseStoreSpec, parseRedisUrl, parsePostgresUrl } from '../../src/store/spec.js';
import { openStore } from '../../src/store/open/open.js';
import { neardup, tmpDir } from '../cliUtil.js';

test('store spec: memory, sqlite:PATH and redis URLs with their options', () => {
  assert.deepEqual(parseStoreSpec('memory'), { kind: 'memory' });
  assert.deepEqual(parseStoreSpec(''), { kind: 'memory' });
  assert.deepEqual(parseStoreSpec('sqlite:./a b.db'), { kind: 'sqlite', path: './a b.db' });
  const plain = parseStoreSpec('redis://127.0.0.1:6380/2');
  assert.equal(plain.kind, 'redis');
  assert.deepEqual(plain.kind === 'redis' && plain.redis, {
    address: 'redis://127.0.0.1:6380/2',
    host: '127.0.0.1',
    port: 6380,
    password: undefined,
    prefix: 'nd',
    scripts: true,
    layout: undefined,
    writeLock: true,
    cluster: false,
    timeoutMs: 2000,
  });
  const all = parseRedisUrl('rediss://:pw@h:7000?prefix=ads&layout=sets&cluster=1&scripts=0&timeout=500&lock=0');
  assert.deepEqual(all, {
    address: 'rediss://:pw@h:7000',
    host: 'h',
    port: 7000,
    password: 'pw',
    prefix: 'ads',
    scripts: false,
    layout: 'sets',
    writeLock: false,
    cluster: true,
    timeoutMs: 500,
  });
  assert.deepEqual(parseStoreSpec('postgres://u@db:5433/ads'), {
    kind: 'postgres',
    url: 'postgres://u@db:5433/ads',
    postgres: { connectionString: 'postgres://u@db:5433/ads', schema: 'neardup', pool: 4, timeoutMs: 2000 },
  });
  // neardup's options are taken out; the driver's own (sslmode) stay in the connection string.
  assert.deepEqual(parsePostgresUrl('postgresql://u:pw@h/db?schema=ads_2&pool=8&timeout=500&sslmode=require'), {
    connectionString: 'postgresql://u:pw@h/db?sslmode=require',
    schema: 'ads_2',
    pool: 8,
    timeoutMs: 500,
  });
});

test('store spec: bad specs are RangeErrors that quote them; the CLI reports them as usage errors (exit 2)', async () => {
  assert.throws(() => parseStoreSpec('sqlite:'), { name: 'RangeError', message: 'store "sqlite:" needs a file path, e.g. sqlite:./index.db' });
  assert.throws(() => parseStoreSpec('mysql://x'), {
    name: 'RangeError',
    message:
      'unknown store "mysql://x" (expected memory, DIR or file:DIR, sqlite:PATH, redis://HOST:PORT[?prefix=NAME] or postgres://HOST/DB[?schema=NAME]; a directory whose name has a colon: file:mysql://x)',
  });
  // A path without a scheme is the file store in that directory: the store a local path gets.
  for (const p of ['ads', './ads', '/var/lib/nd/ads', 'ads.db', 'c:ads', 'a b/c'])
    assert.deepEqual(parseStoreSpec(p), { kind: 'file', path: p }, p);
  assert.deepEqual(parseStoreSpec('file:ads:2024'), { kind: 'file', path: 'ads:2024' });
  assert.throws(() => parseStoreSpec('ads:2024'), /unknown store "ads:2024" .*file:ads:2024/);
  assert.throws(() => parseStoreSpec('postgres://h/db?schema=Ads;drop'), /bad PostgreSQL URL .*schema must be a lower-case SQL identifier/);
  assert.throws(() => parseStoreSpec('postgres://h/db?pool=0'), /pool must be an integer from 1 to 100/);
  assert.throws(() => parseStoreSpec('postgres://h/db?timeout=x'), /timeout must be a positive number of milliseconds/);
  assert.throws(() => parseStoreSpec('redis://h?layout=lists'), /bad Redis URL "redis:\/\/h\?layout=lists": layout must be log or sets/);
  assert.throws(() => parseStoreSpec('redis://h?lock=2'), /lock must be 0 or 1/);
  assert.throws(() => parseStoreSpec('redis://h?timeout=-1'), /timeout must be a positive number of milliseconds/);
  assert.throws(() => parseStoreSpec('redis://a b'), { name: 'RangeError', message: 'bad Redis URL "redis://a b"' });
  await assert.rejects(() => openStore('nope:x'), /unknown store "nope:x"/);
  const r = neardup(['index', 'check', '--store', 'redis://h?layout=lists']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^neardup: bad Redis URL .*layout must be log or sets\n$/);
  const b = neardup(['index', 'backup', '--store', 'memory', '--out', 'x.db']);
  assert.equal(b.code, 2, b.stderr);
  assert.match(b.stderr, /backup copies SQLite and file stores/);
});

// Issue 16 item 9: store-spec and threshold errors from the CLI.
test('item 9: an unknown store is a usage error (exit 2); a threshold mismatch names the threshold', () => {
  const dir = tmpDir();
  const f = path.join(dir, 'a.tsv');
  fs.writeFileSync(f, 'id\ttext\na\tsome text here\n');
  for (const args of [['index', 'add', f, '--id', 'id', '--store', 'foo:bar'], ['serve', '--store', 'foo:bar', '--port', '0']]) {
    const r = neardup(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /unknown store "foo:bar"/);
  }
  const db = `sqlite:${path.join(dir, 't.db')}`;
  assert.equal(neardup(['index', 'add', f, '--id', 'id', '--store', db, '--threshold', '0.8']).code, 0);
  const r = neardup(['serve', '--store', db, '--threshold', '0.5', '--port', '0']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /created with threshold 0\.8, given 0\.5/);
  assert.doesNotMatch(r.stderr, /^neardup: the store was created with different parameters \(bands/m);
});
