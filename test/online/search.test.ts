/**
 * topK of distinct texts and metadata filters (issue #51 item 3), on the memory and SQLite stores:
 * the property of test/helpers/searchOracle.ts, and the edges it does not reach (bad filters,
 * batches, lean replies, the estimate index). Redis and PostgreSQL run the property in
 * test/store/parity.test.ts, the HTTP API in test/server/search.test.ts.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import '../helpers/fuzz.js';
import { NearDupIndex } from '../../src/index.js';
import { checkSearchProperty, librarySetup } from '../helpers/searchOracle.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-search-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
test('topK of distinct texts and filters equal brute force (memory)', () => checkSearchProperty(librarySetup(async () => 'memory'), 120));
test('topK of distinct texts and filters equal brute force (sqlite)', () =>
  checkSearchProperty(librarySetup(async () => `sqlite:${path.join(dir, `s${n++}.db`)}`), 25));

const AD = 'Bright two-room flat near Piazza Bologna, fully furnished, available from September';

test('topK: ten copies of one ad are one hit listing nine copies, and the next text still comes', async () => {
  const idx = await NearDupIndex.open({ threshold: 0.8 });
  await idx.addMany(Array.from({ length: 10 }, (_, i) => ({ id: `copy${9 - i}`, text: AD, meta: { n: i } })));
  await idx.add('other', AD.replace('September', 'October'));
  const top = await idx.topK(AD, 2);
  assert.deepEqual(top.map((m) => m.id), ['copy0', 'other']);
  assert.deepEqual(top[0]!.copies.map((c) => c.id), ['copy1', 'copy2', 'copy3', 'copy4', 'copy5', 'copy6', 'copy7', 'copy8', 'copy9']);
  assert.deepEqual(top[0]!.copies[0], { id: 'copy1', similarity: 1, estimate: top[0]!.estimate, meta: { n: 8 } });
  assert.deepEqual(top[1]!.copies, []);
  // Lean replies keep the copies, each with the fields asked for.
  const lean = await idx.select(top, ['id']);
  assert.deepEqual(lean[0], { id: 'copy0', copies: top[0]!.copies.map((c) => ({ id: c.id })) });
  // A threshold query still lists every document.
  assert.equal((await idx.query(AD)).length, 11);
  await idx.close();
});

test('topK with verify estimate: copies are documents with the same signature', async () => {
  const idx = await NearDupIndex.open({ verify: 'estimate' });
  await idx.addMany([
    { id: 'b', text: AD },
    { id: 'a', text: AD },
    { id: 'c', text: AD + ' with a balcony' },
  ]);
  const top = await idx.topK(AD, 5);
  assert.deepEqual(top.map((m) => [m.id, m.copies.map((c) => c.id)]), [['a', ['b']], ['c', []]]);
  await idx.close();
});

test('filters: bad filters are RangeErrors naming the field; lists, null and types compare strictly', async () => {
  const idx = await NearDupIndex.open({ threshold: 0.8 });
  await idx.addMany([
    { id: 'a', text: AD, meta: { site: 'a', lang: 'en', n: 1 } },
    { id: 'b', text: AD, meta: { site: 'b', lang: 'fr', n: '1' } },
    { id: 'c', text: AD, meta: { site: null } },
    { id: 'd', text: AD },
    { id: 'e', text: AD, meta: 'a string' },
  ]);
  const ids = async (filter: object) => (await idx.query(AD, { filter: filter as never })).map((m) => m.id);
  assert.deepEqual(await ids({}), ['a', 'b', 'c', 'd', 'e']);
  assert.deepEqual(await ids({ site: 'a' }), ['a']);
  assert.deepEqual(await ids({ lang: ['en', 'fr'] }), ['a', 'b']);
  assert.deepEqual(await ids({ n: 1 }), ['a']);
  assert.deepEqual(await ids({ site: null }), ['c']);
  assert.deepEqual(await ids({ site: ['a', 'b'], lang: 'fr' }), ['b']);
  for (
    const [filter, message] of [
      [{ site: { a: 1 } }, /filter\.site: values must be strings, finite numbers, booleans or null/],
      [{ site: [['a']] }, /filter\.site: values must be/],
      [{ site: [] }, /filter\.site: an empty list matches nothing/],
      [{ n: Number.NaN }, /filter\.n: values must be/],
      [['site'], /filter must be an object/],
      ['site=a', /filter must be an object/],
    ] as const
  ) {
    await assert.rejects(() => idx.query(AD, { filter: filter as never }), message);
    await assert.rejects(() => idx.topK(AD, 3, { filter: filter as never }), message);
    await assert.rejects(() => idx.duplicatesOf('a', { filter: filter as never }), message);
    await assert.rejects(() => idx.add('z', AD, undefined, { filter: filter as never }), message);
  }
  assert.equal(await idx.get('z'), null, 'a bad filter indexes nothing');
  await idx.close();
});

test('filters: addMany filters the duplicates among the indexed documents and the earlier ones of the batch', async () => {
  const idx = await NearDupIndex.open({ threshold: 0.8 });
  await idx.add('old-a', AD, { site: 'a' });
  await idx.add('old-b', AD, { site: 'b' });
  const got = await idx.addMany(
    [
      { id: 'new-a', text: AD, meta: { site: 'a' } },
      { id: 'new-b', text: AD, meta: { site: 'b' } },
      { id: 'new-x', text: AD },
    ],
    { filter: { site: 'a' } },
  );
  assert.deepEqual(got.map((ms) => ms.map((m) => m.id)), [['old-a'], ['new-a', 'old-a'], ['new-a', 'old-a']]);
  assert.equal(await idx.size(), 5, 'every document is indexed, filter or not');
  await idx.close();
});
