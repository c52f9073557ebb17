/**
 * Issue #31, item 5: a store that is not there. `index query/check/backup/snapshot` of a SQLite
 * store that does not exist are a usage error (exit 2) naming it, and create nothing; `index restore`
 * of a missing or damaged snapshot is exit 2 and creates no store file (the snapshot is read and
 * checked first); a `sqlite:` file that is not a database is named as such, by every command.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { neardup, tmpDir } from '../cliUtil.js';
import { needsRedis } from '../helpers/needs.js';
import { startRedis } from '../helpers/redis.js';

function docs(dir: string): string {
  const file = path.join(dir, 'docs.jsonl');
  fs.writeFileSync(
    file,
    '{"id":"a","text":"a flat in rome near the metro with two rooms"}\n{"id":"b","text":"a flat in rome near the metro with two rooms!"}\n',
  );
  return file;
}

test('commands that read a store: a missing SQLite file is exit 2 naming it, and nothing is created', () => {
  const dir = tmpDir();
  const file = docs(dir);
  const db = path.join(dir, 'typo.db');
  const store = `sqlite:${db}`;
  const runs = [
    ['index', 'query', file, '--id-field', 'id', '--store', store],
    ['index', 'check', '--store', store],
    ['index', 'backup', '--store', store, '--out', path.join(dir, 'copy.db')],
    ['index', 'snapshot', '--store', store, '--out', path.join(dir, 's.ndix')],
  ];
  for (const args of runs) {
    const r = neardup(args);
    assert.equal(r.code, 2, `${args[1]}: ${r.stderr}`);
    assert.ok(r.stderr.includes(`no SQLite index at ${db}`), r.stderr);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['docs.jsonl'], `${args[1]} created nothing`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('index restore: a missing or damaged snapshot is exit 2 and creates no store; a good one restores', () => {
  const dir = tmpDir();
  const file = docs(dir);
  const db = path.join(dir, 'new.db');
  const store = `sqlite:${db}`;
  const good = path.join(dir, 'good.ndix');
  const src = `sqlite:${path.join(dir, 'src.db')}`;
  assert.equal(neardup(['index', 'add', file, '--id-field', 'id', '--store', src, '-q']).code, 0);
  assert.equal(neardup(['index', 'snapshot', '--store', src, '--out', good]).code, 0);
  const bytes = fs.readFileSync(good);
  const damaged: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['text', Buffer.from('not a snapshot at all\n')],
    ['cut', bytes.subarray(0, bytes.length - 3)],
    ['flipped', Buffer.from(bytes.map((b, i) => (i === bytes.length >> 1 ? b ^ 4 : b)))],
  ];
  const missing = neardup(['index', 'restore', path.join(dir, 'nosuch.ndix'), '--store', store]);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /nosuch\.ndix: no such snapshot file/);
  assert.equal(fs.existsSync(db), false);
  for (const [name, b] of damaged) {
    const snap = path.join(dir, `${name}.ndix`);
    fs.writeFileSync(snap, b);
    const r = neardup(['index', 'restore', snap, '--store', store]);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.ok(r.stderr.includes(`${name}.ndix`), r.stderr);
    assert.equal(fs.existsSync(db), false, `${name}: no store file`);
  }
  const ok = neardup(['index', 'restore', good, '--store', store]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /2 documents restored/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('--store sqlite:FILE that is not a database: every command names the file and says so (add and query: that it is their input)', () => {
  const dir = tmpDir();
  const file = docs(dir);
  const store = `sqlite:${file}`;
  const before = fs.readFileSync(file);
  for (
    const args of [
      ['index', 'add', file, '--id-field', 'id', '--store', store],
      ['index', 'query', file, '--id-field', 'id', '--store', store],
      ['index', 'check', '--store', store],
      ['index', 'snapshot', '--store', store, '--out', path.join(dir, 's.ndix')],
    ]
  ) {
    const r = neardup(args);
    assert.equal(r.code, 2, `${args[1]}: ${r.stderr}`);
    // add and query read that file as their input too: the store would be written over it.
    const says = args[1] === 'add' || args[1] === 'query' ? `--store ${file} is the same file as the input` : `${file} is not a SQLite database`;
    assert.ok(r.stderr.includes(says), r.stderr);
  }
  assert.deepEqual(fs.readFileSync(file), before);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('redis: query, check and snapshot of a prefix that holds no index are exit 2 naming it, and write no key', needsRedis(), async () => {
  const redis = await startRedis();
  const dir = tmpDir();
  try {
    const file = docs(dir);
    const typo = `${redis.url}?prefix=typo`;
    for (
      const args of [
        ['index', 'query', file, '--id-field', 'id', '--store', typo],
        ['index', 'check', '--store', typo],
        ['index', 'snapshot', '--store', typo, '--out', path.join(dir, 's.ndix')],
      ]
    ) {
      const r = neardup(args);
      assert.equal(r.code, 2, `${args[1]}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`no index at ${typo}`), r.stderr);
    }
    const { Redis } = await import('ioredis');
    const client = new Redis(redis.url);
    assert.deepEqual(await client.keys('*'), []);
    // An index there is found: add, then query.
    const good = `${redis.url}?prefix=good`;
    assert.equal(neardup(['index', 'add', file, '--id-field', 'id', '--store', good, '-q']).code, 0);
    const q = neardup(['index', 'query', file, '--id-field', 'id', '--store', good]);
    assert.equal(q.code, 0, q.stderr);
    assert.ok((await client.keys('typo*')).length === 0);
    client.disconnect();
  } finally {
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
