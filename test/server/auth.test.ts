/**
 * Issue 16 item 1: authorization is a property of the matched route. Every route the app registers
 * (enumerated from the app itself, so a route added later is covered without touching this file) is
 * tried with no token, a wrong one, the right one under any capitalisation of the scheme, and under
 * percent-encoded spellings of its path and with query strings. The token itself: compared in
 * constant time, refused under any near spelling.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NearDupIndex } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';
import { listRoutes } from '../../src/server/auth.js';
import { UsageError } from '../../src/common/errors.js';
import { neardup, tmpDir } from '../cliUtil.js';
import { IndexRegistry } from '../../src/online/registry/registry.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const TOKEN = 's3cret-token';
const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

/** An app over an index holding x1, with a registry holding a named index x1 holding x1 (so every route, named ones too, finds what it asks for). */
async function app(token?: string) {
  const index = await NearDupIndex.open({ k: 5 });
  await index.add('x1', 'a small flat near the station with a garden');
  const registry = await IndexRegistry.open(tmpDir());
  await registry.create('x1', { store: 'memory', options: { k: 5 } });
  const named = (await registry.acquire('x1'))!;
  await named.index.add('x1', 'a small flat near the station with a garden');
  named.release();
  const a = buildApp(index, token ? { token, registry } : { registry });
  await a.ready();
  cleanup.push(async () => {
    await a.close();
    await registry.close();
    await index.close();
  });
  return a;
}

/** A concrete path for a route pattern: parameters become `x1`, `::` is a literal colon. */
function concrete(pattern: string): string {
  return pattern.replace(/::/g, '\u0000').replace(/:[A-Za-z_]+/g, 'x1').replace(/\*/g, 'x1').replace(/\u0000/g, ':');
}

const pct = (c: string, lower = false): string => {
  const h = c.charCodeAt(0).toString(16).padStart(2, '0');
  return '%' + (lower ? h : h.toUpperCase());
};

/** Spellings of `path` that the router decodes to the same route. */
function spellings(path: string): string[] {
  const out = new Set<string>([path, `${path}?x=1`, `${path}?limit=1`, `${path}?`, `${path}?%78=%31`]);
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    if (!/[A-Za-z0-9]/.test(c)) continue;
    out.add(path.slice(0, i) + pct(c) + path.slice(i + 1));
    out.add(path.slice(0, i) + pct(c, true) + path.slice(i + 1) + '?limit=1');
  }
  // Every letter and digit encoded at once.
  out.add(path.replace(/[A-Za-z0-9]/g, (c) => pct(c)));
  return [...out];
}

const body = (
  method: string,
) => (method === 'POST' || method === 'PUT' || method === 'PATCH' ? { payload: '{}', headers: { 'content-type': 'application/json' } } : { headers: {} });

