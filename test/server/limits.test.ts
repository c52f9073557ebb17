/**
 * Issue #31, item 4: service limits. A request whose headers or body trickle in is answered 408 and
 * closed (request and header timeouts); SIGTERM drains for at most the shutdown deadline, then
 * closes what is left; invalid UTF-8 in a JSON body is a 400 naming the field (not U+FFFD, which
 * made `"k\xff"` and `"k\xfe"` one id); several `serve` processes creating one new SQLite file at
 * once all start. And the request limits of the API: body size, id length and characters, batch
 * size, query fields, meta size, depth and prototype keys.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { NearDupIndex } from '../../src/online/nearDupIndex.js';
import { buildApp } from '../../src/server/app.js';
import { firstInvalidUtf8 } from '../../src/server/jsonBody.js';
import { tmpDir } from '../cliUtil.js';
import { startServe } from '../helpers/procs.js';

const TEXT = 'a flat in rome near the metro with two rooms and a balcony';
const cleanup: (() => Promise<unknown> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});
const json = { 'content-type': 'application/json' };

function tmp(): string {
  const d = tmpDir();
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

test('firstInvalidUtf8 agrees with a strict decoder, and everything before it decodes', () => {
  const strict = new TextDecoder('utf-8', { fatal: true });
  const valid = (b: Uint8Array): boolean => {
    try {
      strict.decode(b);
      return true;
    } catch {
      return false;
    }
  };
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 40 }),
    fc.tuple(fc.string({ unit: 'grapheme', maxLength: 10 }), fc.uint8Array({ maxLength: 4 }), fc.string({ maxLength: 5 })).map(([a, b, c]) =>
      Buffer.concat([Buffer.from(a), b, Buffer.from(c)])
    ),
  );
  fc.assert(
    fc.property(bytes, (b) => {
      const at = firstInvalidUtf8(b);
      assert.equal(at === -1, valid(b));
      if (at >= 0) {
        assert.ok(valid(b.subarray(0, at)));
        // The sequence starting there cannot be completed by any bytes (or is cut by the end).
        assert.ok(!valid(b.subarray(0, Math.min(b.length, at + 4))));
      }
    }),
    { numRuns: 2000 },
  );
});

/** A JSON body with the bytes `bad` inside the string at `pointer`. */
function bodyWith(bad: Buffer, where: 'id' | 'text' | 'meta' | 'batch'): { body: Buffer; url: string; field: string } {
  const mark = '@@BAD@@';
  const doc = {
    id: where === 'id' ? `k${mark}` : 'k',
    text: where === 'text' || where === 'batch' ? `${TEXT} ${mark}` : TEXT,
    meta: where === 'meta' ? { 'ti/tle': `x${mark}` } : {},
  };
  const json = where === 'batch' ? JSON.stringify({ documents: [{ id: 'ok', text: TEXT }, doc] }) : JSON.stringify(doc);
  const [a, b] = json.split(mark);
  const field = { id: '/id', text: '/text', meta: '/meta/ti~1tle', batch: '/documents/1/text' }[where];
  return { body: Buffer.concat([Buffer.from(a!), bad, Buffer.from(b!)]), url: where === 'batch' ? '/v1/documents:batch' : '/v1/documents', field };
}

test('http: invalid UTF-8 in a JSON body is a 400 naming the field; nothing is stored; valid U+FFFD and noncharacters pass', async () => {
  const index = await NearDupIndex.open({});
  const app = buildApp(index);
  const invalid = fc.constantFrom(
    Buffer.from([0xff]),
    Buffer.from([0xfe]),
    Buffer.from([0xc0, 0xaf]),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from([0xe2, 0x82]),
    Buffer.from([0xf4, 0x90, 0x80, 0x80]),
    Buffer.from([0x80]),
  );
  await fc.assert(
    fc.asyncProperty(invalid, fc.constantFrom('id', 'text', 'meta', 'batch') as fc.Arbitrary<'id' | 'text' | 'meta' | 'batch'>, async (bad, where) => {
      const { body, url, field } = bodyWith(bad, where);
      const r = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: body });
      assert.equal(r.statusCode, 400, r.body);
      const j = r.json() as { message: string; errors: { field: string }[] };
      assert.deepEqual(j.errors.map((e) => e.field), [field]);
      assert.match(j.message, /is not valid UTF-8/);
    }),
    { numRuns: 60 },
  );
  assert.equal(await index.size(), 0);
  // U+FFFD and the noncharacters written as real UTF-8 are text like any other.
  for (const [i, s] of ['k\ufffd', 'k\ufdd0\ufdef', 'k😀'].entries()) {
    const r = await app.inject({
      method: 'POST',
      url: '/v1/documents',
      headers: { 'content-type': 'application/json' },
      payload: Buffer.from(JSON.stringify({ id: s, text: `${TEXT} ${i}` })),
    });
    assert.equal(r.statusCode, 200, r.body);
  }
  assert.equal(await index.size(), 3);
  // Bad bytes outside any string: the body as a whole.
  const r = await app.inject({
    method: 'POST',
    url: '/v1/documents',
    headers: { 'content-type': 'application/json' },
    payload: Buffer.from([0x7b, 0xff, 0x7d]),
  });
  assert.equal(r.statusCode, 400);
  assert.deepEqual((r.json() as { errors: { field: string }[] }).errors.map((e) => e.field), ['/']);
  await app.close();
  await index.close();
});

