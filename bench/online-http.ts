/**
 * HTTP insert throughput of `neardup serve` on loopback, measured with autocannon.
 * Starts the server as a child process (one core) and autocannon in this process (the other).
 * Usage: node dist/bench/online-http.js [seconds=10] [connections=32] [store=memory]
 * (store: memory, sqlite, or any store spec, e.g. a file store a bench kept; the ids added, `http0`…, are
 * new to a store bench/file-store.ts filled); BATCH=n uses the batch endpoint, WORKERS=n serve --workers.
 * The bodies: 20,000 short ads (bench/online-corpus.ts, ~350 characters), sent again and again, so that
 * a run's adds soon match the copies earlier ones made; or with DOCS=S, documents S, S+1, … of
 * bench/file-store.ts's corpus (~1.5 KB, every tenth an edited copy of one five before it), enough
 * for the run not to send one twice: new to a store that bench filled, for a start S past its
 * documents and the earlier runs' (each run prints the next S). RATE=r sends r requests a second in
 * all (autocannon's `overallRate`, its latencies corrected for coordinated omission) instead of each
 * client sending its next request as soon as the last is answered: the latency at a given load,
 * where the default measures it at the most the server takes.
 */
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import autocannon from 'autocannon';
import { adCorpus } from './online-corpus.js';
import { CorpusGenerator, storeDocument } from './gen.js';
import { startServe } from '../test/helpers/procs.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 32);
const storeArg = process.argv[4] ?? 'memory';
const dir = mkdtempSync(path.join(tmpdir(), 'nd-httpbench-'));
const store = storeArg === 'sqlite' ? `sqlite:${path.join(dir, 'b.db')}` : storeArg;

const serve = await startServe(['--store', store, '--workers', process.env.WORKERS ?? '0']);
const { url } = serve;

// Pre-generated bodies: autocannon's own CPU goes to HTTP, not to making texts.
const docsFrom = process.env.DOCS === undefined ? undefined : Number(process.env.DOCS);
const bodies = docsFrom === undefined ? adBodies(20000) : docBodies(docsFrom, seconds * 6000);

/** The id of the i-th add: `http<i>` (the same ids every run: a run after the first replaces them), or the document's own `d<S+i>`. */
function idOf(i: number): string {
  return docsFrom === undefined ? `http${i}` : `d${docsFrom + i}`;
}

function adBodies(n: number): string[] {
  const corpus = adCorpus(11);
  return Array.from({ length: n }, () => corpus.next());
}

/** Documents `from` … `from + n - 1` of bench/file-store.ts's corpus (its generator's seed, 11). */
function docBodies(from: number, n: number): string[] {
  const gen = new CorpusGenerator(11);
  return Array.from({ length: n }, (_, j) => storeDocument(gen, from + j));
}
let n = 0;
/** Adds sent (n also counts queries). */
let adds = 0;
const batchSize = Number(process.env.BATCH ?? 0);
const rate = process.env.RATE === undefined ? {} : { overallRate: Number(process.env.RATE) };
if (rate.overallRate !== undefined && !(rate.overallRate > 0))
  throw new RangeError(`RATE must be a number of requests a second above 0, not "${process.env.RATE}"`);

async function run(title: string, opts: Omit<autocannon.Options, 'url'>): Promise<autocannon.Result> {
  const r = await autocannon({ url, connections, duration: seconds, pipelining: 1, ...rate, ...opts });
  const docsPerReq = title.includes('batch') ? batchSize : 1;
  console.log(
    `| ${title} | ${store} | ${connections} | ${r.requests.average.toFixed(0)} | ${
      (r.requests.average * docsPerReq).toFixed(0)
    } | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} |`,
  );
  return r;
}

console.log(
  `${
    rate.overallRate === undefined ? '' : `at ${rate.overallRate} requests/s\n`
  }| workload | store | connections | requests/s | documents/s | p50 ms | p99 ms | non-2xx |`,
);
console.log('|---|---|---|---|---|---|---|---|');
await run(batchSize ? `POST /v1/documents:batch (${batchSize} per request)` : 'POST /v1/documents', {
  requests: [
    {
      method: 'POST',
      path: batchSize ? '/v1/documents:batch' : '/v1/documents',
      headers: { 'content-type': 'application/json' },
      setupRequest: (req) => {
        if (batchSize) {
          const documents = [];
          for (let j = 0; j < batchSize; j++, n++, adds++) documents.push({ id: idOf(n), text: bodies[n % bodies.length]! });
          return { ...req, body: JSON.stringify({ documents }) };
        }
        const i = n++;
        adds++;
        return { ...req, body: JSON.stringify({ id: idOf(i), text: bodies[i % bodies.length]! }) };
      },
    },
  ],
});
await run('POST /v1/query', {
  requests: [
    {
      method: 'POST',
      path: '/v1/query',
      headers: { 'content-type': 'application/json' },
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: bodies[n++ % bodies.length]! }) }),
    },
  ],
});
if (docsFrom !== undefined)
  console.log(`${adds} documents sent (${bodies.length} made${adds > bodies.length ? ': some sent twice' : ''}); the next run's DOCS=${docsFrom + adds}`);
await serve.stop();
rmSync(dir, { recursive: true, force: true });
