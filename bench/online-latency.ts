/**
 * In-process latency of the online index (memory store): build N documents, then time query,
 * add and topK one at a time. Usage: node dist/bench/online-latency.js [N=1000000] [queries=20000]
 */
import { NearDupIndex } from '../src/index.js';
import { adCorpus, percentile } from './online-corpus.js';

const N = Number(process.argv[2] ?? 1_000_000);
const Q = Number(process.argv[3] ?? 20_000);
const corpus = adCorpus();
const texts: string[] = [];

function mem() {
  const m = process.memoryUsage();
  // Resident bytes: arrayBuffers counts the untouched room of arrays that grow in place (src/common/roomArrays.ts).
  return m.rss;
}

if (global.gc) global.gc();
const m0 = mem();
const idx = await NearDupIndex.open({});
const t0 = performance.now();
let dups = 0;
const B = 1000;
for (let i = 0; i < N; i += B) {
  const docs = [];
  for (let j = i; j < Math.min(N, i + B); j++) {
    const text = corpus.next();
    if (j % Math.max(1, Math.floor(N / Q)) === 0 && texts.length < Q) texts.push(text);
    docs.push({ id: `ad-${j}`, text });
  }
  for (const r of await idx.addMany(docs)) dups += r.length ? 1 : 0;
  if ((i / B) % 100 === 0 && i > 0) process.stderr.write(`\r${i} docs, ${((i / (performance.now() - t0)) * 1000).toFixed(0)}/s`);
}
const buildMs = performance.now() - t0;
if (global.gc) global.gc();
const m1 = mem();
process.stderr.write('\n');

async function time(label: string, fn: (i: number) => Promise<unknown>, n: number) {
  const lat = new Float64Array(n);
  for (let i = 0; i < Math.min(n, 500); i++) await fn(i); // warm-up
  for (let i = 0; i < n; i++) {
    const a = process.hrtime.bigint();
    await fn(i);
    lat[i] = Number(process.hrtime.bigint() - a) / 1e6;
  }
  lat.sort();
  const mean = lat.reduce((s, x) => s + x, 0) / n;
  console.log(
    `| ${label} | ${n} | ${percentile(lat, 50).toFixed(3)} | ${percentile(lat, 99).toFixed(3)} | ${percentile(lat, 99.9).toFixed(3)} | ${mean.toFixed(3)} |`,
  );
}

const st = await idx.stats();
console.log(
  `N = ${N} documents (synthetic ads, ~${
    Math.round(texts.reduce((s, t) => s + t.length, 0) / texts.length)
  } chars), char 5-shingles, numPerm 128, threshold 0.8, bands ${st.manifest.bands}×${st.manifest.rows}, forest ${
    JSON.stringify(st.manifest.forest)
  }, verify exact`,
);
console.log(
  `build: ${(buildMs / 1000).toFixed(1)} s = ${
    ((N / buildMs) * 1000).toFixed(0)
  } adds/s (addMany, batches of ${B}); ${dups} added documents had near duplicates`,
);
console.log(`memory: ${((m1 - m0) / N).toFixed(0)} bytes/document (V8 heap + array buffers); store: ${JSON.stringify(st.storeStats)}`);
console.log('');
console.log('| operation | n | p50 ms | p99 ms | p99.9 ms | mean ms |');
console.log('|---|---|---|---|---|---|');
const fresh = Array.from({ length: Q }, () => corpus.next());
await time('query (indexed text: ≥1 match)', (i) => idx.query(texts[i % texts.length]!), Q);
await time('query (near-dup of indexed text)', (i) => idx.query(corpus.nearDupOf(texts[i % texts.length]!)), Q);
await time('query (new text)', (i) => idx.query(fresh[i]!), Q);
await time('topK k=10', (i) => idx.topK(texts[i % texts.length]!, 10), Math.min(Q, 5000));
await time('add (new id)', (i) => idx.add(`new-${i}`, fresh[i]!), Q);
await idx.close();
