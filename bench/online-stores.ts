/**
 * Insert throughput and memory per document of each store: memory, SQLite and Redis (a private
 * redis-server child), with batched addMany, plus one-at-a-time adds for Redis.
 * Usage: node --expose-gc dist/bench/online-stores.js [N=100000] [batch=1000]; STORES=memory,sqlite,redis picks
 * stores, WORKERS=N sets the index's prepare workers (default 0).
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { NearDupIndex, type NearDupIndexOptions } from '../src/index.js';
import { adCorpus } from './online-corpus.js';
import { startRedis } from '../test/helpers/redis.js';

const N = Number(process.argv[2] ?? 100_000);
const B = Number(process.argv[3] ?? 1000);
// Prepare workers for addMany (NearDupIndexOptions.workers).
const WORKERS = Number(process.env.WORKERS ?? 0);
const corpus = adCorpus(3);
const texts = Array.from({ length: N }, () => corpus.next());
const dir = mkdtempSync(path.join(tmpdir(), 'nd-storebench-'));
const redis = await startRedis();
const r = new Redis(redis.url);

async function redisBytes(): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await r.info('memory'))![1]);
}

async function heap(): Promise<number> {
  // ArrayBuffers are released after a GC cycle completes: collect, yield, collect.
  for (let i = 0; i < 3; i++) {
    global.gc?.();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m = process.memoryUsage();
  // Resident bytes: arrayBuffers counts the untouched room of arrays that grow in place (src/common/roomArrays.ts).
  return m.rss;
}

console.log(`N = ${N} synthetic ads (~345 chars), defaults (char 5-shingles, numPerm 128, 16×6 bands), batches of ${B}, prepare workers ${WORKERS}`);
console.log('');
console.log('| store | forest | keys/doc | adds/s (addMany) | bytes/document | measured as |');
console.log('|---|---|---|---|---|---|');

async function bench(label: string, store: string, extra: NearDupIndexOptions, bytes: () => Promise<number>, measure: string) {
  const before = await bytes();
  const idx = await NearDupIndex.open({ store, workers: WORKERS, ...extra });
  const t0 = performance.now();
  // Two batches in flight: the next batch is shingled and signed while the store works on the last.
  let pending: Promise<unknown> = Promise.resolve();
  for (let i = 0; i < N; i += B) {
    const cur = idx.addMany(texts.slice(i, i + B).map((text, j) => ({ id: `ad-${i + j}`, text })));
    await pending;
    pending = cur;
  }
  await pending;
  const ms = performance.now() - t0;
  const after = await bytes();
  console.log(
    `| ${label} | ${extra.forest === false ? 'off' : 'on'} | ${idx.manifest.keysPerDoc} | ${((N / ms) * 1000).toFixed(0)} | ${
      ((after - before) / N).toFixed(0)
    } | ${measure} |`,
  );
  return idx;
}

const stores = (process.env.STORES ?? 'memory,sqlite,redis').split(',');
let keep: NearDupIndex | null = null;
if (stores.includes('memory')) {
  keep = await bench('memory', 'memory', {}, heap, 'V8 heap + array buffers');
  keep = null;
  await bench('memory', 'memory', { forest: false }, heap, 'V8 heap + array buffers');
}
for (const forest of stores.includes('sqlite') ? [{}, { forest: false as const }] : []) {
  const db = path.join(dir, `s${Date.now()}.db`);
  const size = async () => (existsSync(db) ? statSync(db).size + (existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0) : 0);
  const idx = await bench('sqlite', `sqlite:${db}`, forest, size, 'file + WAL bytes');
  await idx.close();
}
let n = 0;
for (const layout of stores.includes('redis') ? ['log', 'sets'] : []) {
  for (const forest of [{}, { forest: false as const }]) {
    const idx = await bench(`redis (${layout})`, `${redis.url}?prefix=b${n++}&layout=${layout}`, forest, redisBytes, 'Redis used_memory');
    if (layout === 'log') {
      const st = (await idx.stats()).storeStats;
      console.log(`|   + table in each process | | | | ${(Number(st.localTableBytes) / N).toFixed(0)} | typed arrays of the local band table |`);
    }
    await idx.close();
  }
}
// One add at a time (no batching): the datasketch comparison point.
console.log('');
for (const layout of stores.includes('redis') ? ['log', 'sets'] : []) {
  const one = await NearDupIndex.open({ store: `${redis.url}?prefix=single-${layout}&layout=${layout}` });
  const t0 = performance.now();
  let k = 0;
  while (performance.now() - t0 < 5000) {
    await one.add(`s-${k}`, texts[k % N]!);
    k++;
  }
  console.log(`redis (${layout}), one add at a time (await each): ${((k / (performance.now() - t0)) * 1000).toFixed(0)} adds/s`);
  await one.close();
}
r.disconnect();
await redis.stop();
rmSync(dir, { recursive: true, force: true });
void keep;
