/**
 * topK of distinct texts and metadata filters through the HTTP API: the property of
 * test/helpers/searchOracle.ts (the same answers as the library and brute force), and the API's
 * own edges (a bad filter is a 400 naming it, the duplicates route's filter in its query string).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import '../helpers/fuzz.js';
import { NearDupIndex } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';
import type { MetaFilter } from '../../src/online/nearDupIndex.js';
import { checkSearchProperty, openPair, type Hit, type Searcher, type Setup } from '../helpers/searchOracle.js';

type App = ReturnType<typeof buildApp>;
const cleanup: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const f of cleanup) await f();
});

const hitOf = (m: { id: string; similarity: number; copies?: { id: string }[] }): Hit => ({
  id: m.id,
  similarity: m.similarity,
  ...(m.copies ? { copies: m.copies.map((c) => c.id) } : {}),
});

async function post(a: App, url: string, payload: object): Promise<any> {
  const r = await a.inject({ method: 'POST', url, payload });
  assert.equal(r.statusCode, 200, r.body);
  return r.json();
}

/** The HTTP API as a Searcher: the topK index behind one app, the threshold index behind another. */
function httpSearcher(top: App, thr: App): Searcher {
  const f = (filter?: MetaFilter) => (filter ? { filter } : {});
  return {
    topK: async (text, k, filter) => (await post(top, '/v1/query', { text, topK: k, ...f(filter) })).matches.map(hitOf),
    query: async (text, filter) => (await post(thr, '/v1/query', { text, ...f(filter) })).matches.map(hitOf),
    duplicatesOf: async (id, filter) => {
      const q = filter ? `?filter=${encodeURIComponent(JSON.stringify(filter))}` : '';
      const r = await thr.inject({ method: 'GET', url: `/v1/documents/${encodeURIComponent(id)}/duplicates${q}` });
      if (r.statusCode === 404) return null;
      assert.equal(r.statusCode, 200, r.body);
      return r.json().duplicates.map(hitOf);
    },
    add: async (d, filter) => (await post(thr, '/v1/documents', { id: d.id, text: d.text, meta: d.meta, limit: 10000, ...f(filter) })).duplicates.map(hitOf),
  };
}

const httpSetup: Setup = async (docs) => {
  const [a, b] = await openPair(async () => 'memory');
  await a.addMany(docs);
  await b.addMany(docs);
  const top = buildApp(a);
  const thr = buildApp(b);
  return { searcher: httpSearcher(top, thr), close: async () => void (await Promise.all([top.close(), thr.close()])) };
};

test('http: topK of distinct texts and filters equal brute force and the library', () => checkSearchProperty(httpSetup, 40));

test('http: bad filters are 400s naming the field; the duplicates filter is JSON in the query string', async () => {
  const idx = await NearDupIndex.open({ threshold: 0.8 });
  const a = buildApp(idx);
  cleanup.push(() => a.close());
  const text = 'a flat to rent near the station, two rooms, a kitchen and a balcony, from September';
  await post(a, '/v1/documents:batch', { documents: [{ id: 'x', text, meta: { site: 'a' } }, { id: 'y', text, meta: { site: 'b' } }] });
  const bad = async (url: string, payload?: object) => {
    const r = await a.inject({ method: payload ? 'POST' : 'GET', url, ...(payload ? { payload } : {}) });
    assert.equal(r.statusCode, 400, r.body);
    return r.json().message as string;
  };
  assert.match(await bad('/v1/query', { text, filter: { site: { a: 1 } } }), /filter\.site: values must be strings, finite numbers, booleans or null/);
  assert.match(await bad('/v1/query', { text, topK: 3, filter: { site: [] } }), /filter\.site: an empty list matches nothing/);
  assert.match(await bad('/v1/query', { text, filter: 'site=a' }), /\/filter must be object/);
  assert.match(await bad('/v1/documents', { id: 'z', text, filter: { site: [{}] } }), /filter\.site: values must be/);
  assert.match(await bad('/v1/documents/x/duplicates?filter=site%3Da'), /querystring\/filter must be a JSON object/);
  assert.match(await bad(`/v1/documents/x/duplicates?filter=${encodeURIComponent('{"site":[[1]]}')}`), /filter\.site: values must be/);
  assert.equal((await a.inject({ method: 'GET', url: '/v1/documents/z' })).statusCode, 404, 'an add with a bad filter indexes nothing');
  const dups = await a.inject({ method: 'GET', url: `/v1/documents/x/duplicates?fields=id&filter=${encodeURIComponent('{"site":"b"}')}` });
  assert.deepEqual(dups.json(), { id: 'x', duplicates: [{ id: 'y' }] });
  const top = await post(a, '/v1/query', { text, topK: 5, fields: ['id', 'meta'] });
  assert.deepEqual(top.matches, [{ id: 'x', meta: { site: 'a' }, copies: [{ id: 'y', meta: { site: 'b' } }] }]);
});
