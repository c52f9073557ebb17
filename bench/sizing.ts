/**
 * Store sizing (issue 7, docs/operations.md): bytes per document of the memory, SQLite and Redis
 * stores for N synthetic ads (~300 characters), with the default parameters, exact vs estimate
 * verification, with and without the forest. Needs redis-server on PATH for the Redis rows.
 *
 *   node --expose-gc dist/bench/sizing.js [N=20000]
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { NearDupIndex, type NearDupIndexOptions } from '../src/index.js';
import { adCorpus } from './online-corpus.js';

const N = Number(process.argv[2] ?? 20000);
const corpus = adCorpus(5);
const docs = Array.from({ length: N }, (_, i) => ({ id: `ad-${String(i).padStart(8, '0')}`, text: corpus.next(), meta: { i } }));
const avgChars = docs.reduce((s, d) => s + d.text.length, 0) / N;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

async function fill(idx: NearDupIndex) {
  for (let i = 0; i < N; i += 1000) await idx.addMany(docs.slice(i, i + 1000));
}

if (process.argv[3] === 'mem') {
  // Child: the memory store alone, in a fresh process, so earlier variants' garbage does not blur it.
  const opts = JSON.parse(process.argv[4]!) as NearDupIndexOptions;
  gc();
  gc();
  const m0 = process.memoryUsage();
  const mem = await NearDupIndex.open(opts);
  await fill(mem);
  gc();
  gc();
  const m1 = process.memoryUsage();
  // Resident bytes, not heapUsed + arrayBuffers: the store's arrays have room (src/common/roomArrays.ts) that takes no memory until used.
  console.log(m1.rss - m0.rss);
  process.exit(0);
}

const port = await new Promise<number>((res) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => res(p));
  });
});
const redisChild = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 500));
const redis = new Redis(port, '127.0.0.1');
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);

const variants: [string, NearDupIndexOptions][] = [
  ['exact, forest (default)', {}],
  ['exact, no forest', { forest: false }],
  ['estimate, forest', { verify: 'estimate' }],
  ['estimate, no forest', { verify: 'estimate', forest: false }],
];
console.log(
  `# bytes per document, ${N} ads of ${
    avgChars.toFixed(0)
  } characters on average (ids 11 chars, meta {"i":n}), k=5 char shingles, 128 hashes (node ${process.version}, ${new Date().toISOString()})`,
);
console.log('| variant | keys/doc | memory (heap + buffers) | SQLite file | Redis log: used_memory + table per process | Redis sets: used_memory |');
console.log('|---|---|---|---|---|---|');
for (const [name, opts] of variants) {
  const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), String(N), 'mem', JSON.stringify(opts)], { encoding: 'utf8' });
  const memBytes = Number(child.stdout.trim());
  const probe = await NearDupIndex.open(opts);
  const keys = probe.manifest.keysPerDoc;
  await probe.close();

  const dir = mkdtempSync(path.join(tmpdir(), 'nd-size-'));
  const file = path.join(dir, 's.db');
  const sq = await NearDupIndex.open({ ...opts, store: `sqlite:${file}` });
  await fill(sq);
  await sq.close(); // checkpoints the WAL into the file
  const sqBytes = statSync(file).size;
  rmSync(dir, { recursive: true, force: true });

  const redisBytes: number[] = [];
  let table = 0;
  for (const layout of ['log', 'sets']) {
    await redis.flushall();
    const r0 = await usedMemory();
    const rd = await NearDupIndex.open({ ...opts, store: `redis://127.0.0.1:${port}?layout=${layout}` });
    await fill(rd);
    redisBytes.push((await usedMemory()) - r0);
    if (layout === 'log') table = Number((await rd.stats()).storeStats.localTableBytes);
    await rd.close();
  }
  const per = (b: number) => `${(b / N).toFixed(0)} B`;
  console.log(`| ${name} | ${keys} | ${per(memBytes)} | ${per(sqBytes)} | ${per(redisBytes[0]!)} + ${per(table)} | ${per(redisBytes[1]!)} |`);
}
await redis.quit();
redisChild.kill('SIGKILL');
