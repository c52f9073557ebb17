/**
 * Issue #14 target 5: `neardup dedup` on short documents at a low threshold (process start to
 * exit, its defaults: char 5-shingles, `--candidates auto`, 2 workers) against a plain native
 * exact join with prefix filtering (bench/native/ppjoin.cpp, built here with g++) on the same
 * shingle sets, with as many threads as cores; only the join itself is timed on the native side
 * (not reading its input, not shingling). Runs alternate, `--rounds` each; medians are reported.
 * The native join's pairs are checked against our own exact join (`prefixJoin`): same count, same
 * checksum; dedup's recall is measured against them.
 *
 * Usage: node dist/bench/short-join.js [--docs 60000] [--threshold 0.5] [--rounds 3] [--threads 2]
 * @module
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shortCorpus } from './gen.js';
import { createShingler } from '../src/text/shingler.js';
import { prefixJoin } from '../src/similarity/prefixJoin.js';

const argv = process.argv.slice(2);
const opt = (name: string, def: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : def;
};
const n = Number(opt('docs', '60000'));
const t = Number(opt('threshold', '0.5'));
const rounds = Number(opt('rounds', '3'));
const threads = Number(opt('threads', String(availableParallelism())));
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'neardup-short-'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const key = (a: number, b: number): bigint => (BigInt(Math.min(a, b)) * 1000003n + BigInt(Math.max(a, b))) & 0xffffffffffffffffn;

try {
  const texts = shortCorpus(n);
  const corpus = join(dir, 'short.jsonl');
  writeFileSync(corpus, texts.map((text, i) => JSON.stringify({ id: String(i), text })).join('\n') + '\n');
  // The sets dedup verifies with (char 5-shingles, default normalization), for both joins.
  const sets = texts.map((x) => createShingler().set(x));
  const words = 1 + sets.reduce((a, s) => a + 1 + s.length, 0);
  const bin = new Uint32Array(words);
  bin[0] = n;
  let at = 1;
  for (const s of sets) {
    bin[at++] = s.length;
    bin.set(s, at);
    at += s.length;
  }
  const setsFile = join(dir, 'sets.bin');
  writeFileSync(setsFile, bin);
  const truth = prefixJoin(sets, t);
  let sum = 0n;
  const truthKeys = new Set<string>();
  for (const p of truth.pairs) {
    sum = (sum + key(p.a, p.b)) & 0xffffffffffffffffn;
    truthKeys.add(`${Math.min(p.a, p.b)},${Math.max(p.a, p.b)}`);
  }
  const avg = texts.reduce((a, x) => a + x.length, 0) / n;
  console.log(
    `${n} short documents (${avg.toFixed(0)} chars on average), t = ${t}; exact pairs ${truth.pairs.length}; load average ${loadavg()[0]!.toFixed(2)}`,
  );

  const exe = join(dir, 'ppjoin');
  const cc = spawnSync('g++', ['-O3', '-march=native', '-pthread', '-o', exe, join(root, 'bench/native/ppjoin.cpp')], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`g++ failed: ${cc.stderr || cc.error}`);

  const ours: number[] = [];
  const native: number[] = [];
  let found = 0;
  let ourPairs = 0;
  for (let r = 0; r < rounds; r++) {
    const out = join(dir, 'pairs.jsonl');
    const t0 = performance.now();
    const run = spawnSync(process.execPath, [join(root, 'dist/cli/main.js'), 'dedup', corpus, '-k', '5', '--threshold', String(t), '-q', '--out', out], {
      encoding: 'utf8',
    });
    ours.push((performance.now() - t0) / 1000);
    if (run.status !== 0) throw new Error(`dedup failed: ${run.stderr}`);
    const lines = readFileSync(out, 'utf8').split('\n').filter((l) => l.length > 0);
    ourPairs = lines.length;
    found = 0;
    for (const l of lines) {
      const p = JSON.parse(l) as { a: string; b: string };
      const a = Number(p.a);
      const b = Number(p.b);
      if (truthKeys.has(`${Math.min(a, b)},${Math.max(a, b)}`)) found++;
    }
    const nat = spawnSync(exe, [setsFile, String(t), String(threads)], { encoding: 'utf8' });
    const m = /pairs=(\d+) candidates=(\d+) seconds=([\d.]+) checksum=(\d+)/.exec(nat.stdout);
    if (!m) throw new Error(`native join failed: ${nat.stderr}`);
    if (Number(m[1]) !== truth.pairs.length || BigInt(m[4]!) !== sum) {
      throw new Error(`native join disagrees with prefixJoin: ${m[1]} pairs (checksum ${m[4]}) against ${truth.pairs.length} (${sum})`);
    }
    native.push(Number(m[3]));
    console.log(
      `round ${r + 1}: dedup ${ours.at(-1)!.toFixed(2)} s (${ourPairs} pairs) | native join ${m[3]} s on ${threads} threads (${m[1]} pairs, ${
        m[2]
      } candidates)`,
    );
  }
  const o = median(ours);
  const x = median(native);
  console.log(
    `median: dedup ${o.toFixed(2)} s end to end, native join ${x.toFixed(2)} s (join only) → ${(o / x).toFixed(2)}× ; dedup recall ${
      (found / truth.pairs.length).toFixed(4)
    } (${found} of ${truth.pairs.length}), precision ${(found / Math.max(1, ourPairs)).toFixed(4)}`,
  );
  console.log(`load average at end ${loadavg()[0]!.toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
