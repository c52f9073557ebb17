/**
 * The web page plugin in the API app, in process: local assets, clusters fed by the API's replies
 * (single adds, batches, deletes), and the token rule (the page is public, the data is not).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { NearDupIndex } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';

const apps: { close(): Promise<unknown> }[] = [];
after(async () => {
  for (const a of apps) await a.close();
});

async function app(token?: string) {
  const index = await NearDupIndex.open({ k: 5 });
  const a = buildApp(index, token ? { token } : {});
  apps.push(a);
  return a;
}

const FOX = 'the quick brown fox jumps over the lazy dog near the river bank at dawn';

test('web: the page and every asset are served locally, with their types', async () => {
  const a = await app();
  const page = await a.inject({ url: '/' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /^text\/html/);
  // Every asset the page refers to is served here; none is absolute (no CDN).
  const refs = [...page.body.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => m[1]!).filter((r) => !r.startsWith('data:'));
  assert.ok(refs.length >= 6);
  for (const r of refs) {
    assert.ok(r.startsWith('/ui/'), r);
    const res = await a.inject({ url: r });
    assert.equal(res.statusCode, 200, r);
    assert.ok(res.body.length > 100, r);
  }
  const js = await a.inject({ url: '/ui/page.js' });
  assert.match(js.headers['content-type'] as string, /javascript/);
  assert.match(js.body, /from '\.\/passages\.js'/);
  const passages = await a.inject({ url: '/ui/passages.js' });
  assert.match(passages.body, /export function commonPassages/);
  assert.doesNotMatch(passages.body, /sourceMappingURL/);
  assert.equal((await a.inject({ url: '/ui/../package.json' })).statusCode, 404);
  assert.equal((await a.inject({ url: '/ui/nothing.js' })).statusCode, 404);
});

test('web: clusters follow adds, batches and deletes made through the API', async () => {
  const a = await app();
  const add = (id: string, text: string) => a.inject({ method: 'POST', url: '/v1/documents', payload: { id, text } });
  await add('a', FOX);
  await add('b', FOX + '!');
  await add('z', 'a completely different text about flats in rome');
  const batch = await a.inject({
    method: 'POST',
    url: '/v1/documents:batch',
    payload: { documents: [{ id: 'c', text: FOX + '.' }, { id: 'y', text: 'a completely different text about flats in rome!' }] },
  });
  assert.equal(batch.statusCode, 200);
  let r = (await a.inject({ url: '/v1/clusters' })).json();
  assert.equal(r.total, 2);
  assert.deepEqual(r.clusters[0], { id: 'a', size: 3, members: ['a', 'b', 'c'] });
  assert.deepEqual(r.clusters[1].members, ['y', 'z']);
  assert.deepEqual((await a.inject({ url: '/v1/documents/b/cluster' })).json(), { id: 'b', cluster: { id: 'a', size: 3, members: ['a', 'b', 'c'] } });
  assert.deepEqual((await a.inject({ url: '/v1/clusters/y' })).json(), { id: 'y', size: 2, members: ['y', 'z'] });
  assert.equal((await a.inject({ url: '/v1/clusters/z' })).statusCode, 404);
  assert.equal((await a.inject({ url: '/v1/documents/nope/cluster' })).statusCode, 404);
  assert.equal((await a.inject({ url: '/v1/clusters?limit=0' })).statusCode, 400);
  assert.equal((await a.inject({ url: '/v1/clusters?offset=-1' })).statusCode, 400);
  assert.equal((await a.inject({ url: '/v1/clusters?color=red' })).statusCode, 400);
  assert.deepEqual((await a.inject({ url: '/v1/clusters?offset=1&limit=1&members=1' })).json(), {
    total: 2,
    offset: 1,
    clusters: [{ id: 'y', size: 2, members: ['y'] }],
  });
  // A query indexes nothing and changes no cluster.
  await a.inject({ method: 'POST', url: '/v1/query', payload: { text: FOX } });
  await a.inject({ method: 'DELETE', url: '/v1/documents/y' });
  r = (await a.inject({ url: '/v1/clusters?limit=1' })).json();
  assert.equal(r.total, 1);
  assert.equal(r.clusters.length, 1);
});

test('web: with a token the page loads without it, but data and clusters need it', async () => {
  const a = await app('s3cret');
  assert.equal((await a.inject({ url: '/' })).statusCode, 200);
  assert.equal((await a.inject({ url: '/ui/plot.umd.min.js' })).statusCode, 200);
  assert.equal((await a.inject({ url: '/v1/clusters' })).statusCode, 401);
  assert.equal((await a.inject({ url: '/v1/stats' })).statusCode, 401);
  assert.equal((await a.inject({ url: '/v1/clusters', headers: { authorization: 'Bearer s3cret' } })).statusCode, 200);
});
