/**
 * The planner's error (issue #36 item 3): `neardup job plan … --estimate` against the real job
 * (`job dedup --local`) on the same shards. Prints, as Markdown, the predicted and measured
 * documents, candidate and verified pairs, and per stage the bytes written and the peak memory of
 * the largest task (from the task markers), with the error of each.
 *
 * Usage: node dist/bench/estimate.js --corpus long|short [--docs N] [--shards 32]
 *   long:  bench/data/cost-<N>.jsonl (as bench/shard-cost.ts makes it: ~1.6 KB documents, 30 % planted copies, chains), default N 1,000,000
 *   short: 10–24 word documents (bench/gen.ts shortCorpus: ~150 B, 30 % edited copies), default N 2,000,000
 * @module
 */
import { createReadStream, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { spawnSync } from 'node:child_process';
import { generateCorpus, shortCorpus } from './gen.js';
import { opt } from './util.js';

const repoRoot = resolve(new URL('.', import.meta.url).pathname, '../..');
const mainJs = resolve(repoRoot, 'dist/cli/main.js');
const kind = opt('corpus', 'long');
const docs = Number(opt('docs', kind === 'short' ? '2000000' : '1000000'));
const S = Number(opt('shards', '32'));
const data = resolve(repoRoot, 'bench/data');
mkdirSync(data, { recursive: true });
const shardDir = join(data, `estimate-${kind}-${docs}.${S}`);

/** Writes the corpus as S consecutive JSONL shards (the long one streamed: 1.6 GB is past one string). */
async function makeShards(): Promise<void> {
  const tmp = `${shardDir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const name = (s: number): string => join(tmp, `part-${String(s).padStart(5, '0')}.jsonl`);
  if (kind === 'short') {
    const lines = shortCorpus(docs).map((t, i) => JSON.stringify({ id: `s${i}`, text: t }));
    const per = Math.ceil(lines.length / S);
    for (let s = 0; s < S; s++) writeFileSync(name(s), lines.slice(s * per, (s + 1) * per).map((l) => `${l}\n`).join(''));
  } else {
    const corpus = join(data, `cost-${docs}.jsonl`);
    if (!existsSync(corpus)) generateCorpus({ docs, out: corpus, dupRate: 0.3, chainRate: 0.2, format: 'jsonl' });
    const per = Math.ceil(docs / S);
    let buf: string[] = [];
    let s = 0;
    for await (const line of createInterface({ input: createReadStream(corpus, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity })) {
      if (line === '') continue;
      buf.push(`${line}\n`);
      if (buf.length === per) {
        writeFileSync(name(s++), buf.join(''));
        buf = [];
      }
    }
    if (buf.length > 0) writeFileSync(name(s), buf.join(''));
  }
  renameSync(tmp, shardDir);
}
if (!existsSync(shardDir)) {
  console.error(`writing ${S} shards to ${shardDir} …`);
  await makeShards();
}

function neardup(args: string[]): string {
  const r = spawnSync(process.execPath, [mainJs, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`neardup ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

interface Est {
  docs: number;
  candidates: number;
  pairs: number;
  sampledBytes: number;
  bytes: number;
  sampleMs: number;
  stages: { stage: string; bytesWritten: number; peakMemory: number }[];
}

const work = join(data, `estimate-${kind}-run`);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
console.log(`# ${kind} corpus: ${docs} documents in ${S} JSONL shards; load at start ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const t0 = performance.now();
const plan = JSON.parse(neardup(['job', 'plan', shardDir, '--id-field', 'id', '--work-dir', join(work, 'plan'), '--estimate', '--json'])) as { estimate: Est };
const est = plan.estimate;
const estMs = performance.now() - t0;
const t1 = performance.now();
const real = JSON.parse(
  neardup(['job', 'dedup', shardDir, '--id-field', 'id', '--local', '--work-dir', join(work, 'job'), '--out', join(work, 'pairs.tsv'), '--json']),
) as { input: { docs: number }; candidates: number; pairs: number };
const realMs = performance.now() - t1;

/** Per stage from the real job's markers: bytes written (summed) and the largest task's peak RSS. */
function measured(stage: string): { written: number; peak: number } {
  const dir = join(work, 'job', stage);
  let written = 0;
  let peak = 0;
  for (const t of existsSync(dir) ? readdirSync(dir).filter((n) => /^\d+$/.test(n)) : []) {
    const m = JSON.parse(readFileSync(join(dir, t, '_SUCCESS.json'), 'utf8')) as { stats: { bytesWritten: number; peakRss: number } };
    written += m.stats.bytesWritten;
    peak = Math.max(peak, m.stats.peakRss);
  }
  return { written, peak };
}

const err = (p: number, a: number): string => (a === 0 ? '—' : `${p >= a ? '+' : ''}${((100 * (p - a)) / a).toFixed(1)} %`);
const mbs = (b: number): string => `${(b / 1e6).toFixed(1)} MB`;
console.log(
  `\nSample: ${mbs(est.sampledBytes)} of ${mbs(est.bytes)}; the estimate took ${(estMs / 1000).toFixed(1)} s, the job ${(realMs / 1000).toFixed(1)} s.\n`,
);
console.log('| quantity | predicted | measured | error |');
console.log('|---|---|---|---|');
console.log(`| documents | ${est.docs} | ${real.input.docs} | ${err(est.docs, real.input.docs)} |`);
console.log(`| candidate pairs | ${est.candidates} | ${real.candidates} | ${err(est.candidates, real.candidates)} |`);
console.log(`| verified pairs | ${est.pairs} | ${real.pairs} | ${err(est.pairs, real.pairs)} |`);
let pw = 0;
let mw = 0;
for (const s of est.stages) {
  const m = measured(s.stage);
  pw += s.bytesWritten;
  mw += m.written;
  console.log(`| ${s.stage}: written | ${mbs(s.bytesWritten)} | ${mbs(m.written)} | ${err(s.bytesWritten, m.written)} |`);
  console.log(`| ${s.stage}: peak memory of the largest task | ${mbs(s.peakMemory)} | ${mbs(m.peak)} | ${err(s.peakMemory, m.peak)} |`);
}
console.log(`| disk: all stages written | ${mbs(pw)} | ${mbs(mw)} | ${err(pw, mw)} |`);