/** Opens a socket to `port`, writes `head`, then `trickle` one byte every `everyMs`; resolves with all it read once closed. */
function slowClient(port: number, head: string, trickle: string, everyMs: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    s.on('connect', () => {
      s.write(head);
      timer = setInterval(() => {
        if (i < trickle.length && !s.destroyed) s.write(trickle[i++]!);
      }, everyMs);
    });
    s.on('data', (d) => (got += d.toString()));
    s.on('error', () => undefined);
    s.on('close', () => {
      clearInterval(timer);
      resolve(got);
    });
  });
}

test('http: a body or headers trickled in are answered 408 and closed (request and header timeouts); a prompt request is served', async () => {
  const index = await NearDupIndex.open({});
  const app = buildApp(index, { requestTimeout: 800, headerTimeout: 400 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as net.AddressInfo).port;
  const body = JSON.stringify({ id: 'slow', text: `${TEXT} ${'x'.repeat(150)}` });
  // The body, one byte every 50 ms: it would take over 10 s.
  const slowBody = slowClient(
    port,
    `POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    body,
    50,
  );
  // The headers, one byte every 50 ms.
  const slowHeaders = slowClient(
    port,
    'POST /v1/documents HTTP/1.1\r\n',
    `Host: x\r\nContent-Type: application/json\r\nX-Long: ${'y'.repeat(200)}\r\n\r\n`,
    50,
  );
  const ok = await fetch(`http://127.0.0.1:${port}/v1/documents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'fast', text: TEXT }),
  });
  assert.equal(ok.status, 200);
  const [b, h] = await Promise.all([slowBody, slowHeaders]);
  assert.match(b, /^HTTP\/1\.1 408 /, b);
  assert.match(h, /^HTTP\/1\.1 408 /, h);
  assert.equal(await index.get('slow'), null);
  await app.close();
  await index.close();
});

test('serve: SIGTERM drains for at most --shutdown-timeout, then closes a slow client and exits 0', async () => {
  const s = await startServe(['--store', 'memory', '--shutdown-timeout', '300', '--request-timeout', '0']);
  const port = Number(new URL(s.url).port);
  const body = JSON.stringify({ id: 'slow', text: TEXT });
  let closed = false;
  const client = slowClient(
    port,
    `POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    body,
    1000,
  ).then((r) => {
    closed = true;
    return r;
  });
  // Let the request reach the server (its headers are parsed), then ask it to stop.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await s.stop(), 0);
  assert.match(s.stderr(), /requests still open after 300 ms: closing their connections/);
  await client;
  assert.ok(closed);
});

test('serve: 8 processes creating one new SQLite file at once all start (rounds: NEARDUP_SERVE_ROUNDS, default 4)', async (t) => {
  const rounds = Number(process.env.NEARDUP_SERVE_ROUNDS ?? 4);
  const dir = tmpDir();
  for (let r = 0; r < rounds; r++) {
    const db = path.join(dir, `s${r}.db`);
    const started = await Promise.allSettled(Array.from({ length: 8 }, () => startServe(['--store', `sqlite:${db}`])));
    const exits = started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : Promise.resolve(null)));
    const failed = started.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason));
    assert.deepEqual(failed, [], `round ${r}`);
    assert.deepEqual(await Promise.all(exits), Array(8).fill(0));
  }
  t.diagnostic(`${rounds} rounds of 8`);
  fs.rmSync(dir, { recursive: true, force: true });
});

// Issue #48 item 5: `serve --host 0.0.0.0` said it listened on 127.0.0.1 (Fastify's first address).
test('serve says the address it listens on: --host 0.0.0.0, 127.0.0.1 and ::1', async () => {
  for (const host of ['0.0.0.0', '127.0.0.1', '::1']) {
    let s;
    try {
      s = await startServe(['--store', 'memory', '--host', host]);
    } catch (e) {
      if (host === '::1' && /EADDRNOTAVAIL|EAFNOSUPPORT/.test(String(e))) continue; // no IPv6 loopback here
      throw e;
    }
    const want = host.includes(':') ? `[${host}]` : host;
    assert.match(s.url, new RegExp(`^http://${want.replace(/[.[\]]/g, '\\$&')}:\\d+$`), s.stderr());
    const port = new URL(s.url).port;
    const r = await fetch(`http://${host === '0.0.0.0' ? '127.0.0.1' : want}:${port}/healthz`);
    assert.equal(r.status, 200);
    assert.equal(await s.stop(), 0);
  }
});

