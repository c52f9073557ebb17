/**
 * Test helper for sharded jobs: a corpus with planted near copies written as shards of mixed formats,
 * the same documents as one JSONL file (for single-process `neardup dedup`), and `neardup worker`
 * child processes, each in its own working directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { leashed } from './leash.js';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { CorpusGenerator, EDIT_RATES } from '../../bench/gen.js';
import { splitmix32 } from '../../src/hash/mix.js';
import { mainJs, neardup, tmpDir } from '../cliUtil.js';
import assert from 'node:assert/strict';
import { writeParquet, zstd } from './formats.js';
import { openInput } from '../../src/io/read/read.js';

/** A document with its id. */
export interface Doc {
  id: string;
  text: string;
}

/**
 * `n` documents, a fraction `dupRate` of them edited copies of an earlier document (anywhere
 * before them, so copies cross shards), deterministic in `seed`. Words per document are few
 * (≈ 40) to keep tests fast.
 */
export function plantedDocs(n: number, dupRate: number, seed: number, prefix = 'd'): Doc[] {
  const gen = new CorpusGenerator(seed);
  const rnd = splitmix32(seed ^ 0x2468);
  const words: Int32Array[] = [];
  const salts: number[] = [];
  const docs: Doc[] = [];
  for (let i = 0; i < n; i++) {
    let w: Int32Array;
    // A copy keeps its source's punctuation (render salt), as a copied page would.
    let salt = i;
    if (i > 0 && rnd() % 1000 < dupRate * 1000) {
      const src = rnd() % i;
      w = gen.edit(words[src]!, EDIT_RATES[rnd() % EDIT_RATES.length]!, seed * 1000003 + i);
      salt = salts[src]!;
    } else w = gen.original(seed * 7919 + i).subarray(0, 40 + (rnd() % 40));
    words.push(w);
    salts.push(salt);
    docs.push({ id: `${prefix}${i}`, text: gen.render(w, salt) });
  }
  return docs;
}

/** Shard formats the tests mix. */
export type ShardFormat = 'jsonl' | 'jsonl.gz' | 'jsonl.zst' | 'parquet';

/** JSONL lines of documents. */
export function jsonl(docs: readonly Doc[]): string {
  return docs.map((d) => JSON.stringify(d) + '\n').join('');
}

/** Writes `docs` as `shards` shards (formats round-robin) under `dir`; returns their paths in order. Parquet shards have several row groups. */
export async function writeShards(dir: string, docs: readonly Doc[], shards: number, formats: readonly ShardFormat[]): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  const per = Math.ceil(docs.length / shards);
  const paths: string[] = [];
  for (let s = 0; s < shards; s++) {
    const slice = docs.slice(s * per, (s + 1) * per);
    const fmt = formats[s % formats.length]!;
    const file = path.join(dir, `part-${String(s).padStart(4, '0')}.${fmt}`);
    if (fmt === 'parquet') {
      await writeParquet(
        file,
        [{ name: 'id', data: slice.map((d) => d.id), type: 'STRING' }, { name: 'text', data: slice.map((d) => d.text), type: 'STRING' }],
        'SNAPPY',
        25,
      );
    } else {
      const part = jsonl(slice);
      fs.writeFileSync(file, fmt.endsWith('.gz') ? zlib.gzipSync(part) : fmt.endsWith('.zst') ? await zstd(part) : part);
    }
    paths.push(file);
  }
  return paths;
}

/** The ids and texts of any input (a file or a directory of shards), read through the io layer. */
export async function readDocs(file: string): Promise<Doc[]> {
  const input = await openInput(file, { fields: { id: 'id', text: ['text'] } });
  const out: Doc[] = [];
  for await (const r of input.records) out.push({ id: r.id!, text: r.text });
  return out;
}

