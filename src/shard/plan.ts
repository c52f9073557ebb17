/**
 * Building a job's plan from the command line: the shard list (files, or directories of shards),
 * the resolved dedup parameters, and where outputs go.
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { chooseBands } from '../lsh/params.js';
import { createTextSigner } from '../sketch/textSigner.js';
import { UsageError } from '../io/errors.js';
import type { DedupOptions } from '../dedup/dedup.js';
import type { ReadOptions } from '../io/read.js';
import type { PairFormat } from '../io/write.js';
import { outputNames, type JobOutputMode, type JobSpec } from './job.js';

/** File names that are shards when a directory is given: data files, optionally compressed. */
const SHARD_NAME = /\.(jsonl|ndjson|json|tsv|tab|csv|txt|text|parquet)(\.(gz|zst|zstd))?$/i;

/** The shard files of the arguments: files as given, directories expanded to their shard files (sorted, recursively). */
export async function listShards(args: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = (await fsp.readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && SHARD_NAME.test(e.name)) out.push(p);
    }
  };
  for (const a of args) {
    let st;
    try {
      st = await fsp.stat(a);
    } catch {
      throw new UsageError(`${a}: no such file or directory`);
    }
    if (st.isDirectory()) {
      const before = out.length;
      await walk(a);
      if (out.length === before) throw new UsageError(`${a}: a directory without shard files (.jsonl, .tsv, .csv, .txt, .parquet, optionally .gz or .zst)`);
    } else out.push(a);
  }
  return out.map((p) => path.resolve(p));
}

/** What the command line says about a job. */
export interface PlanInput {
  shards: string[];
  against?: string[];
  read: ReadOptions;
  options: DedupOptions;
  partitions?: number;
  onBadShard: 'stop' | 'skip';
  mode: JobOutputMode;
  pairFormat: PairFormat;
  outDir?: string;
}

/** The plan (without id and version) for {@link saveJob}. */
export async function planJob(input: PlanInput): Promise<Omit<JobSpec, 'id' | 'version'>> {
  const corpus = await listShards(input.shards);
  const ref = input.against ? await listShards(input.against) : [];
  if (input.against && input.mode === 'clusters') throw new UsageError('--against reports pairs across the two corpora: --output clusters does not apply (use pairs, dedup or annotate)');
  const all = [...corpus, ...ref];
  const seen = new Set<string>();
  for (const p of all) {
    if (seen.has(p)) throw new UsageError(`${p} is given twice`);
    seen.add(p);
  }
  const threshold = input.options.threshold ?? 0.8;
  const signer = createTextSigner({ shingle: input.options.shingle, minhash: input.options.minhash });
  const bands = chooseBands(threshold, signer.numPerm, input.options.lsh);
  const writesShards = input.mode === 'dedup' || input.mode === 'annotate';
  if (writesShards && !input.outDir) throw new UsageError(`--output ${input.mode} writes one output shard per input shard: give --out-dir DIR`);
  const outDir = input.outDir ? path.resolve(input.outDir) : undefined;
  // Only corpus shards get outputs: their names are relative to the corpus's own common directory.
  const names = [...outputNames(corpus), ...outputNames(ref)];
  if (outDir) {
    for (let i = 0; i < corpus.length; i++) {
      if (path.resolve(outDir, names[i]!) === corpus[i]) throw new UsageError(`--out-dir ${input.outDir} would overwrite the input shard ${corpus[i]}`);
    }
  }
  // One partition per ~shard, at least 4: a join task then reads about one shard's worth of keys.
  const partitions = input.partitions ?? Math.max(4, corpus.length + ref.length);
  const { stdin: _stdin, raw: _raw, displayName: _dn, ...read } = input.read;
  return {
    shards: all.map((p, i) => ({ path: p, side: i < corpus.length ? 0 : 1, out: names[i]! })),
    read,
    threshold,
    shingle: input.options.shingle ?? {},
    minhash: input.options.minhash ?? {},
    bands: bands.bands,
    rows: bands.rows,
    partitions,
    against: !!input.against,
    onBadShard: input.onBadShard,
    maxBucketPairs: input.options.maxPairs ?? 50_000_000,
    output: { mode: input.mode, pairFormat: input.pairFormat, dir: writesShards ? outDir : undefined },
  };
}
