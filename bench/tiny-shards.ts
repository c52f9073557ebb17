/**
 * Many tiny shards (#30): `neardup job dedup --local` against `neardup dedup` on the same directory.
 * Writes N shards (default 1,000) holding ~1,400 short documents in all, 30 % of them edited
 * copies, runs both commands alternately, checks that their pairs are identical, and prints the
 * wall time of each run and the ratio of the medians.
 *
 * Usage: node dist/bench/tiny-shards.js [--shards 1000] [--docs 1395] [--rounds 3]
 * @module
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CorpusGenerator } from './gen.js';
import { splitmix32 } from '../src/hash/mix.js';

const argv = process.argv.slice(2);
const opt = (name: string, def: number): number => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : def;
};
const shards = opt('shards', 1000);
const docs = opt('docs', 1395);
const rounds = opt('rounds', 3);
const mainJs = path.resolve(new URL('.', import.meta.url).pathname, '../cli/main.js');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-tiny-'));
const gen = new CorpusGenerator(7);
const rnd = splitmix32(11);
const words: Int32Array[] = [];
const lines: string[] = [];
for (let i = 0; i < docs; i++) {
  const w = i > 0 && rnd() % 10 < 3 ? gen.edit(words[rnd() % i]!, 0.05, i) : gen.original(i).subarray(0, 30 + (rnd() % 30));
  words.push(w);
  lines.push(JSON.stringify({ id: `d${i}`, text: gen.render(w, i) }));
}
fs.mkdirSync(path.join(dir, 'sh'));
for (let s = 0; s < shards; s++) {
  const a = Math.floor((s * docs) / shards);
  const b = Math.floor(((s + 1) * docs) / shards);
  fs.writeFileSync(path.join(dir, 'sh', `p${String(s).padStart(5, '0')}.jsonl`), lines.slice(a, b).map((l) => l + '\n').join(''));
}

/** Runs the CLI; returns its wall time in seconds. */
function run(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [mainJs, ...args], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`neardup ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return (performance.now() - t0) / 1000;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const single: number[] = [];
const job: number[] = [];
for (let r = 0; r < rounds; r++) {
  single.push(run(['dedup', 'sh', '--id-field', 'id', '-q', '--out', 'single.tsv']));
  fs.rmSync(path.join(dir, 'work'), { recursive: true, force: true });
  job.push(run(['job', 'dedup', 'sh', '--local', '--work-dir', 'work', '--id-field', 'id', '-q', '--out', 'job.tsv']));
}
const same = fs.readFileSync(path.join(dir, 'single.tsv'), 'utf8') === fs.readFileSync(path.join(dir, 'job.tsv'), 'utf8');
console.log(
  `${shards} shards, ${docs} documents, ${fs.readFileSync(path.join(dir, 'single.tsv'), 'utf8').split('\n').length - 1} pairs; identical: ${same}; load ${
    os.loadavg()[0]!.toFixed(1)
  }`,
);
console.log(`dedup           wall ${single.map((x) => x.toFixed(2)).join(' / ')} s (median ${median(single).toFixed(2)})`);
console.log(`job dedup --local wall ${job.map((x) => x.toFixed(2)).join(' / ')} s (median ${median(job).toFixed(2)})`);
console.log(`ratio (medians) ${(median(job) / median(single)).toFixed(2)}×`);
fs.rmSync(dir, { recursive: true, force: true });
if (!same) process.exit(1);
