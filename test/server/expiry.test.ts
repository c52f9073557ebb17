/**
 * Expiry through the HTTP API and the CLI (#35 item 1): `expiresAt` and `ttl` on POST
 * /v1/documents and :batch, `expiresAt` in GET /v1/documents/:id, bad expiries as 400s naming the
 * field, expired documents gone from every answer with a fake clock, the server's background
 * sweep; `neardup index add --ttl`, `neardup index purge` and their exit codes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { NearDupIndex } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';
import { CLUSTER_OPTS, windowText } from '../helpers/clusterModel.js';
import { lines, neardup, repoRoot, tmpDir } from '../cliUtil.js';

const T0 = Date.parse('2026-11-27T12:00:00Z');

test('HTTP: expiresAt and ttl on adds, expiresAt on GET, expired documents in no answer, the sweep purges them', async () => {
  let t = T0;
  const index = await NearDupIndex.open({ ...CLUSTER_OPTS, now: () => t });
  // No sweep here (inject makes the app ready, which starts it); a second app below sweeps.
  const app = buildApp(index, { purgeInterval: 0 });
  const post = (url: string, body: unknown) => app.inject({ method: 'POST', url, payload: body as object });
  try {
    assert.equal((await post('/v1/documents', { id: 'a', text: windowText(0, 0), ttl: '10s' })).statusCode, 200);
    const batch = await post('/v1/documents:batch', {
      documents: [
        { id: 'b', text: windowText(0, 1), expiresAt: '2026-11-27T12:00:05Z' },
        { id: 'c', text: windowText(0, 2), expiresAt: T0 + 60_000 },
        { id: 'd', text: windowText(0, 1, 3) },
      ],
    });
    assert.equal(batch.statusCode, 200);
    assert.deepEqual(
      batch.json().results.map((r: { duplicates: { id: string }[] }) => r.duplicates.map((m) => m.id)),
      [['a'], ['b'], ['b', 'c', 'a']],
    );
    assert.deepEqual((await app.inject('/v1/documents/a')).json().expiresAt, '2026-11-27T12:00:10.000Z');
    assert.equal((await app.inject('/v1/documents/b?fields=expiresAt')).json().expiresAt, '2026-11-27T12:00:05.000Z');
    assert.equal('expiresAt' in (await app.inject('/v1/documents/d')).json(), false, 'no expiry: not shown by default');
    assert.deepEqual((await app.inject('/v1/documents/d?fields=id,expiresAt')).json(), { id: 'd', expiresAt: null });

    // Bad expiries: 400 naming the field; nothing is added.
    const bad = [
      [{ id: 'x', text: 'x y z', ttl: '3 weeks' }, /ttl/],
      [{ id: 'x', text: 'x y z', expiresAt: 'tomorrow' }, /\/expiresAt must be an ISO 8601 date and time/],
      // Impossible dates are not rolled over to the next month.
      [{ id: 'x', text: 'x y z', expiresAt: '2026-02-30T00:00:00Z' }, /\/expiresAt must be an ISO 8601 date and time that exists/],
      [{ id: 'x', text: 'x y z', expiresAt: '2027-04-31T12:00:00+02:00' }, /\/expiresAt must be an ISO 8601 date and time that exists/],
      [{ id: 'x', text: 'x y z', expiresAt: '2027-01-01T24:30:00Z' }, /\/expiresAt must be an ISO 8601 date and time that exists/],
      [{ id: 'x', text: 'x y z', expiresAt: T0, ttl: '1d' }, /expiresAt or ttl, not both/],
      [{ id: 'x', text: 'x y z', expiresAt: 1e300 }, /expiresAt must be a date or a finite number/],
    ] as const;
    for (const [body, msg] of bad) {
      const r = await post('/v1/documents', body);
      assert.equal(r.statusCode, 400, JSON.stringify(body));
      assert.match(r.json().message, msg);
    }
    const badBatch = await post('/v1/documents:batch', { documents: [{ id: 'x', text: 'x', expiresAt: '2026-13-45' }] });
    assert.equal(badBatch.statusCode, 400);
    assert.equal(badBatch.json().errors[0].field, '/documents/0/expiresAt');
    assert.equal(await index.size(), 4);

    // 6 s later: b has expired. It is in no answer, and not counted.
    t += 6000;
    assert.equal((await app.inject('/v1/documents/b')).statusCode, 404);
    assert.equal((await app.inject('/v1/documents/b/duplicates')).statusCode, 404);
    const q = await post('/v1/query', { text: windowText(0, 1), fields: ['id'] });
    assert.deepEqual(q.json().matches.map((m: { id: string }) => m.id).sort(), ['a', 'c', 'd']);
    assert.equal((await app.inject('/v1/stats')).json().documents, 3);
    assert.equal((await app.inject('/readyz')).json().documents, 3);
    assert.equal((await post('/v1/documents:delete', { ids: ['b'] })).json().deleted, 0, 'an expired document is not there to delete');

    // The sweep: started when the app is ready, every 20 ms here.
    t += 10_000;
    const logs: string[] = [];
    const sweeping = buildApp(index, { purgeInterval: 20, errorLog: (line) => logs.push(line) });
    await sweeping.ready();
    for (let i = 0; i < 100 && logs.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(logs.join(''), /^neardup serve: \S+ purged 1 expired document\n$/);
    assert.equal(await index.store.size(), 2, 'a was purged by the sweep (b by the delete)');
    assert.match((await sweeping.inject('/metrics')).body, /neardup_documents_expired_total 1\n/);
    await sweeping.close();
    assert.deepEqual((await app.inject('/v1/clusters')).json().clusters.map((c: { members: string[] }) => c.members), [['c', 'd']]);
  } finally {
    await app.close();
    await index.close();
  }
});

for (const kind of ['sqlite', 'file'] as const) {
  test(`CLI: index add --ttl, index purge (prints what it removed) and their exit codes (${kind})`, () => {
    const dir = tmpDir();
    const store = kind === 'sqlite' ? `sqlite:${path.join(dir, 'ttl.db')}` : `file:${path.join(dir, 'ttl')}`;
    const ads = path.join(repoRoot, 'examples/ads.tsv');
    const common = [ads, '--text', 'Title,Short Description', '--store', store, '-q'];
    assert.equal(neardup(['index', 'add', ...common, '--id-prefix', 'keep', '--limit', '20']).code, 0);
    assert.equal(neardup(['index', 'add', ...common, '--id-prefix', 'tmp', '--limit', '5', '--ttl', '1ms']).code, 0);
    const wait = Date.now() + 20;
    while (Date.now() < wait);
    const r = neardup(['index', 'purge', '--store', store, '--list']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout), ['tmp0', 'tmp1', 'tmp2', 'tmp3', 'tmp4', '5 expired documents removed, 20 left']);
    const again = neardup(['index', 'purge', '--store', store]);
    assert.equal(again.code, 0);
    assert.equal(again.stdout, '0 expired documents removed, 20 left\n');
    assert.equal(neardup(['index', 'check', '--store', store]).code, 0);
    // Usage errors: exit 2, nothing created.
    assert.equal(neardup(['index', 'purge', '--store', 'memory']).code, 2);
    const missing = neardup(['index', 'purge', '--store', `sqlite:${path.join(dir, 'typo.db')}`]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no SQLite index at .*typo\.db/);
    const badTtl = neardup(['index', 'add', ...common, '--ttl', '30 days']);
    assert.equal(badTtl.code, 2);
    assert.match(badTtl.stderr, /--ttl must be a duration such as 30d/);
    assert.equal(neardup(['serve', '--store', store, '--purge-interval', 'often']).code, 2);
  });
}
