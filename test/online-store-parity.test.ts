/**
 * One scenario, three stores: memory, SQLite and Redis must give identical answers.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, type NearDupIndexOptions } from '../src/index.js';
import { kijijiTexts } from './helpers/kijiji.js';
import { startRedis, type RedisChild } from './helpers/redis.js';

const texts = kijijiTexts().slice(0, 700);
const OPTS: NearDupIndexOptions = { shingle: { k: 10, normalize: { preset: 'seed000' } }, threshold: 0.8 };
const dir = mkdtempSync(path.join(tmpdir(), 'nd-parity-'));
let redis: RedisChild | undefined;
after(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the scenario and returns everything the index answered. */
async function scenario(store: string): Promise<unknown[]> {
  const idx = await NearDupIndex.open({ ...OPTS, store });
  const log: unknown[] = [];
  // Single adds, a batch, replacements (ids reused), removals, queries, topK, get, size.
  for (let i = 0; i < 250; i++) log.push(await idx.add(`d${i}`, texts[i]!, i % 3 === 0 ? { i, tag: 'x' } : undefined));
  log.push(await idx.addMany(texts.slice(250, 500).map((text, i) => ({ id: `d${250 + i}`, text, meta: { i: 250 + i } }))));
  log.push(await idx.addMany(texts.slice(500, 600).map((text, i) => ({ id: `d${i * 2}`, text }))));
  for (let i = 0; i < 600; i += 7) log.push(await idx.remove(`d${i}`));
  log.push(await idx.remove('nope'));
  for (let i = 600; i < 700; i++) log.push(await idx.query(texts[i]!));
  for (let i = 0; i < 700; i += 10) log.push(await idx.query(texts[i]!, { limit: 2, threshold: 0.9 }));
  for (let i = 600; i < 640; i++) log.push(await idx.topK(texts[i]!, 5));
  for (const id of ['d1', 'd3', 'd7', 'd8', 'd300', 'zzz']) log.push(await idx.get(id));
  log.push(await idx.size());
  // Reopen: persistent stores from their file or server, memory from a snapshot. Same answers again.
  const snapshot = path.join(dir, `${store.replace(/[^a-z0-9]/gi, '_')}.ndix`);
  if (store === 'memory') await idx.save(snapshot);
  await idx.close();
  const again = store === 'memory' ? await NearDupIndex.load(snapshot) : await NearDupIndex.open({ store });
  log.push(await again.size());
  for (let i = 600; i < 620; i++) log.push(await again.query(texts[i]!));
  await again.close();
  return log;
}

let reference: unknown[] | undefined;

test('store parity: memory (reference)', async () => {
  reference = await scenario('memory');
  assert.ok(reference.length > 500);
  // The scenario exercises matches: some queries must find duplicates.
  assert.ok(reference.some((x) => Array.isArray(x) && x.length > 0 && (x[0] as { similarity?: number }).similarity !== undefined));
});

test('store parity: sqlite', async () => {
  const got = await scenario(`sqlite:${path.join(dir, 'parity.db')}`);
  assert.deepEqual(got, reference);
});

test('store parity: redis (log layout, the default)', async () => {
  redis = await startRedis();
  const got = await scenario(`${redis.url}?prefix=parity`);
  assert.deepEqual(got, reference);
});

test('store parity: redis, log layout without multi-key commands (the Redis Cluster code path)', async () => {
  redis ??= await startRedis();
  const got = await scenario(`${redis.url}?prefix=plain&scripts=0`);
  assert.deepEqual(got, reference);
});

test('store parity: redis, sets layout', async () => {
  redis ??= await startRedis();
  const got = await scenario(`${redis.url}?prefix=sets&layout=sets`);
  assert.deepEqual(got, reference);
});

test('store parity: redis, sets layout without scripts (the Redis Cluster code path)', async () => {
  redis ??= await startRedis();
  const got = await scenario(`${redis.url}?prefix=setsplain&layout=sets&scripts=0`);
  assert.deepEqual(got, reference);
});

for (const layout of ['sets', 'log']) {
  test(`redis (${layout}): a bucket of 9,000 ids (more than Lua can unpack at once) is looked up whole and capped`, async () => {
    redis ??= await startRedis();
    const { RedisStore } = await import('../src/store/redis.js');
    const store = RedisStore.fromUrl(`${redis.url}?prefix=big${layout}&layout=${layout}`);
  await store.open({ keysPerDoc: 1 });
  const keys = new Float64Array([123456789]);
  const record = new Uint8Array([1, 0]);
  for (let i = 0; i < 9000; i += 1000) await store.put(Array.from({ length: 1000 }, (_, j) => ({ id: `c${i + j}`, record, keys })));
  const [found] = await store.lookup([keys], 10000);
  assert.equal(found!.length, 9000);
  assert.equal(new Set(found!.map((d) => d.id)).size, 9000);
  const [capped] = await store.lookup([keys], 100);
  assert.equal(capped!.length, 100);
  assert.equal(await store.size(), 9000);
  await store.close();
  });
}