/** A `neardup worker` child process. */
export interface WorkerChild {
  child: ChildProcess;
  /** Its stderr so far. */
  log(): string;
  /** Resolves when its log matches `re` (checked as lines arrive). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGKILL and wait for exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `neardup worker --redis url` in its own working directory `cwd`. */
export function startWorker(url: string, cwd: string, extraArgs: string[] = [], env: Record<string, string> = {}): WorkerChild {
  fs.mkdirSync(cwd, { recursive: true });
  const child = spawn(...leashed(process.execPath, [mainJs, 'worker', '--redis', url, ...extraArgs]), {
    cwd,
    env: { ...process.env, NEARDUP_DEBUG: '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stderr!.on('data', (d: Buffer) => {
    log += d.toString();
    for (let i = waiters.length - 1; i >= 0; i--) {
      const m = log.match(waiters[i]!.re);
      if (m) {
        waiters[i]!.resolve(m);
        waiters.splice(i, 1);
      }
    }
  });
  return {
    child,
    log: () => log,
    waitFor(re, timeoutMs = 60000) {
      const m = log.match(re);
      if (m) return Promise.resolve(m);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`worker log never matched ${re}:\n${log}`)), timeoutMs);
        waiters.push({ re, resolve: (x) => (clearTimeout(t), resolve(x)) });
      });
    },
    kill(signal = 'SIGKILL') {
      return new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      });
    },
  };
}

/** Sorted non-empty lines. */
export function sortedLines(s: string): string[] {
  return s.split('\n').filter((l) => l !== '').sort();
}

/** A planted corpus cut into shards of every format, with single-process dedup's pairs and clusters of it. */
export interface ShardedCorpus {
  dir: string;
  docs: Doc[];
  shardDir: string;
  /** `neardup dedup`'s pair lines of the concatenation, sorted. */
  singlePairs: string[];
  /** `neardup dedup --output clusters`'s lines, sorted. */
  singleClusters: string[];
}

/** The sharded jobs' test corpus (1,800 documents, 35 % planted copies) in `shards` shards of `formats`, in a new temp dir. */
export async function shardedCorpus(shards: number, formats: readonly ShardFormat[]): Promise<ShardedCorpus> {
  const dir = tmpDir();
  const docs = plantedDocs(1800, 0.35, 11);
  const shardDir = path.join(dir, 'shards');
  await writeShards(shardDir, docs, shards, formats);
  fs.writeFileSync(path.join(dir, 'all.jsonl'), jsonl(docs));
  const p = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '--out', 'single.tsv', '-q'], { cwd: dir });
  assert.equal(p.code, 0, p.stderr);
  const c = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'clusters', '--out', 'single.jsonl', '-q'], { cwd: dir });
  assert.equal(c.code, 0, c.stderr);
  const singlePairs = sortedLines(fs.readFileSync(path.join(dir, 'single.tsv'), 'utf8'));
  const singleClusters = sortedLines(fs.readFileSync(path.join(dir, 'single.jsonl'), 'utf8'));
  // The corpus must be a real test: many pairs, clusters across shards.
  assert.ok(singlePairs.length > 300, `only ${singlePairs.length} pairs`);
  return { dir, docs, shardDir, singlePairs, singleClusters };
}

/**
 * A corpus with one giant chain (each link rewrites a word of the one before, some links with an
 * exact copy), `chains` shorter chains (default 30) and `singles` singles (default 200), shuffled;
 * each document has a `score` for `--keep max:score`.
 */
export function giantChainCorpus(seed: number, giant: number, o: { chains?: number; singles?: number } = {}): { id: string; text: string; score: number }[] {
  const rnd = splitmix32(seed);
  const word = (): string => `w${rnd() % 8000}`;
  const docs: { id: string; text: string; score: number }[] = [];
  const chain = (name: string, length: number): void => {
    let words = Array.from({ length: 60 }, word);
    for (let i = 0; i < length; i++) {
      docs.push({ id: `${name}-${i}`, text: words.join(' '), score: rnd() % 9 });
      words = words.slice();
      words[rnd() % words.length] = word();
      if (rnd() % 7 === 0) docs.push({ id: `${name}-${i}-copy`, text: docs[docs.length - 1]!.text, score: rnd() % 9 });
    }
  };
  chain('giant', giant);
  for (let c = 0; c < (o.chains ?? 30); c++) chain(`c${c}`, 2 + (rnd() % 6));
  for (let i = 0; i < (o.singles ?? 200); i++) docs.push({ id: `s${i}`, text: Array.from({ length: 60 }, word).join(' '), score: rnd() % 9 });
  for (let i = docs.length - 1; i > 0; i--) {
    const j = rnd() % (i + 1);
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
  }
  return docs;
}
