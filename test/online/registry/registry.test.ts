/**
 * The registry of named indexes (src/online/registry/registry.ts), in process: names, tokens and
 * parameters checked before anything is written; the list survives a reopen; a broken list is an
 * error naming the file; a drop waits for the uses in progress, then deletes the index's files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { IndexExistsError, IndexRegistry, INDEX_NAME, REGISTRY_FILE, checkIndexName } from '../../../src/online/registry/registry.js';
import { NearDupIndex } from '../../../src/index.js';
import { tmpDir } from '../../cliUtil.js';

const A = 'a flat near the station with a garden and two bedrooms';
const B = 'a flat near the station with a garden and three bedrooms';

test('registry: names follow one rule (lower case, 1–64 characters) for every string', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 70 }), fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,66}$/)), (s) => {
      const ok = /^[a-z0-9][a-z0-9_-]*$/.test(s) && s.length <= 64;
      assert.equal(INDEX_NAME.test(s), ok);
      if (ok) checkIndexName(s);
      else assert.throws(() => checkIndexName(s), RangeError);
    }),
    { seed: 51, numRuns: 2000 },
  );
});

test('registry: create, use, reopen, drop; answers equal an index opened alone with the same options', async () => {
  const dir = tmpDir();
  const reg = await IndexRegistry.open(dir);
  const info = await reg.create('ads', { store: 'sqlite', options: { threshold: 0.5, k: 4 }, token: 'tok' });
  assert.deepEqual({ ...info, created: '' }, { name: 'ads', store: 'sqlite', threshold: 0.5, token: true, created: '' });
  await reg.create('mem', { store: 'memory' });
  await reg.create('logs', { store: 'file' });
  await assert.rejects(reg.create('ads'), IndexExistsError);
  const lh = (await reg.acquire('logs'))!;
  await lh.index.add('a', A);
  lh.release();
  const h = (await reg.acquire('ads'))!;
  await h.index.add('a', A);
  const viaRegistry = await h.index.query(B);
  h.release();
  const alone = await NearDupIndex.open({ threshold: 0.5, k: 4 });
  await alone.add('a', A);
  assert.deepEqual(viaRegistry, await alone.query(B));
  assert.ok(viaRegistry.length === 1, 'found at 0.5');
  await alone.close();
  assert.equal(reg.tokenMatches('ads', 'tok'), true);
  assert.equal(reg.tokenMatches('ads', 'to'), false);
  assert.equal(reg.tokenMatches('ads', ''), false);
  assert.equal(reg.tokenMatches('mem', 'tok'), false);
  assert.equal(reg.tokenMatches('none', 'tok'), undefined);
  await reg.close();
  // The list keeps the token's digest, never the token.
  const text = fs.readFileSync(path.join(dir, REGISTRY_FILE), 'utf8');
  assert.ok(!text.includes('"tok"'));

  const again = await IndexRegistry.open(dir, { create: false });
  assert.deepEqual(again.list().map((x) => [x.name, x.store, x.threshold, x.token]), [['ads', 'sqlite', 0.5, true], ['logs', 'file', 0.8, false], [
    'mem',
    'memory',
    0.8,
    false,
  ]]);
  const lh2 = (await again.acquire('logs'))!;
  assert.equal(await lh2.index.size(), 1, 'the file store kept its document');
  lh2.release();
  assert.equal(await again.drop('logs'), true);
  assert.ok(!fs.existsSync(path.join(dir, 'logs')), 'its directory is deleted');
  const h2 = (await again.acquire('ads'))!;
  assert.equal(await h2.index.size(), 1, 'file store kept its document');
  h2.release();
  assert.equal(await (await again.acquire('mem'))!.index.size(), 0, 'a memory index starts empty after a restart');
  assert.equal(await again.drop('ads'), true);
  assert.equal(await again.drop('ads'), false);
  assert.ok(!fs.existsSync(path.join(dir, 'ads.db')), 'its file is deleted');
  assert.equal(await again.acquire('ads'), undefined);
  await again.close();
});

test('registry: bad names, blank tokens and bad parameters leave nothing behind', async () => {
  const dir = tmpDir();
  const reg = await IndexRegistry.open(dir);
  for (const name of ['', 'Ads', '-x', 'a/b', '..', 'a'.repeat(65), 'ä']) await assert.rejects(reg.create(name), RangeError, name);
  for (const token of ['', ' ', '\t\n']) await assert.rejects(reg.create('t', { token }), /token of index "t" is empty/);
  await assert.rejects(reg.create('bad', { options: { threshold: 1.5 } }), RangeError);
  await assert.rejects(reg.create('bad2', { options: { k: 0 } }), RangeError);
  assert.deepEqual(reg.list(), []);
  assert.deepEqual(fs.readdirSync(dir).sort(), [REGISTRY_FILE]);
  // A file of an index the list does not hold is not adopted.
  fs.writeFileSync(path.join(dir, 'stray.db'), 'x');
  await assert.rejects(reg.create('stray', { store: 'sqlite' }), /stray\.db exists but is not in indexes\.json/);
  assert.equal(fs.readFileSync(path.join(dir, 'stray.db'), 'utf8'), 'x');
  // The default store is a file store, DIR/NAME: a stray directory of that name is not adopted either.
  fs.mkdirSync(path.join(dir, 'stray2'));
  await assert.rejects(reg.create('stray2'), /stray2 exists but is not in indexes\.json/);
  await reg.close();
});

test('registry: a list that is torn, of another format or version is refused naming the file; a missing one only when asked', async () => {
  const dir = tmpDir();
  await assert.rejects(IndexRegistry.open(dir, { create: false }), /no index registry at/);
  const file = path.join(dir, REGISTRY_FILE);
  for (
    const [body, want] of [
      ['{"format":"neardup-indexes","version":1,"indexes":{', /not an index registry \(not JSON\)/],
      ['{"format":"other","version":1,"indexes":{}}', /not an index registry \(format "other"\)/],
      ['{"format":"neardup-indexes","version":2,"indexes":{}}', /registry version 2; this neardup reads version 1/],
      ['{"format":"neardup-indexes","version":1,"indexes":{"Bad":{}}}', /index name "Bad" is not valid/],
    ] as const
  ) {
    fs.writeFileSync(file, body);
    await assert.rejects(
      IndexRegistry.open(dir),
      (e: unknown) => e instanceof RangeError && want.test(e.message) && (e.message.includes(file) || /index name/.test(e.message)),
      body,
    );
  }
});

test('registry: a drop waits for the uses in progress (up to drainMs), and new uses no longer find the index', async () => {
  const dir = tmpDir();
  const reg = await IndexRegistry.open(dir, { drainMs: 30_000 });
  await reg.create('ads', { store: 'sqlite' });
  const h = (await reg.acquire('ads'))!;
  let dropped = false;
  const drop = reg.drop('ads').then(() => (dropped = true));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await reg.acquire('ads'), undefined, 'gone for new uses at once');
  assert.equal(dropped, false, 'waits for the use in progress');
  await h.index.add('a', A);
  h.release();
  h.release();
  await drop;
  assert.equal(dropped, true);
  assert.ok(!fs.existsSync(path.join(dir, 'ads.db')));
  // drainMs bounds the wait for a use never released.
  const quick = await IndexRegistry.open(tmpDir(), { drainMs: 20 });
  await quick.create('x');
  await quick.acquire('x');
  assert.equal(await quick.drop('x'), true);
  await reg.close();
  await quick.close();
});

test("registry: names that are not indexes of the list find nothing, Object.prototype's included; a file store deleted behind its back is an error, not a new empty index", async () => {
  const dir = tmpDir();
  const reg = await IndexRegistry.open(dir);
  await reg.create('ads');
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '', 'ADS']) {
    assert.equal(await reg.acquire(name), undefined, name);
    assert.equal(reg.tokenMatches(name, 'x'), undefined, name);
    assert.equal(reg.hasToken(name), false, name);
    assert.equal(reg.info(name), undefined, name);
    assert.equal(await reg.drop(name), false, name);
  }
  await reg.close();
  // The default store: a file store, the directory DIR/ads.
  fs.rmSync(path.join(dir, 'ads'), { recursive: true });
  const again = await IndexRegistry.open(dir);
  assert.equal(again.info('ads')?.store, 'file');
  await assert.rejects(again.acquire('ads'), /index "ads": its store .*ads is missing/);
  assert.ok(!fs.existsSync(path.join(dir, 'ads')), 'no empty store made in its place');
  assert.equal(await again.drop('ads'), true, 'it can still be dropped');
  await again.close();
});

test('registry: an index that verifies exactly is created with setSource "text" (the service keeps the texts), and answers as one that keeps its sets', async () => {
  const dir = tmpDir();
  const reg = await IndexRegistry.open(dir);
  await reg.create('exact', { store: 'file', options: { threshold: 0.5, k: 4 } });
  await reg.create('est', { options: { threshold: 0.5, k: 4, verify: 'estimate' } });
  await reg.create('kept', { options: { threshold: 0.5, k: 4, setSource: 'record' } });
  const alone = await NearDupIndex.open({ threshold: 0.5, k: 4 });
  await alone.add('a', A, { text: A });
  await alone.add('o', 'something else entirely, about bicycles', 'no text kept');
  for (const [name, source] of [['exact', 'text'], ['est', undefined], ['kept', 'record']] as const) {
    const h = (await reg.acquire(name))!;
    assert.equal(h.index.manifest.setSource, source === 'record' ? undefined : source, name);
    await h.index.add('a', A, { text: A });
    await h.index.add('o', 'something else entirely, about bicycles', 'no text kept');
    if (name !== 'est') {
      assert.deepEqual(await h.index.query(B), await alone.query(B), name);
      assert.deepEqual(await h.index.get('a'), await alone.get('a'), name);
    }
    h.release();
  }
  await reg.close();
  // Reopened from the list: the file store keeps its manifest's choice.
  const again = await IndexRegistry.open(dir, { create: false });
  const h = (await again.acquire('exact'))!;
  assert.equal(h.index.manifest.setSource, 'text');
  assert.deepEqual(await h.index.query(B), await alone.query(B));
  h.release();
  await again.close();
  await alone.close();
});
