/**
 * Bulk deletes per store (issue #35): fills each store with N synthetic ads (10% near duplicates,
 * so clusters exist and deletes split them), then removes ids in batches with index.removeMany and
 * one at a time with index.remove, and prints deletes/s and the time of a batch. Also prints, per
 * store, adds/s of the fill, the latency of 500 queries (p50 / p99; near duplicates of indexed ads,
 * one at a time) and bytes per document where the store can say (PostgreSQL: table and GIN index
 * sizes; Redis: used_memory; SQLite: file + WAL): the stores side by side in one run.
 * Usage: node dist/bench/online-deletes.js [N=100000] [batch=1000] [batches=10] [singles=300];
 * STORES=memory,sqlite,redis-log,redis-sets,postgres picks stores. Starts its own redis-server and
 * PostgreSQL (test/helpers).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex } from '../src/index.js';
import { adCorpus } from './online-corpus.js';
import { startRedis, type RedisChild } from '../test/helpers/redis.js';
import { startPostgres, type PostgresChild } from '../test/helpers/postgres.js';

const N = Number(process.argv[2] ?? 100_000);
const B = Number(process.argv[3] ?? 1000);
const BATCHES = Number(process.argv[4] ?? 10);
const SINGLES = Number(process.argv[5] ?? 300);
const corpus = adCorpus(3);
const texts = Array.from({ length: N }, () => corpus.next());
const dir = mkdtempSync(path.join(tmpdir(), 'nd-delbench-'));
const stores = (process.env.STORES ?? 'memory,sqlite,redis-log,redis-sets,postgres').split(',');
let redis: RedisChild | undefined;
let pg: PostgresChild | undefined;

/** The store spec of `name`, and how to measure its bytes (or undefined). */
async function specOf(name: string): Promise<{ spec: string; bytes?: (idx: NearDupIndex) => Promise<number> }> {
  if (name === 'memory') return { spec: 'memory' };
  if (name === 'sqlite') {
    const db = path.join(dir, 'd.db');
    const size = (f: string) => (existsSync(f) ? statSync(f).size : 0);
    return { spec: `sqlite:${db}`, bytes: async () => size(db) + size(`${db}-wal`) };
  }
  if (name.startsWith('redis')) {
    redis ??= await startRedis();
    return {
      spec: `${redis.url}?prefix=${name}&layout=${name.slice('redis-'.length)}&timeout=30000`,
      bytes: async (idx) => Number((await idx.stats()).storeStats.usedMemoryBytes),
    };
  }
  pg ??= await startPostgres();
  return {
    spec: `${pg.url}?schema=bench`,
    bytes: async (idx) => {
      const s = (await idx.stats()).storeStats;
      return Number(s.docsBytes) + Number(s.keysIndexBytes);
    },
  };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

console.log(`N = ${N} synthetic ads (10% near duplicates), defaults (char 5-shingles, 128 perms, forest on: 32 keys/doc); batches of ${B}; clusters kept`);
console.log('');
console.log(
  '| store | adds/s (fill, addMany) | query p50 / p99 ms | bytes/doc | deletes/s (removeMany) | batch of ' + B
    + ': median / max ms | deletes/s (remove, one at a time) |',
);
console.log('|---|---|---|---|---|---|---|');
for (const name of stores) {
  const { spec, bytes } = await specOf(name);
  const idx = await NearDupIndex.open({ store: spec });
  const before = bytes ? await bytes(idx) : 0;
  let t0 = performance.now();
  for (let i = 0; i < N; i += 1000) await idx.addMany(texts.slice(i, i + 1000).map((text, j) => ({ id: `ad-${i + j}`, text })));
  const addRate = (N / (performance.now() - t0)) * 1000;
  const perDoc = bytes ? ((await bytes(idx)) - before) / N : NaN;
  const queryMs: number[] = [];
  for (let q = 0; q < 500; q++) {
    const text = corpus.nearDupOf(texts[(q * 7919) % N]!);
    const t = performance.now();
    await idx.query(text);
    queryMs.push(performance.now() - t);
  }
  // Ids spread over the whole corpus (every k-th), so batches touch clusters everywhere.
  const step = Math.max(1, Math.floor(N / (B * BATCHES + SINGLES)));
  const victims = Array.from({ length: B * BATCHES + SINGLES }, (_, i) => `ad-${(i * step) % N}`);
  const times: number[] = [];
  t0 = performance.now();
  for (let b = 0; b < BATCHES; b++) {
    const t = performance.now();
    const r = await idx.removeMany(victims.slice(b * B, (b + 1) * B));
    times.push(performance.now() - t);
    if (r.some((x) => !x)) throw new Error(`${name}: a batch removed fewer than ${B}`);
  }
  const bulkRate = ((B * BATCHES) / (performance.now() - t0)) * 1000;
  t0 = performance.now();
  for (const id of victims.slice(B * BATCHES)) await idx.remove(id);
  const singleRate = (SINGLES / (performance.now() - t0)) * 1000;
  const left = await idx.size();
  if (left !== N - B * BATCHES - SINGLES) throw new Error(`${name}: ${left} documents left`);
  const f = (x: number) => (Number.isNaN(x) ? '–' : x.toFixed(0));
  console.log(
    `| ${name} | ${f(addRate)} | ${pct(queryMs, 0.5).toFixed(2)} / ${pct(queryMs, 0.99).toFixed(2)} | ${f(perDoc)} | ${f(bulkRate)} | ${
      pct(times, 0.5).toFixed(0)
    } / ${Math.max(...times).toFixed(0)} | ${f(singleRate)} |`,
  );
  await idx.close();
}
await redis?.stop();
await pg?.stop();
rmSync(dir, { recursive: true, force: true });
