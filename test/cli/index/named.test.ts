/**
 * `neardup index create|drop|list --indexes DIR` and `neardup serve --indexes DIR`, through the
 * built binary: the registry the CLI makes is the one the server serves; a registry being served
 * is refused by the CLI (exit 2 naming the holder), which the server's API then changes instead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { mainJs, neardup, tmpDir } from '../../cliUtil.js';
import { startServe } from '../../helpers/procs.js';

const noStack = (s: string) => assert.doesNotMatch(s, /\n\s+at /);

test('index create/list/drop: the registry the CLI makes is served under /v1/indexes/NAME; a served registry is refused by the CLI', async () => {
  const dir = path.join(tmpDir(), 'reg');
  const c = neardup(['index', 'create', 'ads', '--indexes', dir, '--threshold', '0.6', '-k', '4'], { env: { NEARDUP_INDEX_TOKEN: 'own' } });
  assert.equal(c.code, 0, c.stderr);
  assert.match(c.stdout, /created index "ads" \(store file, threshold 0\.6, its own token\)/);
  const list = neardup(['index', 'list', '--indexes', dir, '--json']);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(
    (JSON.parse(list.stdout) as { indexes: { name: string; threshold: number; token: boolean }[] }).indexes.map((x) => [x.name, x.threshold, x.token]),
    [['ads', 0.6, true]],
  );

  const s = await startServe(['--indexes', dir, '--token', 'server']);
  try {
    assert.match(s.stderr(), /1 named indexes in /);
    const refused = neardup(['index', 'create', 'other', '--indexes', dir]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /index registry .* is being written by another run \(\d+@/);
    noStack(refused.stderr);
    assert.equal(neardup(['index', 'drop', 'ads', '--indexes', dir]).code, 2);
    const post = (url: string, token: string, body: unknown) =>
      fetch(`${s.url}${url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await post('/v1/indexes/ads/documents', 'own', { id: 'a', text: 'a flat near the station with a garden' })).status, 200);
    assert.equal((await post('/v1/indexes', 'server', { name: 'other', store: 'memory' })).status, 201);
    const q = (await (await post('/v1/indexes/ads/query', 'own', { text: 'a flat near the station with a big garden' })).json()) as {
      matches: { id: string }[];
    };
    assert.deepEqual(q.matches.map((m) => m.id), ['a'], 'threshold 0.6 of the CLI-made index');
  } finally {
    assert.equal(await s.stop(), 0);
  }
  // The server's lock is gone; what it created is in the list.
  const after = neardup(['index', 'list', '--indexes', dir]);
  assert.deepEqual(after.stdout.trim().split('\n').map((l) => l.split('\t')[0]), ['ads', 'other']);
  const d = neardup(['index', 'drop', 'ads', '--indexes', dir]);
  assert.equal(d.code, 0, d.stderr);
  assert.ok(!fs.existsSync(path.join(dir, 'ads')));
  assert.deepEqual(fs.readdirSync(dir).sort(), ['indexes.json']);
});

test('index create/drop/list: bad names, blank tokens, taken names, unknown indexes and missing registries are usage errors (exit 2), with nothing left behind', () => {
  const dir = path.join(tmpDir(), 'reg');
  for (
    const [args, env, want] of [
      [['create', 'Ads'], {}, /index name "Ads" is not valid/],
      [['create', 'ads', '--token', ' '], {}, /token of index "ads" is empty/],
      [['create', 'ads'], { NEARDUP_INDEX_TOKEN: '' }, /token of index "ads" is empty/],
      [['create', 'ads', '--threshold', '1.5'], {}, /threshold/],
      [['drop', 'ads'], {}, /no index "ads"/],
    ] as const
  ) {
    const r = neardup(['index', ...args, '--indexes', dir], { env });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, want);
    noStack(r.stderr);
  }
  assert.deepEqual(fs.readdirSync(dir), ['indexes.json'], 'refused creates leave only the empty list');
  assert.equal(neardup(['index', 'create', 'ads', '--indexes', dir, '--store', 'sqlite']).code, 0);
  const taken = neardup(['index', 'create', 'ads', '--indexes', dir]);
  assert.equal(taken.code, 2);
  assert.match(taken.stderr, /index "ads" exists/);
  const missing = neardup(['index', 'list', '--indexes', path.join(dir, 'nope')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /no index registry at/);
  const file = path.join(dir, 'ads.db');
  for (const args of [['index', 'create', 'x', '--indexes', file], ['serve', '--port', '0', '--indexes', file]]) {
    const r = neardup(args);
    assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
    assert.match(r.stderr, /--indexes .*ads\.db is a file, not a directory of indexes/);
  }
  const missingDrop = neardup(['index', 'drop', 'x', '--indexes', path.join(dir, 'nope')]);
  assert.equal(missingDrop.code, 2);
  assert.ok(!fs.existsSync(path.join(dir, 'nope')), 'drop does not create a registry');
});

test("serve --indexes DIR that is, holds or lies inside the --store's directory is refused (exit 2), nothing made: an index named table replaced the store's checkpoint", () => {
  const root = fs.realpathSync(tmpDir());
  const reg = path.join(root, 'reg');
  assert.equal(neardup(['index', 'create', 'ads', '--indexes', reg]).code, 0);
  const store = path.join(root, 'store');
  fs.mkdirSync(store);
  const cases: [string, string][] = [
    [path.join(root, 'same'), path.join(root, 'same')],
    [path.join(root, 'same2'), `file:${path.join(root, 'same2')}/`],
    [reg, path.join(reg, 'ads')],
    [reg, `sqlite:${path.join(reg, 'main.db')}`],
    [path.join(store, 'reg'), store],
  ];
  for (const [indexes, st] of cases) {
    const before = fs.readdirSync(root).sort();
    // A server that starts never exits: the timeout makes it a failure, not a hang.
    const run = spawnSync(process.execPath, [mainJs, 'serve', '--port', '0', '--indexes', indexes, '--store', st], { encoding: 'utf8', timeout: 20_000 });
    const r = { code: run.status, stderr: run.stderr };
    assert.equal(r.code, 2, `${indexes} ${st}: ${r.stderr}`);
    assert.match(r.stderr, /--indexes .* (is|holds) --store|--store .* holds --indexes/, r.stderr);
    noStack(r.stderr);
    assert.deepEqual(fs.readdirSync(root).sort(), before, `${indexes} ${st}: nothing made`);
  }
  assert.deepEqual(fs.readdirSync(reg).sort(), ['ads', 'indexes.json']);
  assert.deepEqual(fs.readdirSync(store), []);
});

test('a new registry is not made in a directory that holds other files (a file store): an index named lock there made the store fail to open', () => {
  const root = fs.realpathSync(tmpDir());
  const input = path.join(root, 'in.tsv');
  fs.writeFileSync(input, 'id\ttext\na\tthe quick brown fox jumps over the lazy dog by the river\n');
  const store = path.join(root, 'store');
  assert.equal(neardup(['index', 'add', input, '--id', 'id', '--store', store, '-q']).code, 0);
  const files = fs.readdirSync(store).sort();
  for (const args of [['index', 'create', 'lock', '--indexes', store], ['serve', '--port', '0', '--indexes', store]]) {
    const run = spawnSync(process.execPath, [mainJs, ...args], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(run.status, 2, `${args[0]}: ${run.stderr}`);
    assert.match(run.stderr, /holds other files/);
    noStack(run.stderr);
    assert.deepEqual(fs.readdirSync(store).sort(), files, `${args[0]}: nothing made in the store`);
  }
  assert.equal(neardup(['index', 'check', '--store', store]).code, 0);
});
