/**
 * The Redis store's log layout: the entry codec, several index instances sharing one Redis (each
 * with its own in-memory table), a wiped Redis, layout selection and mismatches, corrupt entries,
 * and the prepare workers of addMany.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { NearDupIndex, checkIndex } from '../../../src/index.js';
import { RedisStore } from '../../../src/store/redis/store.js';
import { encodeLogEntry, decodeLogEntry } from '../../../src/store/log/entry.js';
import type { MemoryStore } from '../../../src/store/memory/store.js';
import { kijijiTexts } from '../../helpers/kijiji.js';
import { neardup } from '../../cliUtil.js';
import { startRedis, type RedisChild } from '../../helpers/redis.js';
import { needsRedis } from '../../helpers/needs.js';

const texts = kijijiTexts().slice(0, 400);
const OPTS = { shingle: { k: 10, normalize: { preset: 'seed000' as const } }, threshold: 0.8 };
let redis: RedisChild | undefined;
after(async () => {
  await redis?.stop();
});
async function server(): Promise<RedisChild> {
  redis ??= await startRedis();
  return redis;
}

test('log entries round-trip, including empty key lists, non-ASCII ids and keys near 2^53', () => {
  const docs = [
    { id: 'a', keys: new Float64Array([0, 1, 2 ** 32, 2 ** 53 - 1, 123456789012345]) },
    { id: 'zé漢😀', keys: new Float64Array(0) },
    { id: 'x'.repeat(300), keys: new Float64Array([42]) },
  ];
  const put = decodeLogEntry(encodeLogEntry('put', docs), 'test');
  assert.equal(put.op, 'put');
  assert.deepEqual(
    put.docs.map((d) => ({ id: d.id, keys: [...d.keys!] })),
    docs.map((d) => ({ id: d.id, keys: [...d.keys] })),
  );
  const rm = decodeLogEntry(encodeLogEntry('remove', [{ id: 'zé漢😀' }]), 'test');
  assert.deepEqual(rm, { op: 'remove', docs: [{ id: 'zé漢😀' }] });
  // The golden vectors of docs/formats.md ("Redis posting log").
  const golden = encodeLogEntry('put', [
    { id: 'a', keys: new Float64Array([1867867925882561, 7]) },
    { id: 'é', keys: new Float64Array(0) },
  ]);
  assert.equal(golden.toString('hex'), '0101020161' + '02c1a635e4d0a206000700000000000000' + '02c3a900');
  assert.equal(encodeLogEntry('remove', [{ id: 'a' }]).toString('hex'), '0102010161');
  const bytes = encodeLogEntry('put', docs);
  assert.throws(() => decodeLogEntry(bytes.subarray(0, bytes.length - 3), 'L[7]'), /L\[7\]: malformed log entry \(truncated keys\)/);
  assert.throws(() => decodeLogEntry(Buffer.concat([bytes, Buffer.from([0])]), 'L[7]'), /1 trailing bytes/);
  assert.throws(() => decodeLogEntry(Buffer.from([9, 1, 0]), 'L[7]'), /version 9/);
});

test('log layout: index instances sharing one Redis see each other’s adds, replacements and removals', needsRedis(), async () => {
  const r = await server();
  const url = `${r.url}?prefix=shared`;
  const a = await NearDupIndex.open({ ...OPTS, store: url });
  const b = await NearDupIndex.open({ ...OPTS, store: url });
  assert.deepEqual(await a.add('x1', texts[0]!, { by: 'a' }), []);
  // b never wrote anything: it finds a's document through the log, with the record from Redis.
  const seen = await b.query(texts[0]!);
  assert.equal(seen.length, 1);
  assert.deepEqual({ id: seen[0]!.id, similarity: seen[0]!.similarity, meta: seen[0]!.meta }, { id: 'x1', similarity: 1, meta: { by: 'a' } });
  // b's add reports a's document as a duplicate; a then sees b's.
  const dup = await b.add('x2', texts[0]!);
  assert.deepEqual(dup.map((m) => m.id), ['x1']);
  assert.deepEqual((await a.query(texts[0]!)).map((m) => m.id), ['x1', 'x2']);
  // Replacement by a (another text under x1) moves x1's keys in b's table too.
  await a.add('x1', texts[1]!);
  assert.deepEqual((await b.query(texts[0]!)).map((m) => m.id), ['x2']);
  assert.deepEqual((await b.query(texts[1]!)).map((m) => m.id), ['x1']);
  // Removal by b.
  assert.equal(await b.remove('x1'), true);
  assert.deepEqual(await a.query(texts[1]!), []);
  assert.equal(await a.remove('x1'), false);
  // Batches from both, interleaved, end with both tables answering the same.
  await Promise.all([
    a.addMany(texts.slice(10, 110).map((text, i) => ({ id: `a${i}`, text }))),
    b.addMany(texts.slice(110, 210).map((text, i) => ({ id: `b${i}`, text }))),
  ]);
  for (let i = 10; i < 210; i += 9) assert.deepEqual(await a.query(texts[i]!), await b.query(texts[i]!));
  assert.equal(await a.size(), 201);
  // A third instance opened now rebuilds the same table from the log.
  const c = await NearDupIndex.open({ store: url });
  for (let i = 10; i < 210; i += 9) assert.deepEqual(await c.query(texts[i]!), await a.query(texts[i]!));
  const st = (await c.stats()).storeStats;
  assert.equal(st.layout, 'log');
  assert.equal(st.logEntries, 6); // 3 adds, 1 removal (the second found nothing), 2 batches
  await Promise.all([a.close(), b.close(), c.close()]);
});

test('log layout: a query sees every write acknowledged before it started, also while other queries keep folds in flight', needsRedis(), async () => {
  const r = await server();
  const url = `${r.url}?prefix=fresh`;
  const a = await NearDupIndex.open({ ...OPTS, store: url });
  const b = await NearDupIndex.open({ ...OPTS, store: url });
  let flooding = true;
  const flood = (async () => {
    let n = 0;
    while (flooding) {
      await Promise.all(Array.from({ length: 8 }, (_, i) => b.query(texts[(n + i) % 300]!)));
      n += 8;
    }
  })();
  for (let i = 0; i < 40; i++) {
    await a.add(`f${i}`, texts[i]!);
    const found = await b.query(texts[i]!);
    assert.ok(found.some((m) => m.id === `f${i}`), `b missed f${i}, acknowledged before its query`);
  }
  flooding = false;
  await flood;
  await Promise.all([a.close(), b.close()]);
});

test('log layout: compaction rewrites the log while in use; up-to-date processes keep their tables, stale ones refold', needsRedis(), async () => {
  const r = await server();
  const url = `${r.url}?prefix=cmp`;
  const a = await NearDupIndex.open({ ...OPTS, store: url });
  const b = await NearDupIndex.open({ ...OPTS, store: url });
  const stale = await NearDupIndex.open({ ...OPTS, store: url }); // folds nothing until after the compaction
  for (let i = 0; i < 300; i += 20) await a.addMany(texts.slice(i, i + 20).map((text, j) => ({ id: `k${i + j}`, text })));
  for (let i = 0; i < 100; i++) await a.add(`k${i}`, texts[(i + 150) % 300]!); // replacements
  for (let i = 200; i < 250; i++) await a.remove(`k${i}`);
  const probe = async (idx: NearDupIndex) => Promise.all(texts.slice(0, 300).filter((_, i) => i % 7 === 0).map((t) => idx.query(t)));
  const before = await probe(b);
  const bStore = b.store as RedisStore;
  const bTable = (bStore as unknown as { replica: unknown }).replica;
  const aStore = a.store as RedisStore;
  // Writes from b while a compacts: they must survive, after the rewritten part.
  const during = b.addMany(texts.slice(300, 340).map((text, j) => ({ id: `late${j}`, text })));
  const res = await aStore.compact();
  await during;
  // b's batch is one transaction: the compaction saw it entirely or not at all.
  assert.ok(res.documents === 250 || res.documents === 290, JSON.stringify(res));
  assert.ok(res.entriesBefore >= 15 + 100 + 50, JSON.stringify(res));
  assert.ok(res.entriesAfter <= 2, JSON.stringify(res)); // one entry for the 250 documents (+ b's batch if it came after)
  assert.ok(res.bytesAfter < res.bytesBefore);
  const raw = new Redis(r.url);
  assert.equal(await raw.llen('cmp:log'), res.entriesAfter);
  raw.disconnect();
  for (const idx of [a, b, stale]) {
    const got = await probe(idx);
    assert.deepEqual(got.map((m) => m.filter((x) => !x.id.startsWith('late'))), before, 'answers changed by compaction');
    for (let j = 0; j < 40; j += 13) assert.equal((await idx.query(texts[300 + j]!))[0]?.id, `late${j}`);
  }
  // b had folded everything the compaction rewrote: it kept its table (no refold).
  assert.equal((bStore as unknown as { replica: unknown }).replica, bTable);
  const fresh = await NearDupIndex.open({ store: url });
  assert.deepEqual(await probe(fresh), await probe(a));
  assert.equal((await fresh.stats()).storeStats.logEntries, res.entriesAfter);
  await Promise.all([a.close(), b.close(), stale.close(), fresh.close()]);
  const sets = RedisStore.fromUrl(`${r.url}?prefix=cmpsets&layout=sets`);
  await sets.open({ keysPerDoc: 1 });
  await assert.rejects(() => sets.compact(), /sets layout/);
  await sets.close();
});

test('neardup index compact: rewrites the log; refuses sets stores and non-Redis stores (exit 2)', needsRedis(), async () => {
  const r = await server();
  const url = `${r.url}?prefix=clicmp`;
  const idx = await NearDupIndex.open({ ...OPTS, store: url });
  for (let i = 0; i < 30; i++) await idx.add(`c${i % 10}`, texts[i]!);
  await idx.close();
  const ok = neardup(['index', 'compact', '--store', url]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /: 30 entries \(0\.0 MB rewritten\) -> 1 entries \(0\.0 MB\), 10 documents\n$/);
  await (await NearDupIndex.open({ store: `${r.url}?prefix=clisets&layout=sets` })).close();
  const bad = neardup(['index', 'compact', '--store', `${r.url}?prefix=clisets`]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /uses the sets layout, which has no log to compact/);
  const notRedis = neardup(['index', 'compact', '--store', 'sqlite:/tmp/x.db']);
  assert.equal(notRedis.code, 2);
  assert.match(notRedis.stderr, /compact rewrites the log of a Redis store/);
});

test('log layout: a wiped Redis empties the table; later adds work', needsRedis(), async () => {
  const r = await server();
  const url = `${r.url}?prefix=wipe`;
  const idx = await NearDupIndex.open({ ...OPTS, store: url });
  await idx.addMany(texts.slice(0, 50).map((text, i) => ({ id: `w${i}`, text })));
  assert.equal((await idx.query(texts[3]!))[0]?.id, 'w3');
  const raw = new Redis(r.url);
  await raw.flushall();
  assert.deepEqual(await idx.query(texts[3]!), []);
  assert.match((await raw.get('wipe:layout'))!, /^log /);
  assert.deepEqual(await idx.add('w-again', texts[3]!), []);
  assert.equal((await idx.query(texts[3]!))[0]?.id, 'w-again');
  raw.disconnect();
  await idx.close();
});

test('layouts: default log, ?layout=sets, stores made before layouts read as sets, mismatches are errors', needsRedis(), async () => {
  const r = await server();
  const raw = new Redis(r.url);
  const fresh = RedisStore.fromUrl(`${r.url}?prefix=lay1`);
  await fresh.open({ keysPerDoc: 1 });
  assert.equal(fresh.layout, 'log');
  assert.match((await raw.get('lay1:layout'))!, /^log [0-9a-f]{16}$/);
  await fresh.close();
  const sets = RedisStore.fromUrl(`${r.url}?prefix=lay2&layout=sets`);
  await sets.open({ keysPerDoc: 1 });
  assert.equal(sets.layout, 'sets');
  await sets.close();
  // An existing store keeps its layout whatever the default is.
  const again = RedisStore.fromUrl(`${r.url}?prefix=lay2`);
  assert.equal(await again.open({ keysPerDoc: 1 }).then(() => again.layout), 'sets');
  await again.close();
  await assert.rejects(
    async () => {
      const s = RedisStore.fromUrl(`${r.url}?prefix=lay2&layout=log`);
      try {
        await s.open({ keysPerDoc: 1 });
      } finally {
        await s.close();
      }
    },
    /uses the sets layout, not log/,
  );
  // A store written by a version without layouts: a manifest and no layout key.
  await raw.set('lay3:manifest', JSON.stringify({ keysPerDoc: 1 }));
  const old = RedisStore.fromUrl(`${r.url}?prefix=lay3`);
  await old.open({ keysPerDoc: 1 });
  assert.equal(old.layout, 'sets');
  await old.close();
  assert.throws(() => RedisStore.fromUrl(`${r.url}?layout=lists`), /layout must be log or sets/);
  raw.disconnect();
});

test('log layout: index check finds a record missing from the log (error) and log entries without records (warning)', needsRedis(), async () => {
  const r = await server();
  const url = `${r.url}?prefix=chk`;
  const idx = await NearDupIndex.open({ ...OPTS, store: url });
  await idx.addMany(texts.slice(0, 30).map((text, i) => ({ id: `c${i}`, text })));
  assert.deepEqual((await checkIndex(idx)).errors, []);
  const raw = new Redis(r.url);
  // A record written behind the index's back: listed, decodable, but in no log entry.
  await raw.set('chk:doc:ghost', (await raw.getBuffer('chk:doc:c1'))!);
  await raw.sadd('chk:ids', 'ghost');
  // A log entry whose record never arrived (a Cluster-mode writer dying mid-batch).
  await raw.rpush('chk:log', encodeLogEntry('put', [{ id: 'lost', keys: new Float64Array(idx.manifest.keysPerDoc).fill(7) }]));
  raw.disconnect();
  const rep = await checkIndex(idx);
  assert.deepEqual(rep.errors, [`document "ghost": ${idx.manifest.keysPerDoc} of its ${idx.manifest.keysPerDoc} keys do not lead back to it`]);
  assert.ok(rep.warnings.some((w) => /1 documents in chk:log without a record/.test(w)), rep.warnings.join('; '));
  // This process's band table broken as a rebuild worker once broke a file store's (keys lost):
  // its documents' keys no longer lead back to them, and the walk of the table finds its entries away from their homes.
  // The image's key array is the table's own (a view, no copy).
  (idx.store as unknown as { ops: { replica: { table: MemoryStore } } }).ops.replica.table.image().tKey.fill(0);
  assert.ok((await checkIndex(idx, { maxListed: 1e6 })).errors.some((e) => /cannot be found from its home/.test(e)));
  await idx.close();
});

test('log layout: a corrupt log entry is an error naming the list and position', needsRedis(), async () => {
  const r = await server();
  const url = `${r.url}?prefix=bad`;
  const idx = await NearDupIndex.open({ ...OPTS, store: url });
  await idx.add('ok', texts[0]!);
  await idx.close();
  const raw = new Redis(r.url);
  await raw.rpush('bad:log', Buffer.from([1, 1, 5]));
  raw.disconnect();
  await assert.rejects(() => NearDupIndex.open({ store: url }), /Redis bad:log\[1\]: malformed log entry \(truncated varint\)/);
});

test('addMany with prepare workers answers exactly as in-thread preparation (exact and estimate, metadata, empty texts)', needsRedis(), async () => {
  for (const verify of ['exact', 'estimate'] as const) {
    const plain = await NearDupIndex.open({ ...OPTS, verify });
    const threaded = await NearDupIndex.open({ ...OPTS, verify, workers: 2 });
    const docs = texts.slice(0, 300).map((text, i) => ({ id: `d${i}`, text: i % 50 === 7 ? '' : text, ...(i % 3 ? { meta: { i, tags: ['a', i] } } : {}) }));
    for (let i = 0; i < docs.length; i += 100) {
      // Batches of 100 go to the workers (≥ 64); the small one stays in-thread.
      const batch = docs.slice(i, i + 100);
      assert.deepEqual(await threaded.addMany(batch), await plain.addMany(batch));
    }
    const small = texts.slice(300, 310).map((text, i) => ({ id: `s${i}`, text }));
    assert.deepEqual(await threaded.addMany(small), await plain.addMany(small));
    for (const id of ['d1', 'd7', 'd8', 's3']) assert.deepEqual(await threaded.get(id), await plain.get(id));
    await Promise.all([plain.close(), threaded.close()]);
  }
  await assert.rejects(() => NearDupIndex.open({ workers: -1 }), /workers must be a non-negative integer/);
  await assert.rejects(() => NearDupIndex.open({ workers: 1, shingle: { normalize: { custom: (s: string) => s } } }), /custom normalization/);
});
