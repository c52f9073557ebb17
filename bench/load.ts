/**
 * Load (issue 7): `neardup serve` as a child process on loopback, driven by two autocannon runs at
 * once, one adding documents and one querying, for DURATION seconds. Reports errors, non-2xx,
 * throughput, latency percentiles and the server's RSS sampled every second (is it flat?).
 *
 *   node dist/bench/load.js [store=sqlite|memory] [duration=60] [connections=8]
 *
 * Adds cycle over a fixed pool of 20,000 ids (an id already indexed is replaced), so the index size
 * stays bounded and a growing RSS would mean a leak rather than a bigger index.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { adCorpus } from './online-corpus.js';
import { startServe } from '../test/helpers/procs.js';

const storeKind = process.argv[2] ?? 'sqlite';
const duration = Number(process.argv[3] ?? 60);
const connections = Number(process.argv[4] ?? 8);
const POOL = 20000;

const dir = mkdtempSync(path.join(tmpdir(), 'nd-load-'));
const store = storeKind === 'sqlite' ? `sqlite:${path.join(dir, 'load.db')}` : 'memory';
const serve = await startServe(['--store', store]);
const { url, child } = serve;

const rssMB = (): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

const corpus = adCorpus(21);
const texts = Array.from({ length: 5000 }, () => corpus.next());
// Warm up: fill the id pool once, in batches.
for (let i = 0; i < POOL; i += 500) {
  const documents = Array.from({ length: 500 }, (_, j) => ({ id: `p${i + j}`, text: texts[(i + j) % texts.length]! + ` v${i + j}` }));
  const r = await fetch(`${url}/v1/documents:batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ documents }) });
  if (r.status !== 200) throw new Error(`warm-up failed: ${r.status} ${await r.text()}`);
}
const rss: number[] = [rssMB()];
const sampler = setInterval(() => rss.push(rssMB()), 1000);

let addN = 0;
let queryN = 0;
const json = { 'content-type': 'application/json' };
const adds = autocannon({
  url,
  connections,
  duration,
  requests: [
    {
      method: 'POST',
      path: '/v1/documents',
      headers: json,
      setupRequest: (req) => {
        const i = addN++;
        return { ...req, body: JSON.stringify({ id: `p${i % POOL}`, text: corpus.nearDupOf(texts[i % texts.length]!), meta: { i } }) };
      },
    },
  ],
});
const queries = autocannon({
  url,
  connections,
  duration,
  requests: [
    {
      method: 'POST',
      path: '/v1/query',
      headers: json,
      setupRequest: (req) => {
        const i = queryN++;
        return {
          ...req,
          body: JSON.stringify(i % 5 === 0 ? { text: texts[i % texts.length]!, topK: 5 } : { text: corpus.nearDupOf(texts[i % texts.length]!) }),
        };
      },
    },
  ],
});
const [a, q] = await Promise.all([adds, queries]);
clearInterval(sampler);
rss.push(rssMB());
const stats = (await (await fetch(`${url}/v1/stats`)).json()) as { documents: number };
await serve.stop();
rmSync(dir, { recursive: true, force: true });

const row = (name: string, r: autocannon.Result) =>
  `| ${name} | ${r.requests.total} | ${
    r.requests.average.toFixed(0)
  }/s | ${r.errors} | ${r.timeouts} | ${r.non2xx} | ${r.latency.p50} | ${r.latency.p90} | ${r.latency.p99} | ${r.latency.max} |`;
const tenth = Math.max(1, Math.floor(rss.length / 10));
const early = rss.slice(tenth, 2 * tenth);
const late = rss.slice(-tenth);
const avg = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
console.log(
  `# load: ${storeKind} store, ${duration} s, ${connections}+${connections} connections, ${POOL} ids replaced in a cycle (node ${process.version}, ${
    new Date().toISOString()
  })`,
);
console.log('| stream | requests | rate | errors | timeouts | non-2xx | p50 ms | p90 ms | p99 ms | max ms |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
console.log(row('POST /v1/documents', a));
console.log(row('POST /v1/query (20% topK 5)', q));
console.log(
  `\nserver RSS: after warm-up ${rss[0]!.toFixed(0)} MB, 2nd tenth avg ${avg(early).toFixed(0)} MB, last tenth avg ${avg(late).toFixed(0)} MB, max ${
    Math.max(...rss).toFixed(0)
  } MB; documents at the end: ${stats.documents}`,
);
console.log(`RSS samples (MB, 1/s): ${rss.map((x) => x.toFixed(0)).join(' ')}`);
const failed = a.errors + a.non2xx + a.timeouts + q.errors + q.non2xx + q.timeouts;
if (failed) {
  console.error(`FAILED: ${failed} errors/timeouts/non-2xx`);
  process.exitCode = 1;
}