test('auth: every registered route, every spelling, needs the token unless the route is public', async () => {
  const a = await app(TOKEN);
  const open = await app();
  // Dropping the named index comes last: the named routes are tried while it exists.
  const dropsIt = (r: { method: string; url: string }) => Number(r.method === 'DELETE' && r.url === '/v1/indexes/:name');
  const routes = listRoutes(a).sort((x, y) => dropsIt(x) - dropsIt(y));
  // The enumeration is real: the API, the named indexes' routes, the web data and the health checks are in it.
  for (
    const want of [
      'POST /v1/indexes',
      'DELETE /v1/indexes/:name',
      'POST /v1/indexes/:name/query',
      'GET /v1/indexes/:name/documents/:id',
      'POST /v1/documents',
      'POST /v1/query',
      'GET /v1/documents/:id',
      'DELETE /v1/documents/:id',
      'GET /v1/clusters',
      'GET /v1/clusters/:id',
      'GET /v1/documents/:id/cluster',
      'GET /healthz',
      'GET /readyz',
      'GET /metrics',
    ]
  ) {
    assert.ok(routes.some((r) => `${r.method} ${r.url}` === want), `route ${want} is listed`);
  }
  const publicOnes = routes.filter((r) => r.public).map((r) => `${r.method} ${r.url}`);
  // What is public is a short, explicit list: the health checks and the page with its static files.
  for (const p of publicOnes) assert.match(p, /^(GET|HEAD) (\/healthz|\/readyz|\/|\/ui\/:name)$/, `unexpected public route ${p}`);
  let tried = 0;
  for (const r of routes) {
    const path = concrete(r.url);
    const b = body(r.method);
    for (const url of spellings(path)) {
      const reference = await open.inject({ method: r.method as 'GET', url, ...b });
      const label = `${r.method} ${url} (route ${r.url})`;
      const noToken = await a.inject({ method: r.method as 'GET', url, ...b });
      const wrong = await a.inject({ method: r.method as 'GET', url, ...b, headers: { ...b.headers, authorization: 'Bearer wrong' } });
      const right = await a.inject({ method: r.method as 'GET', url, ...b, headers: { ...b.headers, authorization: `Bearer ${TOKEN}` } });
      const lower = await a.inject({ method: r.method as 'GET', url, ...b, headers: { ...b.headers, authorization: `bearer ${TOKEN}` } });
      tried++;
      if (r.public) {
        assert.notEqual(noToken.statusCode, 401, `${label} is public`);
      } else {
        assert.equal(noToken.statusCode, 401, `${label} without a token`);
        assert.equal(wrong.statusCode, 401, `${label} with a wrong token`);
        assert.ok(!noToken.body.includes('x1') || noToken.body.includes('missing or invalid bearer token'), `${label}: no data without the token`);
      }
      assert.notEqual(right.statusCode, 401, `${label} with the token`);
      assert.notEqual(lower.statusCode, 401, `${label} with "bearer" in lower case`);
      // With the token, every spelling is answered as an app without a token answers it.
      assert.equal(right.statusCode, reference.statusCode, `${label}: same status as on an app without a token`);
    }
  }
  assert.ok(tried > 100, `${tried} requests per token state`);
});