// #48: a body that is valid JSON but holds a `__proto__` or `constructor.prototype` key (refused
// by Fastify's parser against prototype poisoning) is a 400 naming the key and its place, never
// "Body is not valid JSON"; nothing is stored. The key is put at a drawn depth under meta, in a
// single document and in a batch; real syntax errors keep their message.
test('http: a __proto__ or constructor.prototype key is a 400 naming it, not "not valid JSON"', async () => {
  const index = await NearDupIndex.open({});
  const app = buildApp(index);
  const seg = fc.string({ unit: fc.constantFrom('a', 'b', '/', '~', 'é'), minLength: 1, maxLength: 4 });
  await fc.assert(
    fc.asyncProperty(fc.array(seg, { maxLength: 3 }), fc.constantFrom('__proto__', 'constructor.prototype'), fc.boolean(), async (pathSegs, key, batch) => {
      const inner = key === '__proto__' ? '{"__proto__":{"x":1}}' : '{"constructor":{"prototype":{"x":1}}}';
      let meta = inner;
      for (const s of [...pathSegs].reverse()) meta = `{${JSON.stringify(s)}:${meta}}`;
      const doc = `{"id":"k","text":${JSON.stringify(TEXT)},"meta":${meta}}`;
      const body = batch ? `{"documents":[{"id":"ok","text":${JSON.stringify(TEXT)}},${doc}]}` : doc;
      const r = await app.inject({
        method: 'POST',
        url: batch ? '/v1/documents:batch' : '/v1/documents',
        headers: { 'content-type': 'application/json' },
        payload: body,
      });
      assert.equal(r.statusCode, 400, r.body);
      const j = r.json() as { message: string; errors: { field: string }[] };
      const ptr = pathSegs.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
      const field = `${batch ? '/documents/1' : ''}/meta${ptr}/${key === '__proto__' ? '__proto__' : 'constructor/prototype'}`;
      assert.deepEqual(j.errors.map((e) => e.field), [field]);
      assert.ok(j.message.includes(`"${key}" key`), j.message);
      assert.doesNotMatch(j.message, /not valid JSON/);
    }),
    { numRuns: 60 },
  );
  const bad = await app.inject({ method: 'POST', url: '/v1/documents', headers: { 'content-type': 'application/json' }, payload: '{"id":"k","text":' });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.json().message as string, /not valid JSON/);
  assert.equal(await index.size(), 0);
  await app.close();
});

test('limits: body size (413), id length, batch size, query fields; meta size and depth', async () => {
  const { a } = await app({ bodyLimit: 64 * 1024 });
  const post = (url: string, payload: unknown) =>
    a.inject({ method: 'POST', url, headers: json, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });
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
  r = await post('/v1/documents:batch', {
    documents: [{ id: 'ok', text: 'x' }, { id: 'bad', text: 'x', meta: { d: JSON.parse('['.repeat(100) + ']'.repeat(100)) } }],
  });
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
  for (
    const payload of [
      '{"id":"p","text":"x","meta":{"__proto__":{"polluted":1}}}',
      '{"id":"p","text":"x","meta":{"a":{"constructor":{"prototype":{"polluted":1}}}}}',
      '{"__proto__":{"polluted":1},"id":"p","text":"x"}',
      '{"documents":[{"id":"p","text":"x","meta":{"__proto__":{"polluted":1}}}]}',
    ]
  ) {
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

// Issue 16 item 10: the add response limit, and text/plain bodies.
test('item 10: POST /v1/documents limit (default 100, max 10000), text/plain gets 415', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  const app = buildApp(index);
  cleanup.push(() => app.close());
  const text = 'the quick brown fox jumps over the lazy dog near the river bank at dawn';
  const docs = Array.from({ length: 150 }, (_, i) => ({ id: `d${i}`, text }));
  const b = await app.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: docs.slice(0, 120) } });
  assert.equal(b.statusCode, 200);
  assert.equal(b.json().results[119].duplicates.length, 100, 'batch default limit 100');
  assert.equal(
    (await app.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: docs.slice(120, 125), limit: 3 } })).json().results[4].duplicates
      .length,
    3,
  );
  let r = await app.inject({ method: 'POST', url: '/v1/documents', payload: docs[130] });
  assert.equal(r.json().duplicates.length, 100, 'default 100');
  r = await app.inject({ method: 'POST', url: '/v1/documents', payload: { ...docs[131], limit: 7 } });
  assert.equal(r.json().duplicates.length, 7);
  r = await app.inject({ method: 'POST', url: '/v1/documents', payload: { ...docs[132], limit: 10000 } });
  assert.equal(r.json().duplicates.length, 127, 'all of them up to the maximum');
  for (const limit of [0, 10001, 1.5, '5']) {
    r = await app.inject({ method: 'POST', url: '/v1/documents', payload: { ...docs[133], limit } });
    assert.equal(r.statusCode, 400, `limit ${limit}`);
  }
  r = await app.inject({ method: 'POST', url: '/v1/documents', payload: 'id=x&text=y', headers: { 'content-type': 'text/plain' } });
  assert.equal(r.statusCode, 415, r.body);
  assert.equal(r.json().error, 'Unsupported Media Type');
});
