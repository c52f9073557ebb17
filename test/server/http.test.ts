/**
 * The HTTP service: every endpoint and every error case, in process (app.inject), plus graceful
 * shutdown and two server processes sharing one Redis, as real child processes.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NearDupIndex } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';
import { startRedis, type RedisChild } from '../helpers/redis.js';
import { needsRedis } from '../helpers/needs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const mainJs = path.join(here, '../../src/cli/main.js');
const A = 'the quick brown fox jumps over the lazy dog near the river bank at dawn';
const B = 'the quick brown fox jumps over the lazy dog near the river bank at dawn!';
const auth = { authorization: 'Bearer s3cret' };
const cleanup: (() => Promise<unknown> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

async function app(token?: string, bodyLimit?: number) {
  const index = await NearDupIndex.open({ k: 5 });
  const a = buildApp(index, { token, bodyLimit });
  cleanup.push(() => a.close());
  return a;
}

test('http: add, batch, query, topK, get, delete, stats', async () => {
  const a = await app();
  let r = await a.inject({ method: 'POST', url: '/v1/documents', payload: { id: 'a', text: A, meta: { shop: 1 } } });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), { id: 'a', duplicates: [] });
  r = await a.inject({ method: 'POST', url: '/v1/documents', payload: { id: 'b', text: B } });
  const dup = r.json().duplicates;
  assert.equal(dup.length, 1);
  assert.equal(dup[0].id, 'a');
  assert.ok(dup[0].similarity >= 0.8 && dup[0].similarity < 1);
  // The text is kept (in meta.text, the server's default) but replies leave it out unless asked for.
  assert.deepEqual(dup[0].meta, { shop: 1 });
  assert.deepEqual(Object.keys(dup[0]), ['id', 'similarity', 'estimate', 'meta']);
  r = await a.inject({
    method: 'POST',
    url: '/v1/documents:batch',
    payload: { documents: [{ id: 'c', text: A }, { id: 'd', text: 'something else entirely, about cooking' }] },
  });
  assert.equal(r.statusCode, 200);
  const res = r.json().results;
  assert.deepEqual(res.map((x: { id: string }) => x.id), ['c', 'd']);
  assert.deepEqual(res[0].duplicates.map((m: { id: string }) => m.id), ['a', 'b']);
  assert.equal(res[0].duplicates[0].similarity, 1);
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: A, limit: 1 } });
  assert.equal(r.json().matches.length, 1);
  // topK counts distinct texts: c, a copy of a, is listed under it.
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: A, topK: 4 } });
  assert.deepEqual(r.json().matches.map((m: { id: string; copies: { id: string }[] }) => [m.id, m.copies.map((c) => c.id)]), [['a', ['c']], ['b', []]]);
  r = await a.inject({ method: 'GET', url: '/v1/documents/a' });
  assert.deepEqual(r.json(), { id: 'a', meta: { shop: 1 }, shingles: r.json().shingles });
  assert.ok(r.json().shingles > 10);
  r = await a.inject({ method: 'DELETE', url: '/v1/documents/a' });
  assert.deepEqual(r.json(), { id: 'a', deleted: true });
  r = await a.inject({ method: 'GET', url: '/v1/stats' });
  assert.equal(r.json().documents, 3);
  assert.equal(r.json().manifest.verify, 'exact');
  r = await a.inject({ method: 'GET', url: '/healthz' });
  assert.deepEqual(r.json(), { status: 'ok' });
  r = await a.inject({ method: 'GET', url: '/readyz' });
  assert.deepEqual(r.json(), { status: 'ready', documents: 3 });
  r = await a.inject({ method: 'GET', url: '/metrics' });
  assert.match(r.headers['content-type'] as string, /text\/plain/);
  assert.match(r.body, /neardup_documents 3/);
  assert.match(r.body, /neardup_http_requests_total\{route="\/v1\/documents",method="POST",status="200"\} 2/);
  assert.match(r.body, /neardup_http_request_duration_seconds_bucket\{route="\/v1\/query",le="\+Inf"\} 2/);
  r = await a.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(r.json().openapi, '3.1.0');
  assert.ok(r.json().paths['/v1/documents:batch'].post);
  // Every operation has a unique operationId; every one with a body documents 400, 401, 408, 413 and 415.
  const ids = new Set<string>();
  for (
    const [p, item] of Object.entries(
      r.json().paths as Record<string, Record<string, { operationId?: string; requestBody?: unknown; responses?: Record<string, unknown> }>>,
    )
  ) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters') continue;
      assert.ok(op.operationId && !ids.has(op.operationId), `${method} ${p}: operationId ${op.operationId}`);
      ids.add(op.operationId);
      if (op.requestBody) { for (const code of ['400', '401', '408', '413', '415']) assert.ok(op.responses?.[code], `${method} ${p} documents ${code}`); }
    }
  }
  // An unknown field is named in plain words, not Ajv's "must NOT have additional properties".
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: 'a b c', bogus: 1 } });
  assert.equal(r.statusCode, 400);
  assert.deepEqual(r.json().errors, [{ field: '/bogus', message: 'is not a field of this request: remove it (see /openapi.json for the fields)' }]);
  // A body that is not JSON: 415 with the error body the document promises, not a bare status.
  r = await a.inject({ method: 'POST', url: '/v1/query', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
  assert.equal(r.statusCode, 415);
  assert.equal(r.json().error, 'Unsupported Media Type');
  assert.match(r.json().message, /must be JSON: send it with Content-Type: application\/json \(got text\/plain\)/);
});

test('http: POST /v1/documents:delete removes many documents in one call, lists the ids it did not find, and keeps clusters right', async () => {
  const a = await app();
  const docs = [
    { id: 'a', text: A },
    { id: 'b', text: B },
    { id: 'c', text: A + ' again' },
    { id: 'd', text: 'something else entirely, about cooking' },
  ];
  assert.equal((await a.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: docs } })).statusCode, 200);
  let r = await a.inject({ method: 'GET', url: '/v1/documents/a/cluster' });
  assert.deepEqual(r.json().cluster.members, ['a', 'b', 'c']);
  r = await a.inject({ method: 'POST', url: '/v1/documents:delete', payload: { ids: ['a', 'd', 'nope', 'a'] } });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), { deleted: 2, missing: ['nope', 'a'] });
  assert.equal((await a.inject({ method: 'GET', url: '/v1/documents/d' })).statusCode, 404);
  r = await a.inject({ method: 'GET', url: '/v1/documents/b/cluster' });
  assert.deepEqual(r.json().cluster.members, ['b', 'c']);
  assert.equal((await a.inject({ method: 'GET', url: '/v1/stats' })).json().documents, 2);
  r = await a.inject({ method: 'POST', url: '/v1/documents:delete', payload: { ids: [] } });
  assert.equal(r.statusCode, 400);
  assert.equal(r.json().errors[0].field, '/ids');
  r = await a.inject({ method: 'POST', url: '/v1/documents:delete', payload: { ids: Array.from({ length: 1001 }, (_, i) => `x${i}`) } });
  assert.equal(r.statusCode, 400);
  assert.match(r.json().message, /must NOT have more than 1000 items/);
  assert.ok((await a.inject({ method: 'GET', url: '/openapi.json' })).json().paths['/v1/documents:delete'].post);
});

test('http: lean replies: fields of matches (query, topK, add, batch, duplicates) and of documents, the stored text and signature on request', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  const a = buildApp(index);
  cleanup.push(() => a.close());
  await a.inject({ method: 'POST', url: '/v1/documents', payload: { id: 'a', text: A, meta: { shop: 1 } } });
  await a.inject({ method: 'POST', url: '/v1/documents', payload: { id: 'n', text: A + ' no meta' } });
  let r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: A, fields: ['id', 'similarity'] } });
  assert.deepEqual(r.json().matches, [{ id: 'a', similarity: 1 }, { id: 'n', similarity: r.json().matches[1].similarity }]);
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: A, fields: ['id', 'meta', 'text'] } });
  // The meta of a document added without one held only the text: it has none left.
  assert.deepEqual(r.json().matches, [{ id: 'a', meta: { shop: 1 }, text: A }, { id: 'n', text: A + ' no meta' }]);
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: A, topK: 1, fields: ['id', 'signature'] } });
  const sig = (await index.get('a'))!.signature!;
  assert.deepEqual(r.json().matches, [{ id: 'a', signature: Array.from(sig), copies: [] }]);
  r = await a.inject({ method: 'POST', url: '/v1/documents', payload: { id: 'b', text: B, fields: ['id'] } });
  assert.deepEqual(r.json(), { id: 'b', duplicates: [{ id: 'a' }, { id: 'n' }] });
  r = await a.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: [{ id: 'c', text: B }], fields: ['id', 'text'] } });
  assert.deepEqual(r.json().results[0].duplicates[0], { id: 'b', text: B });
  r = await a.inject({ method: 'GET', url: '/v1/documents/a/duplicates?fields=id,estimate' });
  assert.deepEqual(Object.keys(r.json().duplicates[0]), ['id', 'estimate']);
  r = await a.inject({ method: 'GET', url: '/v1/documents/a?fields=text,signature' });
  assert.deepEqual(r.json(), { text: A, signature: Array.from(sig) });
  r = await a.inject({ method: 'GET', url: '/v1/documents/a?fields=id,colour' });
  assert.equal(r.statusCode, 400);
  assert.match(r.json().message, /querystring\/fields: unknown field "colour" \(expected some of id, meta, text, shingles, signature, expiresAt\)/);
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: A, fields: ['id', 'body'] } });
  assert.equal(r.statusCode, 400);
  assert.equal(r.json().errors[0].field, '/fields/1');
  // The library: the same selection through query options.
  const full = await index.query(A);
  assert.deepEqual(await index.query(A, { fields: ['id'] }), full.map((m) => ({ id: m.id })));
});

test('http: 400 with the errors of each field', async () => {
  const a = await app();
  let r = await a.inject({ method: 'POST', url: '/v1/documents', payload: { idx: 'a', text: 5, meta: 1 } });
  assert.equal(r.statusCode, 400);
  const fields = r.json().errors.map((e: { field: string }) => e.field).sort();
  assert.deepEqual(fields, ['/id', '/idx', '/text']);
  r = await a.inject({ method: 'POST', url: '/v1/documents', payload: { id: '', text: 'x' } });
  assert.equal(r.json().errors[0].field, '/id');
  r = await a.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: [] } });
  assert.equal(r.statusCode, 400);
  assert.equal(r.json().errors[0].field, '/documents');
  r = await a.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: [{ id: 'x', text: 1 }] } });
  assert.equal(r.json().errors[0].field, '/documents/0/text');
  r = await a.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: [{ id: 'x', text: 'a' }, { id: 'x', text: 'b' }] } });
  assert.equal(r.statusCode, 400);
  assert.match(r.json().message, /duplicate id "x"/);
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: 'x', threshold: 2, limit: 0, topK: 'a' } });
  assert.deepEqual(r.json().errors.map((e: { field: string }) => e.field).sort(), ['/limit', '/threshold', '/topK']);
  r = await a.inject({ method: 'POST', url: '/v1/query', headers: { 'content-type': 'application/json' }, payload: '{"text": ' });
  assert.equal(r.statusCode, 400);
  r = await a.inject({ method: 'POST', url: '/v1/query', headers: { 'content-type': 'application/xml' }, payload: '<a/>' });
  assert.equal(r.statusCode, 415);
});

test('http: 413 for bodies over the limit', async () => {
  const a = await app(undefined, 2000);
  const r = await a.inject({ method: 'POST', url: '/v1/documents', payload: { id: 'big', text: 'x'.repeat(3000) } });
  assert.equal(r.statusCode, 413);
  assert.equal(r.json().statusCode, 413);
  assert.equal((await a.inject({ method: 'POST', url: '/v1/documents', payload: { id: 'ok', text: 'x'.repeat(100) } })).statusCode, 200);
});

test('http: 401 without the right bearer token; /healthz and /readyz stay open', async () => {
  const a = await app('s3cret');
  for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 's3cret' }, { authorization: 'Bearer s3cret-longer' }]) {
    const r = await a.inject({ method: 'POST', url: '/v1/query', headers, payload: { text: 'x' } });
    assert.equal(r.statusCode, 401);
    assert.equal(r.headers['www-authenticate'], 'Bearer');
  }
  assert.equal((await a.inject({ method: 'GET', url: '/v1/stats' })).statusCode, 401);
  assert.equal((await a.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
  assert.equal((await a.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  assert.equal((await a.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  assert.equal((await a.inject({ method: 'POST', url: '/v1/query', headers: auth, payload: { text: 'x' } })).statusCode, 200);
});

test('http: 404 for unknown documents and routes', async () => {
  const a = await app();
  assert.equal((await a.inject({ method: 'GET', url: '/v1/documents/nope' })).statusCode, 404);
  assert.equal((await a.inject({ method: 'DELETE', url: '/v1/documents/nope' })).statusCode, 404);
  const r = await a.inject({ method: 'GET', url: '/v2/whatever' });
  assert.equal(r.statusCode, 404);
  assert.match(r.json().message, /no route GET \/v2\/whatever/);
});

/** Starts `neardup serve` as a child; resolves with its base URL once it listens. */
async function serve(args: string[]): Promise<{ url: string; child: ChildProcess; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [mainJs, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  cleanup.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return { url, child, exited };
}

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

test("serve: two server processes sharing one Redis see each other's documents", needsRedis(), async () => {
  const redis: RedisChild = await startRedis();
  cleanup.push(() => redis.stop());
  const store = `${redis.url}?prefix=shared`;
  // s2 prepares batch requests on a worker thread (--workers 1).
  const [s1, s2] = await Promise.all([serve(['--store', store, '--token', 's3cret']), serve(['--store', store, '--token', 's3cret', '--workers', '1'])]);
  assert.deepEqual((await post(`${s1.url}/v1/documents`, { id: 'one', text: A })).json.duplicates, []);
  const r = await post(`${s2.url}/v1/documents`, { id: 'two', text: B });
  assert.equal(r.json.duplicates[0].id, 'one');
  const q = await post(`${s1.url}/v1/query`, { text: B });
  assert.deepEqual(q.json.matches.map((m: { id: string }) => m.id).sort(), ['one', 'two']);
  // A batch of 100 through s2's worker: every document is found from s1, the repeated text as a duplicate.
  const docs = Array.from(
    { length: 100 },
    (_, i) => ({ id: `b${i}`, text: i === 99 ? A : `${i} ${B.split('').reverse().join('')} ${'x'.repeat(i)} ${i * 7919}` }),
  );
  const batch = await post(`${s2.url}/v1/documents:batch`, { documents: docs });
  assert.equal(batch.status, 200);
  assert.deepEqual(batch.json.results[99].duplicates.map((m: { id: string }) => m.id).sort(), ['one', 'two']);
  for (const i of [0, 42, 98]) assert.equal((await post(`${s1.url}/v1/query`, { text: docs[i]!.text })).json.matches[0].id, `b${i}`);
  const del = await fetch(`${s2.url}/v1/documents/one`, { method: 'DELETE', headers: auth });
  assert.equal(del.status, 200);
  assert.equal((await fetch(`${s1.url}/v1/documents/one`, { headers: auth })).status, 404);
  s1.child.kill('SIGTERM');
  s2.child.kill('SIGTERM');
  assert.deepEqual(await Promise.all([s1.exited, s2.exited]), [0, 0]);
});

test('serve: graceful shutdown finishes the writes in flight (SQLite)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-grace-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, 'g.db');
  const s = await serve(['--store', `sqlite:${db}`]);
  const acked: string[] = [];
  const send = (i: number) =>
    fetch(`${s.url}/v1/documents:batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ documents: [{ id: `g${i}`, text: `${A} ${i} ${'lorem ipsum '.repeat(i % 7)}` }] }),
    })
      .then(async (r) => {
        if (r.status === 200) acked.push(`g${i}`);
        else await r.body?.cancel();
      })
      .catch(() => undefined);
  await Promise.all(Array.from({ length: 50 }, (_, i) => send(i)));
  // 250 more requests; SIGTERM arrives while many are in flight.
  const inflight = Array.from({ length: 250 }, (_, i) => send(50 + i));
  await new Promise((r) => setTimeout(r, 20));
  s.child.kill('SIGTERM');
  const stopAt = acked.length;
  await Promise.all(inflight);
  assert.equal(await s.exited, 0);
  assert.ok(stopAt >= 50 && acked.length >= 50);
  t.diagnostic(`acknowledged before SIGTERM: ${stopAt}, in total: ${acked.length} of 300`);
  const idx = await NearDupIndex.open({ store: `sqlite:${db}` });
  for (const id of acked) assert.ok(await idx.get(id), `acknowledged ${id} lost`);
  await idx.close();
});

test('http: texts are kept in meta.text unless storeText is false; 413 says the limit and the flag', async () => {
  const index = await NearDupIndex.open({});
  const keep = buildApp(index, { bodyLimit: 2000 });
  const post = (app: typeof keep, payload: unknown) => app.inject({ method: 'POST', url: '/v1/documents', payload: payload as object });
  await post(keep, { id: 'n', text: A });
  await post(keep, { id: 's', text: B, meta: 'a string' });
  await post(keep, { id: 'o', text: A, meta: { text: 'mine', title: 't' } });
  // What is stored: the metadata and the kept text (meta.text), asked for as fields of their own.
  const stored = async (app: typeof keep, id: string) => (await app.inject({ url: `/v1/documents/${id}?fields=meta,text` })).json();
  assert.deepEqual(await stored(keep, 'n'), { meta: null, text: A });
  assert.deepEqual(await stored(keep, 's'), { meta: 'a string', text: null }, 'a meta that is not an object is kept as it is');
  assert.deepEqual(await stored(keep, 'o'), { meta: { title: 't' }, text: 'mine' }, "the caller's meta.text wins");
  const big = await post(keep, { id: 'big', text: 'x'.repeat(3000) });
  assert.equal(big.statusCode, 413);
  assert.match(big.json().message, /limit of 2000 bytes.*--body-limit/);
  await keep.close();
  const bare = buildApp(index, { storeText: false });
  await post(bare, { id: 'm', text: A, meta: { shop: 2 } });
  await post(bare, { id: 'e', text: B });
  assert.deepEqual(await stored(bare, 'm'), { meta: { shop: 2 }, text: null });
  assert.deepEqual(await stored(bare, 'e'), { meta: null, text: null });
  await bare.close();
  await index.close();
});

// Issue 16 item 4: a 500 reaches stderr with its cause.
test('item 4: a 500 is written to stderr with its cause by default (no --log)', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  const lines: string[] = [];
  const app = buildApp(index, { errorLog: (l) => lines.push(l) });
  cleanup.push(() => app.close());
  (index as unknown as { query: () => never }).query = () => {
    throw new Error('disk on fire', { cause: new Error('EIO underneath') });
  };
  const r = await app.inject({ method: 'POST', url: '/v1/query', payload: { text: 'hello world' } });
  assert.equal(r.statusCode, 500);
  assert.ok(!r.body.includes('disk on fire'), 'the client sees no internals');
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /500 POST \/v1\/query: Error: disk on fire/);
  assert.match(lines[0]!, /caused by: Error: EIO underneath/);
  // The default sink is the process's stderr.
  const app2 = buildApp(index);
  cleanup.push(() => app2.close());
  const orig = process.stderr.write.bind(process.stderr);
  const seen: string[] = [];
  process.stderr.write = ((s: string) => (seen.push(String(s)), true)) as typeof process.stderr.write;
  try {
    assert.equal((await app2.inject({ method: 'POST', url: '/v1/query', payload: { text: 'x y z' } })).statusCode, 500);
  } finally {
    process.stderr.write = orig;
  }
  assert.ok(seen.some((s) => /500 POST \/v1\/query: Error: disk on fire/.test(s)), 'on stderr');
});
