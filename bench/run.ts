/**
 * `npm run bench`: times each stage (normalize, shingle+fingerprint, set, signature, LSH, verify,
 * cluster) for both MinHash methods on the Kijiji file and on a generated corpus, compares the fused
 * fast path with the reference pipeline and brute force, and measures worker scaling.
 *
 * Usage: node dist/bench/run.js [--quick] [--corpus-mb 100] [--workers 1,2]
 * `--quick` uses a ~5 MB corpus and fewer repetitions (CI-sized). MB/s are MB (10^6 bytes) of UTF-8
 * input text per second of wall time; `cpu MB/s` divides by this process's CPU time instead, which
 * is the per-core figure on a machine shared with other work.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { generateCorpus } from './gen.js';
import { makeNormalizer } from '../src/text/normalize.js';
import { charShingles } from '../src/text/charShingles.js';
import { toSortedSet } from '../src/text/fingerprintSet.js';
import { createShingler, type ShingleOptions } from '../src/text/shingler.js';
import { createMinHasher, type MinHashMethod } from '../src/sketch/minhash.js';
import { createTextSigner } from '../src/sketch/textSigner.js';
import { dedup } from '../src/dedup/dedup.js';
import { bruteForcePairs } from '../src/similarity/bruteForce.js';
import { signCorpusParallel } from '../src/parallel/signCorpus.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const opt = (name: string, def: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : def;
};
const repoRoot = resolve(new URL('.', import.meta.url).pathname, '../..');
const corpusMb = Number(opt('corpus-mb', quick ? '5' : '100'));
const workerCounts = opt('workers', '1,2').split(',').map(Number);

interface Row {
  data: string;
  stage: string;
  method: string;
  mbps: number;
  cpuMbps: number;
  ms: number;
  note: string;
}
const rows: Row[] = [];

function utf8Bytes(texts: string[]): number {
  let b = 0;
  for (const t of texts) b += Buffer.byteLength(t);
  return b;
}

/** Runs fn `reps` times and keeps the fastest run (the least disturbed by other load). */
function time(fn: () => void, reps: number): { ms: number; cpuMs: number } {
  let best = { ms: Infinity, cpuMs: Infinity };
  for (let r = 0; r < reps; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    fn();
    const ms = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (ms < best.ms) best = { ms, cpuMs: (c.user + c.system) / 1000 };
  }
  return best;
}

function record(data: string, stage: string, method: string, bytes: number, t: { ms: number; cpuMs: number }, note = ''): void {
  rows.push({ data, stage, method, mbps: bytes / 1e3 / t.ms, cpuMbps: bytes / 1e3 / Math.max(t.cpuMs, 1e-9), ms: t.ms, note });
}

function stages(data: string, texts: string[], shingle: ShingleOptions, reps: number): void {
  const bytes = utf8Bytes(texts);
  const norm = makeNormalizer(shingle.normalize);
  const k = shingle.k ?? 5;
  let normalized: string[] = [];
  record(data, 'normalize', '-', bytes, time(() => (normalized = texts.map(norm)), reps));
  let fps: Uint32Array[] = [];
  record(
    data,
    'shingle+fingerprint',
    '-',
    bytes,
    time(() => (fps = normalized.map((t) => charShingles(t, k, shingle.seed ?? 0))), reps),
    'rolling hash on normalized text',
  );
  let sets: Uint32Array[] = [];
  record(data, 'set (sort+unique)', '-', bytes, time(() => (sets = fps.map((f) => toSortedSet(f.slice()))), reps));
  for (const method of ['oph', 'classic'] as MinHashMethod[]) {
    const hasher = createMinHasher({ method });
    const out = new Uint32Array(128);
    record(data, 'signature (from set)', method, bytes, time(() => sets.forEach((s) => hasher.signInto(s, out)), reps));
    const shingler = createShingler(shingle);
    const refTexts = method === 'classic' ? texts.slice(0, Math.ceil(texts.length / 4)) : texts;
    record(
      data,
      'reference pipeline (all four)',
      method,
      utf8Bytes(refTexts),
      time(() => refTexts.forEach((t) => hasher.signInto(shingler.set(t), out)), 1),
      'normalize→shingle→set→sign, original code path',
    );
    for (const wasm of [true, false]) {
      const signer = createTextSigner({ shingle, minhash: { method }, wasm });
      const sub = method === 'classic' && !wasm ? texts.slice(0, Math.ceil(texts.length / 4)) : texts;
      record(
        data,
        `fused signing (all four), ${wasm ? 'wasm' : 'js'}`,
        method,
        utf8Bytes(sub),
        time(() => sub.forEach((t) => signer.signInto(t, out)), reps),
        'createTextSigner().signInto',
      );
    }
  }
}