test('auth: /healthz and /readyz with a query string stay public; unknown paths need the token (404 after it)', async () => {
  const a = await app(TOKEN);
  for (const url of ['/healthz', '/healthz?x=1', '/readyz?probe=1', '/%68ealthz']) assert.equal((await a.inject({ url })).statusCode, 200, url);
  assert.equal((await a.inject({ url: '/nowhere' })).statusCode, 401);
  assert.equal((await a.inject({ url: '/nowhere', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 404);
  // The reproduction: /ui/clusters is gone (the page reads /v1/clusters), so its spellings
  // are only a missing static file; the clusters themselves need the token in every spelling.
  for (const url of ['/ui/%63lusters', '/ui/clu%73ters?limit=1', '/ui/clusters']) {
    assert.equal((await a.inject({ url })).statusCode, 404, url);
  }
  for (const url of ['/v1/%63lusters', '/v1/clu%73ters?limit=1', '/v1/clusters', '/v1/clusters/x1', '/v1/documents/x1/%63luster']) {
    const r = await a.inject({ url });
    assert.equal(r.statusCode, 401, url);
    assert.ok(!r.body.includes('members'), `${url} leaks nothing`);
  }
});

test('auth: a route added after buildApp, by any plugin, needs the token too', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  const a = buildApp(index, { token: TOKEN });
  await a.register(async (child) => {
    child.get('/v1/late', async () => ({ secret: 1 }));
  });
  await a.ready();
  cleanup.push(async () => {
    await a.close();
    await index.close();
  });
  assert.ok(listRoutes(a).some((r) => r.url === '/v1/late'));
  assert.equal((await a.inject({ url: '/v1/%6cate' })).statusCode, 401);
  assert.equal((await a.inject({ url: '/v1/late', headers: { authorization: `BEARER ${TOKEN}` } })).statusCode, 200);
});

test('auth: an empty or blank token is a usage error (buildApp, --token, NEARDUP_TOKEN), never auth turned off', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  cleanup.push(() => index.close());
  const blanks = ['', ' ', '\t', '  \n '];
  for (const token of blanks) {
    assert.throws(() => buildApp(index, { token }), (e: unknown) => e instanceof UsageError && /token is empty/.test(e.message), JSON.stringify(token));
  }
  // Every way the CLI takes a token: the flag, and the environment.
  for (const token of blanks) {
    for (const [args, env, name] of [[['--token', token], {}, '--token'], [[], { NEARDUP_TOKEN: token }, 'NEARDUP_TOKEN']] as const) {
      const r = neardup(['serve', '--port', '0', ...args], { env });
      assert.equal(r.code, 2, `${name}=${JSON.stringify(token)}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`${name} is empty`));
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    }
  }
});

/** The status of GET /v1/stats with `Authorization: Bearer <token>` sent as UTF-8 bytes on a raw socket (as curl sends it). */
function rawStatus(port: number, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    sock.on('data', (b) => (got += b.toString('latin1')));
    sock.on('error', reject);
    sock.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(got)?.[1] ?? 0)));
    sock.end(Buffer.from(`GET /v1/stats HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`, 'utf8'));
  });
}

test('token: one no client can send (a space at either end, non-ASCII, control characters) is refused where it is set; every other opens the routes over HTTP (drawn)', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  const registry = await IndexRegistry.open(tmpDir());
  cleanup.push(async () => {
    await registry.close();
    await index.close();
  });
  const unit = fc.constantFrom('a', 'Z', '0', '-', '.', '_', '~', '+', '/', '=', '!', '"', ' ', '\t', '\u007f', 'ü', 'é', '€', '\ud83d\ude00', '\u0000');
  let n = 0;
  await fc.assert(
    fc.asyncProperty(fc.string({ unit, minLength: 1, maxLength: 6 }), async (token) => {
      const name = `i${n++}`;
      let app: ReturnType<typeof buildApp>;
      try {
        app = buildApp(index, { token });
      } catch (e) {
        assert.ok(e instanceof UsageError && /token (is empty|is not one a client can send)/.test(e.message), `${JSON.stringify(token)}: ${String(e)}`);
        // The same predicate guards a named index's own token.
        await assert.rejects(registry.create(name, { store: 'memory', token }), /token of index .* (is empty|is not one a client can send)/);
        return;
      }
      await registry.create(name, { store: 'memory', token });
      await app.listen({ port: 0, host: '127.0.0.1' });
      try {
        const port = (app.server.address() as net.AddressInfo).port;
        assert.equal(await rawStatus(port, token), 200, `${JSON.stringify(token)} sent as UTF-8`);
        const r = await fetch(`http://127.0.0.1:${port}/v1/stats`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(r.status, 200, `${JSON.stringify(token)} through fetch`);
      } finally {
        await app.close();
      }
    }),
    { numRuns: 60, seed: 20261201 },
  );
  // The CLI says so by option, exit 2: --token, NEARDUP_TOKEN, index create --token.
  for (const token of [' s3cret', 's3cret ', 'pässwörd']) {
    const r = neardup(['serve', '--port', '0', '--token', token]);
    assert.equal(r.code, 2, `${JSON.stringify(token)}: ${r.stderr}`);
    assert.match(r.stderr, /--token is not one a client can send/);
    const c = neardup(['index', 'create', 'ads', '--indexes', tmpDir(), '--token', token]);
    assert.equal(c.code, 2, `${JSON.stringify(token)}: ${c.stderr}`);
    assert.match(c.stderr, /token of index "ads" is not one a client can send/);
  }
});

test('token: the right token passes; a wrong one of any length, a missing one or another scheme gets 401', async () => {
  const a = await app('correct-horse-battery-staple');
  const get = (authorization?: string) => a.inject({ method: 'GET', url: '/v1/stats', headers: authorization === undefined ? {} : { authorization } });
  // The scheme name is case-insensitive (RFC 9110 §11.1).
  for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) assert.equal((await get(`${scheme} correct-horse-battery-staple`)).statusCode, 200, scheme);
  for (
    const h of [
      undefined,
      '',
      'Bearer ',
      'Bearer correct-horse-battery-stapl',
      'Bearer correct-horse-battery-staplf',
      'Bearer correct-horse-battery-staple ',
      'Bearer x',
      'Bearercorrect-horse-battery-staple',
      'Basic Y29ycmVjdA==',
      'Bearer ' + 'c'.repeat(10000),
    ]
  ) {
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
