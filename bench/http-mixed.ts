/**
 * The service under a mixed load (#51 item 4): for each store, an index of N synthetic ads is filled
 * through the library (batched addMany, timed), then `neardup serve` over it answers C clients at
 * once for S seconds, each sending 80 % queries (`POST /v1/query`, a near duplicate of an indexed
 * ad or a new ad, half each) and 20 % adds (`POST /v1/documents`, new ids). Per request kind:
 * throughput, p50 and p99 latency seen by the client, errors. One markdown row per store and kind.
 *
 *   node dist/bench/http-mixed.js [N=1000000] [seconds=60] [clients=8]
 *   STORES=file,redis,postgres (default: the embedded store a local path gets, and the two servers;
 *   also sqlite; Redis in the log layout, as recommended)
 *
 * The clients run in this process (one event loop, keep-alive connections), the server in a child
 * process: on a 2-core machine they share the cores, which the numbers include.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex } from '../src/index.js';
import { adCorpus } from './online-corpus.js';
import { startRedis } from '../test/helpers/redis.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { startServe } from '../test/helpers/procs.js';

const N = Number(process.argv[2] ?? 1_000_000);
const SECONDS = Number(process.argv[3] ?? 60);
const CLIENTS = Number(process.argv[4] ?? 8);
const STORES = (process.env.STORES ?? 'file,redis,postgres').split(',');
const BATCH = 1000;
const QUERY_SHARE = 0.8;

/** A store to bench: its spec, and how to stop what was started for it. */
interface Target {
  spec: string;
  stop(): Promise<void>;
}

async function target(kind: string, dir: string): Promise<Target> {
  if (kind === 'sqlite') return { spec: `sqlite:${path.join(dir, 'mixed.db')}`, stop: async () => {} };
  if (kind === 'file') return { spec: path.join(dir, 'mixed'), stop: async () => {} };
  if (kind === 'redis') {
    const r = await startRedis();
    return { spec: `${r.url}?layout=log`, stop: () => r.stop() };
  }
  if (kind === 'postgres') {
    const p = await startPostgres();
    return { spec: p.url, stop: () => p.stop() };
  }
  throw new Error(`unknown store ${kind} (file, sqlite, redis, postgres)`);
}

/** Fills the store with N ads (ids d0 … d(N-1)); returns the texts (queries are made from them) and the fill rate. */
async function fill(spec: string): Promise<{ texts: string[]; perSecond: number }> {
  const corpus = adCorpus(5);
  const texts = Array.from({ length: N }, () => corpus.next());
  const idx = await NearDupIndex.open({ store: spec });
  const t0 = performance.now();
  let pending: Promise<unknown> = Promise.resolve();
  for (let i = 0; i < N; i += BATCH) {
    const batch = texts.slice(i, i + BATCH).map((text, j) => ({ id: `d${i + j}`, text }));
    await pending;
    pending = idx.addMany(batch, { limit: 1 });
    if ((i / BATCH) % 100 === 0) process.stderr.write(`\r  filled ${i.toLocaleString('en-US')}`);
  }
  await pending;
  const perSecond = N / ((performance.now() - t0) / 1000);
  process.stderr.write(`\r  filled ${N.toLocaleString('en-US')} at ${Math.round(perSecond)} docs/s\n`);
  await idx.close();
  return { texts, perSecond };
}

interface Kind {
  ms: number[];
  errors: number;
}

/** C clients for S seconds; each request is a query with probability 0.8, else an add of a new ad. */
async function drive(url: string, texts: string[]): Promise<{ query: Kind; add: Kind; seconds: number }> {
  const corpus = adCorpus(11);
  const query: Kind = { ms: [], errors: 0 };
  const add: Kind = { ms: [], errors: 0 };
  let next = 0;
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const end = performance.now() + SECONDS * 1000;
  const post = async (route: string, body: unknown, k: Kind) => {
    const t = performance.now();
    try {
      const r = await fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await r.arrayBuffer();
      if (r.status !== 200) k.errors++;
      else k.ms.push(performance.now() - t);
    } catch {
      k.errors++;
    }
  };
  const client = async () => {
    while (performance.now() < end) {
      if (rand() < QUERY_SHARE) {
        const base = texts[Math.floor(rand() * texts.length)]!;
        await post('/v1/query', { text: rand() < 0.5 ? corpus.nearDupOf(base) : corpus.next(), limit: 10 }, query);
      } else await post('/v1/documents', { id: `new${next++}`, text: corpus.next(), limit: 10 }, add);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, client));
  return { query, add, seconds: (performance.now() - t0) / 1000 };
}

const pct = (xs: number[], p: number): number => {
  const s = Float64Array.from(xs).sort();
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

console.log(
  `N = ${N.toLocaleString('en-US')} synthetic ads, ${CLIENTS} clients for ${SECONDS} s each store, ${QUERY_SHARE * 100} % queries / ${
    100 - QUERY_SHARE * 100
  } % adds`,
);
console.log('');
console.log('| store | fill (docs/s) | kind | requests/s | p50 ms | p99 ms | errors |');
console.log('|---|---:|---|---:|---:|---:|---:|');
for (const kind of STORES) {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-mixed-'));
  const t = await target(kind, dir);
  try {
    process.stderr.write(`${kind}:\n`);
    const { texts, perSecond } = await fill(t.spec);
    const s = await startServe(['--store', t.spec, '--no-store-text']);
    try {
      const r = await drive(s.url, texts);
      for (const [name, k] of [['query', r.query], ['add', r.add]] as const) {
        console.log(
          `| ${kind} | ${Math.round(perSecond).toLocaleString('en-US')} | ${name} | ${Math.round(k.ms.length / r.seconds).toLocaleString('en-US')} | ${
            pct(k.ms, 50).toFixed(2)
          } | ${pct(k.ms, 99).toFixed(2)} | ${k.errors} |`,
        );
      }
    } finally {
      await s.stop();
    }
  } finally {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
