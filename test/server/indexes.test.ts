/**
 * Named indexes over HTTP (src/server/indexRoutes.ts): created, used, listed and dropped through
 * the API; each with its own threshold, store and token; the server's own index untouched; every
 * named route answers as the same route of an app whose own index has the same options; a restart
 * keeps them; concurrent creates of one name give one index.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { NearDupIndex } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';
import { IndexRegistry } from '../../src/online/registry/registry.js';
import { tmpDir } from '../cliUtil.js';

const SERVER = 'server-token';
const OWN = 'ads-token';
const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

const TEXTS = {
  a: 'a flat near the station with a garden and two bedrooms, sunny and quiet',
  b: 'a flat near the station with a garden and three bedrooms, sunny and quiet',
  c: 'a bicycle for sale, red, barely used, with a basket and new tyres',
};

async function server(dir: string, token: string | null = SERVER) {
  const index = await NearDupIndex.open({ k: 5 });
  const registry = await IndexRegistry.open(dir);
  const app = buildApp(index, { ...(token ? { token } : {}), registry });
  await app.ready();
  cleanup.push(async () => {
    await app.close();
    await registry.close();
    await index.close();
  });
  return { app, index, registry };
}

type App = Awaited<ReturnType<typeof server>>['app'];
const call = (app: App, method: string, url: string, token: string | undefined, payload?: unknown) =>
  app.inject({
    method: method as 'GET',
    url,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}),
  });

test('named indexes: created, used, listed and dropped over HTTP; tokens open only what they should', async () => {
  const dir = tmpDir();
  const { app } = await server(dir);
  assert.equal((await call(app, 'POST', '/v1/indexes', SERVER, { name: 'ads', threshold: 0.5, token: OWN })).statusCode, 201);
  assert.equal((await call(app, 'POST', '/v1/indexes', SERVER, { name: 'tickets', store: 'memory' })).statusCode, 201);
  assert.equal((await call(app, 'POST', '/v1/indexes', SERVER, { name: 'ads' })).statusCode, 409);
  for (
    const bad of [{ name: 'Ads' }, { name: 'x', token: '  ' }, { name: 'x', threshold: 2 }, { name: 'x', k: 0 }, { name: 'x', extra: 1 }, {
      name: 'x',
      numPerm: 7,
      bands: 5,
      rows: 2,
    }]
  ) {
    const r = await call(app, 'POST', '/v1/indexes', SERVER, bad);
    assert.equal(r.statusCode, 400, `${JSON.stringify(bad)}: ${r.body}`);
  }
  assert.ok(!fs.existsSync(path.join(dir, 'x.db')), 'a refused create leaves no file');
  // Creating and listing need the server's token; the index's own does not open the registry.
  assert.equal((await call(app, 'POST', '/v1/indexes', OWN, { name: 'y' })).statusCode, 401);
  assert.equal((await call(app, 'GET', '/v1/indexes', OWN)).statusCode, 401);
  const list = JSON.parse((await call(app, 'GET', '/v1/indexes', SERVER)).body) as { indexes: { name: string; threshold: number; token: boolean }[] };
  assert.deepEqual(list.indexes.map((x) => [x.name, x.threshold, x.token]), [['ads', 0.5, true], ['tickets', 0.8, false]]);

  // The index's token opens its routes; the server's too.
  for (const [id, text] of Object.entries(TEXTS)) assert.equal((await call(app, 'POST', '/v1/indexes/ads/documents', OWN, { id, text })).statusCode, 200);
  const q = JSON.parse((await call(app, 'POST', '/v1/indexes/ads/query', SERVER, { text: TEXTS.b })).body) as { matches: { id: string }[] };
  assert.deepEqual(q.matches.map((m) => m.id).sort(), ['a', 'b']);
  // It does not open another index, the registry or the server's own index.
  assert.equal((await call(app, 'POST', '/v1/indexes/tickets/query', OWN, { text: 'x' })).statusCode, 401);
  assert.equal((await call(app, 'POST', '/v1/query', OWN, { text: 'x' })).statusCode, 401);
  assert.equal((await call(app, 'POST', '/v1/indexes/ads/query', undefined, { text: 'x' })).statusCode, 401);
  assert.equal((await call(app, 'POST', '/v1/indexes/ads/query', 'wrong', { text: 'x' })).statusCode, 401);
  // Indexes are apart: the others hold none of its documents.
  assert.deepEqual(JSON.parse((await call(app, 'POST', '/v1/indexes/tickets/query', SERVER, { text: TEXTS.b })).body).matches, []);
  assert.deepEqual(JSON.parse((await call(app, 'POST', '/v1/query', SERVER, { text: TEXTS.b })).body).matches, []);
  const one = JSON.parse((await call(app, 'GET', '/v1/indexes/ads', SERVER)).body) as { documents: number };
  assert.equal(one.documents, 3);
  assert.equal(JSON.parse((await call(app, 'GET', '/v1/indexes/ads/stats', OWN)).body).documents ?? 3, 3);
  // Names of Object.prototype are no indexes.
  for (const name of ['__proto__', 'constructor', 'toString']) {
    assert.equal((await call(app, 'POST', `/v1/indexes/${name}/query`, SERVER, { text: 'x' })).statusCode, 404, name);
    assert.equal(
      (await call(app, 'GET', `/v1/indexes/${name}`, SERVER)).statusCode,
      name === 'constructor' ? 404 : 400,
      `${name}: not a valid name, or none listed`,
    );
  }
  // An unknown name: 404 to the server's token, 401 to anyone else (existence is not leaked).
  assert.equal((await call(app, 'POST', '/v1/indexes/nope/query', SERVER, { text: 'x' })).statusCode, 404);
  assert.equal((await call(app, 'POST', '/v1/indexes/nope/query', OWN, { text: 'x' })).statusCode, 401);

  assert.equal((await call(app, 'DELETE', '/v1/indexes/ads', OWN)).statusCode, 401);
  assert.equal((await call(app, 'DELETE', '/v1/indexes/ads', SERVER)).statusCode, 200);
  assert.equal((await call(app, 'DELETE', '/v1/indexes/ads', SERVER)).statusCode, 404);
  assert.ok(!fs.existsSync(path.join(dir, 'ads.db')), 'its documents are deleted');
  assert.equal((await call(app, 'POST', '/v1/indexes/ads/query', SERVER, { text: 'x' })).statusCode, 404);
  assert.equal((await call(app, 'POST', '/v1/indexes/ads/query', OWN, { text: 'x' })).statusCode, 401);
});

test("named indexes: every route of a named index answers as the same route of the server's own index with the same options", async () => {
  const { app } = await server(tmpDir(), null);
  const own = await NearDupIndex.open({ threshold: 0.5, k: 4 });
  const ref = buildApp(own);
  await ref.ready();
  cleanup.push(async () => (await ref.close(), await own.close()));
  assert.equal((await call(app, 'POST', '/v1/indexes', undefined, { name: 'n', threshold: 0.5, k: 4 })).statusCode, 201);
  const steps: [string, string, unknown?][] = [
    ['POST', '/documents', { id: 'a', text: TEXTS.a, meta: { site: 's1' } }],
    ['POST', '/documents:batch', { documents: [{ id: 'b', text: TEXTS.b, meta: { site: 's2' } }, { id: 'c', text: TEXTS.c }] }],
    ['POST', '/query', { text: TEXTS.b }],
    ['POST', '/query', { text: TEXTS.b, topK: 2 }],
    ['POST', '/query', { text: TEXTS.b, filter: { site: 's1' } }],
    ['GET', '/documents/a'],
    ['GET', '/documents/a/duplicates'],
    ['GET', '/documents/a/cluster'],
    ['GET', '/clusters'],
    ['GET', '/clusters/a'],
    ['DELETE', '/documents/c'],
    ['POST', '/documents:delete', { ids: ['c', 'zz'] }],
    ['GET', '/documents/c'],
    ['POST', '/query', { text: 'x', threshold: 3 }],
  ];
  for (const [method, rest, body] of steps) {
    const named = await call(app, method, `/v1/indexes/n${rest}`, undefined, body);
    const mine = await call(ref, method, `/v1${rest}`, undefined, body);
    assert.equal(named.statusCode, mine.statusCode, `${method} ${rest}`);
    assert.deepEqual(JSON.parse(named.body), JSON.parse(mine.body), `${method} ${rest}`);
  }
});

test('named indexes: an open server keeps an index with its own token closed to others, and a restart keeps them all', async () => {
  const dir = tmpDir();
  const first = await server(dir, null);
  assert.equal((await call(first.app, 'POST', '/v1/indexes', undefined, { name: 'locked', token: OWN })).statusCode, 201);
  assert.equal((await call(first.app, 'POST', '/v1/indexes', undefined, { name: 'open' })).statusCode, 201);
  assert.equal((await call(first.app, 'POST', '/v1/indexes/locked/documents', undefined, { id: 'a', text: TEXTS.a })).statusCode, 401);
  assert.equal((await call(first.app, 'POST', '/v1/indexes/locked/documents', OWN, { id: 'a', text: TEXTS.a })).statusCode, 200);
  assert.equal((await call(first.app, 'POST', '/v1/indexes/open/documents', undefined, { id: 'a', text: TEXTS.a })).statusCode, 200);
  await first.app.close();
  await first.registry.close();
  const second = await server(dir, null);
  assert.equal(JSON.parse((await call(second.app, 'GET', '/v1/indexes/locked/documents/a', OWN)).body).id, 'a');
  assert.equal((await call(second.app, 'GET', '/v1/indexes/locked/documents/a', undefined)).statusCode, 401);
  assert.equal(JSON.parse((await call(second.app, 'GET', '/v1/indexes/open', undefined)).body).documents, 1);
});

test('named indexes: concurrent creates of one name give one index; the others 409', async () => {
  const { app, registry } = await server(tmpDir());
  const rs = await Promise.all(Array.from({ length: 8 }, () => call(app, 'POST', '/v1/indexes', SERVER, { name: 'same' })));
  assert.deepEqual(rs.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
  assert.deepEqual(registry.list().map((x) => x.name), ['same']);
});

test('named indexes: /openapi.json lists the registry routes and every index route under /v1/indexes/{name}', async () => {
  const { app } = await server(tmpDir());
  const doc = JSON.parse((await call(app, 'GET', '/openapi.json', SERVER)).body) as { paths: Record<string, Record<string, { operationId?: string }>> };
  for (
    const p of [
      '/v1/indexes',
      '/v1/indexes/{name}',
      '/v1/indexes/{name}/documents',
      '/v1/indexes/{name}/query',
      '/v1/indexes/{name}/documents/{id}/duplicates',
      '/v1/indexes/{name}/clusters',
      '/v1/indexes/{name}/stats',
    ]
  ) {
    assert.ok(doc.paths[p], p);
  }
  const ids = Object.values(doc.paths).flatMap((item) =>
    Object.values(item).flatMap((op) => (op && typeof op === 'object' && 'operationId' in op ? [op.operationId] : []))
  );
  assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
});

test('named indexes: the background purge covers the named indexes open in the process', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  const registry = await IndexRegistry.open(tmpDir());
  const lines: string[] = [];
  const app = buildApp(index, { registry, purgeInterval: 25, errorLog: (l) => lines.push(l) });
  await app.ready();
  cleanup.push(async () => (await app.close(), await registry.close(), await index.close()));
  assert.equal((await call(app, 'POST', '/v1/indexes', undefined, { name: 'short', ttl: '50ms' })).statusCode, 201);
  assert.equal((await call(app, 'POST', '/v1/indexes/short/documents', undefined, { id: 'a', text: TEXTS.a })).statusCode, 200);
  const h = (await registry.acquire('short'))!;
  try {
    assert.equal(await h.index.store.size(), 1);
    const until = Date.now() + 10_000;
    while ((await h.index.store.size()) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    assert.equal(await h.index.store.size(), 0, 'purged from the store, not only hidden');
  } finally {
    h.release();
  }
});
