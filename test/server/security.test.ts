/**
 * Issue 7, security pass: bearer token, body and field limits, id validation, prototype pollution
 * through `meta`, and directory inputs that must not follow symbolic links out of their root.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NearDupIndex } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';
import { openInput } from '../../src/io/read/read.js';
import { InputError } from '../../src/common/errors.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});
const json = { 'content-type': 'application/json' };

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-sec-'));
  cleanup.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

async function app(opts: { token?: string; bodyLimit?: number; store?: string } = {}) {
  const index = await NearDupIndex.open({ k: 5, ...(opts.store ? { store: opts.store } : {}) });
  const a = buildApp(index, { token: opts.token, bodyLimit: opts.bodyLimit });
  cleanup.push(async () => {
    await a.close();
    await index.close();
  });
  return { a, index };
}

test('token: the right token passes; a wrong one of any length, a missing one or another scheme gets 401', async () => {
  const { a } = await app({ token: 'correct-horse-battery-staple' });
  const get = (authorization?: string) => a.inject({ method: 'GET', url: '/v1/stats', headers: authorization === undefined ? {} : { authorization } });
  // The scheme name is case-insensitive (RFC 9110 §11.1).
  for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) assert.equal((await get(`${scheme} correct-horse-battery-staple`)).statusCode, 200, scheme);
  for (const h of [undefined, '', 'Bearer ', 'Bearer correct-horse-battery-stapl', 'Bearer correct-horse-battery-staplf', 'Bearer correct-horse-battery-staple ', 'Bearer x', 'Bearercorrect-horse-battery-staple', 'Basic Y29ycmVjdA==', 'Bearer ' + 'c'.repeat(10000)]) {
    const r = await get(h);
    assert.equal(r.statusCode, 401, `authorization ${JSON.stringify(h?.slice(0, 40))}`);
    assert.equal(r.headers['www-authenticate'], 'Bearer');
  }
  assert.equal((await a.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'healthz needs no token');
});

test('token: compared in constant time (SHA-256 digests of equal length through crypto.timingSafeEqual, never ===)', () => {
  // A behavioural test cannot see timing; this guards the implementation against a regression to
  // a short-circuiting comparison. bench/RESULTS.md ("Hardening") has the measured timings.
  const src = fs.readFileSync(path.resolve(here, '../../../src/server/auth.ts'), 'utf8');
  assert.match(src, /timingSafeEqual\(digest\(given\), tokenDigest\)/);
  assert.ok(!/(given|token)\s*[!=]==?\s*(options\.token|given|token)/.test(src), 'no direct string comparison of tokens');
});

test('limits: body size (413), id length, batch size, query fields; meta size and depth', async () => {
  const { a } = await app({ bodyLimit: 64 * 1024 });
  const post = (url: string, payload: unknown) => a.inject({ method: 'POST', url, headers: json, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });
  let r = await post('/v1/documents', { id: 'big', text: 'x'.repeat(70 * 1024) });
  assert.equal(r.statusCode, 413);
  r = await post('/v1/documents', { id: 'i'.repeat(1025), text: 'x' });
  assert.equal(r.statusCode, 400);
  assert.equal(r.json().errors[0].field, '/id');
  r = await post('/v1/documents', { id: '', text: 'x' });
  assert.equal(r.statusCode, 400);
  r = await post('/v1/documents:batch', { documents: Array.from({ length: 1001 }, (_, i) => ({ id: String(i), text: '' })) });
  assert.equal(r.statusCode, 400);
  r = await post('/v1/query', { text: 'x', topK: 100000 });
  assert.equal(r.statusCode, 400);
  r = await post('/v1/query', { text: 'x', threshold: 2 });
  assert.equal(r.statusCode, 400);
  r = await post('/v1/documents', { id: 'm', text: 'x', meta: { blob: 'y'.repeat(17 * 1024) } });
  assert.equal(r.statusCode, 400, 'meta over 16 KiB');
  assert.equal(r.json().errors[0].field, '/meta');
  // 10,000 nested arrays fit in 20 KB of body, and overflowed the stack when the record was encoded.
  r = await post('/v1/documents', `{"id":"deep","text":"x","meta":${'['.repeat(10000)}${']'.repeat(10000)}}`);
  assert.equal(r.statusCode, 400, 'deeply nested meta');
  assert.match(r.json().message, /meta.*nest/);
  r = await post('/v1/documents:batch', { documents: [{ id: 'ok', text: 'x' }, { id: 'bad', text: 'x', meta: { d: JSON.parse('['.repeat(100) + ']'.repeat(100)) } }] });
  assert.equal(r.statusCode, 400);
  assert.equal(r.json().errors[0].field, '/documents/1/meta');
  r = await post('/v1/documents', { id: 'fine', text: 'x', meta: { a: [1, { b: 'c' }], n: null } });
  assert.equal(r.statusCode, 200);
  // Nothing half-added by the rejected requests.
  const stats = await a.inject({ method: 'GET', url: '/v1/stats' });
  assert.equal(stats.json().documents, 1);
});

test('ids: control characters and lone surrogates are refused (they came back garbled from SQLite and Redis)', async () => {
  const dir = tmp();
  const { a, index } = await app({ store: `sqlite:${path.join(dir, 's.db')}` });
  for (const raw of ['"\\ud800"', '"\\udbff"', '"a\\udc00"', '"a\\u0000b"', '"line\\nbreak"', '"tab\\there"', '"\\u007f"']) {
    const r = await a.inject({ method: 'POST', url: '/v1/documents', headers: json, payload: `{"id":${raw},"text":"document text"}` });
    assert.equal(r.statusCode, 400, raw);
    assert.equal(r.json().errors?.[0]?.field ?? '/id', '/id');
  }
  for (const id of ['émoji 😀 ok', 'שלום', 'a:b/c?d#e', 'x'.repeat(1024)]) {
    const r = await a.inject({ method: 'POST', url: '/v1/documents', headers: json, payload: JSON.stringify({ id, text: 'document text' }) });
    assert.equal(r.statusCode, 200, id);
    const g = await a.inject({ method: 'GET', url: `/v1/documents/${encodeURIComponent(id)}` });
    assert.equal(g.statusCode, 200);
    assert.equal(g.json().id, id);
  }
  // Whatever the store, what is listed is exactly what was acknowledged.
  const ids: string[] = [];
  for await (const d of index.store.scan()) ids.push(d.id);
  assert.deepEqual(ids.sort(), ['a:b/c?d#e', 'x'.repeat(1024), 'émoji 😀 ok', 'שלום'].sort());
  // The library refuses them too, for every store.
  await assert.rejects(index.add('\ud800', 'text'), /id/);
  // A malformed percent-escape in the path is a 400, not a 500.
  assert.equal((await a.inject({ method: 'GET', url: '/v1/documents/%ED%A0%80' })).statusCode, 400);
  assert.equal((await a.inject({ method: 'GET', url: '/v1/documents/%ZZ' })).statusCode, 400);
});

test('meta: __proto__ and constructor.prototype are refused; nothing is polluted', async () => {
  const { a } = await app();
  for (const payload of [
    '{"id":"p","text":"x","meta":{"__proto__":{"polluted":1}}}',
    '{"id":"p","text":"x","meta":{"a":{"constructor":{"prototype":{"polluted":1}}}}}',
    '{"__proto__":{"polluted":1},"id":"p","text":"x"}',
    '{"documents":[{"id":"p","text":"x","meta":{"__proto__":{"polluted":1}}}]}',
  ]) {
    const url = payload.startsWith('{"documents"') ? '/v1/documents:batch' : '/v1/documents';
    const r = await a.inject({ method: 'POST', url, headers: json, payload });
    assert.equal(r.statusCode, 400, payload);
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  // A harmless key named like a prototype property is stored as plain data.
  const r = await a.inject({ method: 'POST', url: '/v1/documents', headers: json, payload: '{"id":"q","text":"x","meta":{"toString":"s","prototype":1}}' });
  assert.equal(r.statusCode, 200);
  const g = await a.inject({ method: 'GET', url: '/v1/documents/q?fields=meta,text' });
  assert.deepEqual(g.json(), { meta: { toString: 's', prototype: 1 }, text: 'x' });
});

test('directory input: symbolic links never lead outside the root (files, directories, loops)', async () => {
  const base = tmp();
  const root = path.join(base, 'root');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  fs.mkdirSync(path.join(base, 'outside/deep'), { recursive: true });
  fs.writeFileSync(path.join(base, 'outside/secret.txt'), 'secret outside text');
  fs.writeFileSync(path.join(base, 'outside/deep/d.txt'), 'deep outside text');
  fs.writeFileSync(path.join(root, 'a.txt'), 'inside text a');
  fs.symlinkSync('../outside/secret.txt', path.join(root, 'leak.txt'));
  fs.symlinkSync(path.join(base, 'outside'), path.join(root, 'linkdir'));
  fs.symlinkSync('../a.txt', path.join(root, 'sub/inside.txt'));
  fs.symlinkSync('..', path.join(root, 'sub/loop'));
  const read = async (skipInvalid: boolean) => {
    const input = await openInput(root, { skipInvalid });
    const docs: string[] = [];
    for await (const r of input.records) docs.push(`${r.id}=${r.text}`);
    return { docs, skips: input.skips };
  };
  const e = await read(false).catch((x: unknown) => x);
  assert.ok(e instanceof InputError, String(e));
  assert.match(e.message, /leak\.txt: symbolic link to .*outside.*not followed/);
  const { docs, skips } = await read(true);
  assert.deepEqual(docs, ['a.txt=inside text a', 'sub/inside.txt=inside text a']);
  assert.equal(skips.count, 2, 'leak.txt and linkdir are reported');
  assert.ok(!docs.some((d) => d.includes('outside')));
});
