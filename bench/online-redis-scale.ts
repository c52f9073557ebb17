/**
 * The Redis store's log layout at scale: N synthetic ads inserted with addMany (two batches in
 * flight, prepare workers), Redis memory per document, the band table held by each process, the
 * time a second process needs to open the index (fold the whole log), and query/add latency on it.
 * Usage: node --expose-gc dist/bench/online-redis-scale.js [N=1000000] [workers=1]
 */
import { Redis } from 'ioredis';
import { NearDupIndex } from '../src/index.js';
import { adCorpus, percentile } from './online-corpus.js';
import { startRedis } from '../test/helpers/redis.js';
import type { RedisStore } from '../src/store/redis/store.js';

const N = Number(process.argv[2] ?? 1_000_000);
const WORKERS = Number(process.argv[3] ?? 1);
const B = 1000;
const corpus = adCorpus(3);
const redis = await startRedis();
const raw = new Redis(redis.url);
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await raw.info('memory'))![1]);
const heap = () => {
  global.gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

const store = `${redis.url}?prefix=scale`;
const r0 = await usedMemory();
const writer = await NearDupIndex.open({ store, workers: WORKERS });
const probes: string[] = [];
const t0 = performance.now();
let pending: Promise<unknown> = Promise.resolve();
for (let i = 0; i < N; i += B) {
  const docs = [];
  for (let j = i; j < Math.min(N, i + B); j++) {
    const text = corpus.next();
    if (j % Math.max(1, Math.floor(N / 5000)) === 0) probes.push(text);
    docs.push({ id: `ad-${j}`, text });
  }
  const cur = writer.addMany(docs);
  await pending;
  pending = cur;
  if ((i / B) % 50 === 0 && i > 0) process.stderr.write(`\r${i} docs, ${((i / (performance.now() - t0)) * 1000).toFixed(0)}/s`);
}
await pending;
const insertMs = performance.now() - t0;
process.stderr.write('\n');
const r1 = await usedMemory();
const st = (await writer.stats()).storeStats;
// Replace 10% of the documents, then compact the log while the writer is open.
for (let i = 0; i < N / 10; i += B)
  await writer.addMany(Array.from({ length: Math.min(B, N / 10 - i) }, (_, j) => ({ id: `ad-${i + j}`, text: corpus.next() })));
const tc = performance.now();
const compacted = await (writer.store as RedisStore).compact();
const compactMs = performance.now() - tc;
await writer.close();

// A second process's view: open (fold the whole log), then time queries and adds one at a time.
const h0 = heap();
const t1 = performance.now();
const reader = await NearDupIndex.open({ store });
const openMs = performance.now() - t1;
const h1 = heap();
async function lat(fn: (i: number) => Promise<unknown>, n: number): Promise<string> {
  const l = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await fn(i);
    l[i] = performance.now() - s;
  }
  l.sort();
  return `p50 ${percentile(l, 50).toFixed(3)} ms, p99 ${percentile(l, 99).toFixed(3)} ms`;
}
const q = await lat((i) => reader.query(probes[i % probes.length]!), 5000);
const nearDup = await lat((i) => reader.query(corpus.nearDupOf(probes[i % probes.length]!)), 2000);
const add = await lat((i) => reader.add(`new-${i}`, corpus.next()), 2000);
await reader.close();

console.log(`N = ${N.toLocaleString('en')} ads, defaults (32 keys per document), batches of ${B}, prepare workers ${WORKERS}`);
console.log(`insert: ${((N / insertMs) * 1000).toFixed(0)} adds/s (${(insertMs / 1000).toFixed(1)} s)`);
console.log(`Redis used_memory: ${((r1 - r0) / N).toFixed(0)} bytes/document; log entries ${st.logEntries}`);
console.log(
  `band table in each process: ${(Number(st.localTableBytes) / N).toFixed(0)} bytes/document (typed arrays); heap growth of a second process opening it: ${
    ((h1 - h0) / N).toFixed(0)
  } bytes/document`,
);
console.log(
  `compaction after replacing ${N / 10} documents: ${(compactMs / 1000).toFixed(2)} s, ${compacted.entriesBefore} entries (${
    (compacted.bytesBefore / 1048576).toFixed(0)
  } MB) -> ${compacted.entriesAfter} (${(compacted.bytesAfter / 1048576).toFixed(0)} MB)`,
);
console.log(`open by a second process (fold the compacted log): ${(openMs / 1000).toFixed(2)} s`);
console.log(`one at a time on the opened index: query (indexed text) ${q}; query (near duplicate) ${nearDup}; add ${add}`);
raw.disconnect();
await redis.stop();
