/**
 * Near duplicates of an indexed document from its stored record: NearDupIndex.duplicatesOf, the
 * HTTP endpoint GET /v1/documents/:id/duplicates, and the web page's clusters, which read the
 * documents indexed before the server started through it.
 */
import { openDatabase } from '../../src/store/sqlite/driver.js';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, dedup, type NearDupIndexOptions } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';
import { kijijiTexts } from '../helpers/kijiji.js';

const texts = kijijiTexts().slice(0, 600);
const OPTS: NearDupIndexOptions = { shingle: { k: 10, normalize: { preset: 'seed000' } }, threshold: 0.8 };
const dir = mkdtempSync(path.join(tmpdir(), 'nd-dupsof-'));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const verify of ['exact', 'estimate'] as const) {
  test(`duplicatesOf(id) answers as query(text) does, without the document itself (verify ${verify})`, async () => {
    const idx = await NearDupIndex.open({ ...OPTS, verify });
    await idx.addMany(texts.map((text, i) => ({ id: `d${i}`, text, meta: { i } })));
    let withDups = 0;
    for (let i = 0; i < texts.length; i += 3) {
      const got = await idx.duplicatesOf(`d${i}`);
      const want = (await idx.query(texts[i]!)).filter((m) => m.id !== `d${i}`);
      assert.deepEqual(got, want, `d${i}`);
      if (want.length > 0) withDups++;
    }
    assert.ok(withDups > 20, `only ${withDups} documents with near duplicates`);
    assert.equal(await idx.duplicatesOf('nope'), null);
    // limit and threshold: on a document with at least three near duplicates at 0.9, so that the
    // limit has something to cut (d0 has none, which made the old check pass on an empty answer).
    let pick = -1;
    let full: Awaited<ReturnType<typeof idx.query>> = [];
    for (let i = 0; i < texts.length && pick < 0; i++) {
      const m = (await idx.query(texts[i]!, { threshold: 0.9 })).filter((x) => x.id !== `d${i}`);
      if (m.length >= 3) [pick, full] = [i, m];
    }
    assert.ok(pick >= 0, 'no document with three near duplicates at 0.9');
    const limited = await idx.duplicatesOf(`d${pick}`, { limit: 2, threshold: 0.9 });
    assert.deepEqual(limited, full.slice(0, 2));
    assert.ok(full.every((m) => m.similarity >= 0.9));
    await assert.rejects(idx.duplicatesOf('d0', { threshold: 0 }), /threshold/);
    await idx.close();
  });
}

test('GET /v1/documents/:id/duplicates: 200 with the matches, 404 for an unknown id, 400 for a bad limit or threshold', async () => {
  const index = await NearDupIndex.open(OPTS);
  const app = buildApp(index);
  try {
    await index.addMany(texts.slice(0, 100).map((text, i) => ({ id: `a/${i}`, text })));
    const want = (await index.query(texts[0]!)).filter((m) => m.id !== 'a/0');
    assert.ok(want.length > 0);
    let r = await app.inject({ url: `/v1/documents/${encodeURIComponent('a/0')}/duplicates` });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), { id: 'a/0', duplicates: want });
    r = await app.inject({ url: `/v1/documents/${encodeURIComponent('a/0')}/duplicates?limit=1&threshold=0.95` });
    assert.equal(r.statusCode, 200, r.body);
    assert.ok(r.json().duplicates.length <= 1);
    r = await app.inject({ url: '/v1/documents/zzz/duplicates' });
    assert.equal(r.statusCode, 404);
    assert.match(r.json().message, /no document "zzz"/);
    for (const q of ['limit=0', 'threshold=2', 'limit=x', 'colour=red']) {
      r = await app.inject({ url: `/v1/documents/a%2F0/duplicates?${q}` });
      assert.equal(r.statusCode, 400, `${q}: ${r.body}`);
    }
    const spec = (await app.inject({ url: '/openapi.json' })).json();
    assert.ok(spec.paths['/v1/documents/{id}/duplicates'].get);
  } finally {
    await app.close();
    await index.close();
  }
});

test('/v1/clusters of a SQLite store filled before clusters were kept: built once, then the clusters dedup finds', async () => {
  const db = `sqlite:${path.join(dir, 'seed.db')}`;
  const first = await NearDupIndex.open({ ...OPTS, store: db });
  await first.addMany(texts.map((text, i) => ({ id: `d${i}`, text })));
  await first.close();
  // As a store written by an earlier version: no cluster labels.
  const raw = openDatabase(path.join(dir, 'seed.db'));
  raw.exec("DELETE FROM meta WHERE name = 'clusters'; DELETE FROM clusters");
  raw.close();

  const index = await NearDupIndex.open({ store: db });
  const app = buildApp(index);
  try {
    let data = (await app.inject({ url: '/v1/clusters?limit=1000&members=1000' })).json();
    assert.ok(data.building, 'the first request starts building the clusters');
    for (let i = 0; i < 400 && data.building; i++) {
      await new Promise((s) => setTimeout(s, 25));
      data = (await app.inject({ url: '/v1/clusters?limit=1000&members=1000' })).json();
    }
    assert.equal(data.building, undefined);
    // Building read every document, but the user's counters do not show it.
    assert.equal((await app.inject({ url: '/v1/stats' })).json().counters.queries, 0);
    const want = dedup(texts, { shingle: { k: 10, normalize: { preset: 'seed000' } }, threshold: 0.8 }).clusters;
    assert.ok(want.length > 20);
    const asSets = (cs: { members: (string | number)[] }[]) =>
      cs.map((c) => c.members.map((m) => (typeof m === 'number' ? `d${m}` : m)).sort().join(' ')).sort();
    assert.deepEqual(asSets(data.clusters), asSets(want));
    assert.equal(data.total, want.length);
  } finally {
    await app.close();
    await index.close();
  }
});
