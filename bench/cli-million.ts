/**
 * End-to-end `neardup dedup` (the CLI binary, as a user runs it) on a large generated corpus:
 * wall time and peak RSS of the process (GNU time), and recall of the planted near-duplicate pairs
 * whose exact Jaccard is at or above the threshold.
 *
 * Usage: node dist/bench/cli-million.js [--docs 1000000] [--workers 2] [--threshold 0.8]
 * The corpus (`<id>⇥<text>` lines, bench/data/m<docs>.tsv) is generated first when missing.
 * @module
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadavg } from 'node:os';
import { spawnSync } from 'node:child_process';
import { generateCorpus } from './gen.js';
import { plantedRecall } from './plantedRecall.js';

const argv = process.argv.slice(2);
const opt = (name: string, def: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : def;
};
const repoRoot = resolve(new URL('.', import.meta.url).pathname, '../..');
const docs = Number(opt('docs', '1000000'));
const workers = opt('workers', '2');
const threshold = Number(opt('threshold', '0.8'));
const file = resolve(repoRoot, `bench/data/m${docs}.tsv`);
if (!existsSync(file) || !existsSync(`${file}.truth.tsv`)) {
  console.log(`generating ${file} …`);
  generateCorpus({ docs, out: file });
}
const out = resolve(repoRoot, `bench/data/m${docs}.pairs.tsv`);
const load0 = loadavg()[0]!;
const args = [
  '-f',
  '%e %M',
  process.execPath,
  resolve(repoRoot, 'dist/cli/main.js'),
  'dedup',
  file,
  '--format',
  'idtext',
  '--threshold',
  String(threshold),
  '--workers',
  workers,
  '--out',
  out,
];
const r = spawnSync('/usr/bin/time', args, { encoding: 'utf8', maxBuffer: 1 << 26 });
if (r.status !== 0) {
  console.error(r.stderr);
  process.exit(1);
}
const [wall, rssKb] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number];
console.log(r.stderr.trim().split('\n').slice(0, -1).join('\n'));

const pairs: { a: number; b: number }[] = [];
for (const l of readFileSync(out, 'utf8').split('\n')) {
  if (!l) continue;
  const [a, b] = l.split('\t');
  pairs.push({ a: Number(a), b: Number(b) });
}
const { planted, missed: missedCount, missedAbove, foundPlanted } = await plantedRecall(file, pairs, threshold);
const missed = { length: missedCount };
console.log(`\nneardup dedup ${file} --format idtext --threshold ${threshold} --workers ${workers}`);
console.log(
  `docs ${docs}; wall ${wall.toFixed(1)} s; peak RSS ${(rssKb / 1024).toFixed(0)} MB; load average at start ${load0.toFixed(2)}, at end ${
    loadavg()[0]!.toFixed(2)
  }`,
);
console.log(
  `planted ${planted.length}; found ${foundPlanted}; missed ${missed.length}, of which ${missedAbove} have Jaccard ≥ ${threshold}; recall of planted pairs ≥ threshold: ${
    (foundPlanted / (foundPlanted + missedAbove)).toFixed(5)
  }`,
);
rmSync(out, { force: true });