function pipeline(data: string, texts: string[], shingle: ShingleOptions, threshold: number, brute: boolean): void {
  const bytes = utf8Bytes(texts);
  for (const method of ['oph', 'classic'] as MinHashMethod[]) {
    const r = dedup(texts, { threshold, shingle, minhash: { method } });
    const tm = r.stats.timings;
    const note =
      `${r.stats.docs} docs, ${r.stats.candidates} candidates, ${r.stats.pairs} pairs, ${r.stats.clusters} clusters (${r.bands.bands}×${r.bands.rows})`;
    const t = (ms: number) => ({ ms, cpuMs: ms });
    record(data, 'dedup: set (normalize+shingle+sort)', method, bytes, t(tm.shingle));
    record(data, 'dedup: signature', method, bytes, t(tm.sign));
    record(data, 'dedup: LSH', method, bytes, t(tm.lsh));
    record(data, 'dedup: verify (exact)', method, bytes, t(tm.verify));
    record(data, 'dedup: cluster', method, bytes, t(tm.cluster));
    record(data, 'dedup: total', method, bytes, t(tm.total), note);
  }
  if (brute) {
    const shingler = createShingler(shingle);
    let n = 0;
    const tb = time(() => {
      const sets = texts.map((x) => shingler.set(x));
      n = bruteForcePairs(sets, threshold).length;
    }, 1);
    record(data, 'brute force (exact all pairs)', '-', bytes, tb, `${n} pairs`);
  }
}

async function parallel(data: string, texts: string[]): Promise<void> {
  const bytes = utf8Bytes(texts);
  for (const method of ['oph', 'classic'] as MinHashMethod[]) {
    for (const workers of workerCounts) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await signCorpusParallel(texts, { workers, minhash: { method } });
      const ms = performance.now() - t0;
      const c = process.cpuUsage(c0);
      // CPU time of all threads: if it stays flat as workers are added, the work parallelizes with
      // no overhead and the wall speed-up is limited only by free cores.
      record(
        data,
        `signCorpusParallel, ${workers} worker${workers > 1 ? 's' : ''}`,
        method,
        bytes,
        { ms, cpuMs: (c.user + c.system) / 1000 },
        'wall incl. worker start-up; cpu = all threads',
      );
    }
  }
}

function loadKijiji(): string[] | null {
  const file = resolve(repoRoot, 'data/dataset_rent_rome_kijiji.tsv');
  if (!existsSync(file)) return null;
  const lines = readFileSync(file, 'utf8').split('\n').slice(1).filter((l) => l.length > 0);
  return lines.map((l) => {
    const f = l.split('\t');
    return `${f[0] ?? ''} ${f[1] ?? ''}`;
  });
}

function loadCorpus(): { name: string; texts: string[] } {
  const docs = Math.round((corpusMb * 1e6) / 1540);
  const file = resolve(repoRoot, `bench/data/corpus-${docs}.tsv`);
  if (!existsSync(file)) generateCorpus({ docs, out: file });
  const texts = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => l.slice(l.indexOf('\t') + 1));
  return { name: `generated ${(utf8Bytes(texts) / 1e6).toFixed(0)} MB`, texts };
}

const started = new Date().toISOString();
const load0 = loadavg()[0]!;
const reps = quick ? 1 : 2;
const kijiji = loadKijiji();
if (kijiji) {
  stages('kijiji', kijiji, {}, reps * 2);
  pipeline('kijiji (char 10, seed000, t 0.8)', kijiji, { k: 10, normalize: { preset: 'seed000' } }, 0.8, true);
}
const corpus = loadCorpus();
stages(corpus.name, corpus.texts, {}, reps);
pipeline(corpus.name, quick ? corpus.texts : corpus.texts.slice(0, 20000), {}, 0.8, false);
if (quick) pipeline(`${corpus.name}, first 1000 docs`, corpus.texts.slice(0, 1000), {}, 0.8, true);
await parallel(corpus.name, corpus.texts);

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);
console.log(
  `neardup bench ${quick ? '(quick) ' : ''}${started}; ${cpus().length} cores (${cpus()[0]?.model ?? '?'}); load average at start ${load0.toFixed(2)}, at end ${
    loadavg()[0]!.toFixed(2)
  }; node ${process.version}`,
);
console.log(`| data | stage | method | MB/s | cpu MB/s | ms | note |`);
console.log(`|---|---|---|---:|---:|---:|---|`);
for (const r of rows) {
  const cpu = Number.isFinite(r.cpuMbps) ? r.cpuMbps.toFixed(1) : '-';
  console.log(`| ${r.data} | ${pad(r.stage, 10)} | ${r.method} | ${lpad(r.mbps.toFixed(1), 7)} | ${lpad(cpu, 7)} | ${r.ms.toFixed(0)} | ${r.note} |`);
}
