/**
 * Building a job's plan from the command line: the shard list (files, or directories of shards),
 * the resolved dedup parameters, and where outputs go.
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { chooseBands } from '../../lsh/params.js';
import { createTextSigner } from '../../sketch/textSigner.js';
import { UsageError } from '../../common/errors.js';
import { refuseRepeatedFiles } from '../../io/write/alias.js';
import { resolveShards } from '../../io/read/shards.js';
import { inParallel, isS3Url } from '../../io/s3/client.js';
import { listS3Input } from '../../io/s3/staging.js';
import { formatFromExtension } from '../../io/read/formats.js';
import type { InputFormat } from '../../io/read/formats.js';
import type { DedupOptions } from '../../dedup/dedup.js';
import type { KeepPolicy } from '../../cluster/keepPolicy.js';
import type { ReadOptions } from '../../io/read/read.js';
import type { PairFormat } from '../../io/write/write.js';
import type { JobOutputMode, JobSpec } from '../files/job.js';
import { s3ShardIdentity, shardIdentity, type ShardIdentity } from '../files/shardIdentity.js';
import { groupShards, outputNames, TASK_BYTES } from '../files/layout.js';
import { shardLineSpec } from '../files/shardInput.js';
import { storedPresetName } from '../../text/normalize.js';
import type { ShingleOptions } from '../../text/shingler.js';
import { ENGINE_DEFAULTS } from '../../engine/options.js';

/**
 * The shard files of the arguments, through the io layer's shard resolution: a file as given; a
 * directory of shards or a glob expanded (sorted, every format and compression it reads).
 */
export async function listShards(args: readonly string[], format: InputFormat | 'auto' = 'auto'): Promise<string[]> {
  const out: string[] = [];
  for (const a of args) {
    if (isS3Url(a)) {
      out.push(...(await listS3Shards(a, format)));
      continue;
    }
    const list = await resolveShards(a, format);
    if (list) {
      out.push(...list.shards.map((x) => x.path));
      continue;
    }
    if (a === '-') throw new UsageError('a sharded job reads files, not standard input (save it to a file first)');
    const st = await fsp.stat(a).catch(() => undefined);
    if (!st) throw new UsageError(`${a}: no such file or directory`);
    if (st.isDirectory())
      throw new UsageError(
        `${a} is a directory of documents (.txt/.md/.html), not of shards: a sharded job reads record files (JSONL, TSV, CSV, Parquet; .gz or .zst)`,
      );
    // A named pipe (`<(zcat x.gz)`, a FIFO) is read once, as it comes: its tasks read byte ranges of
    // each shard, and read them again.
    if (!st.isFile())
      throw new UsageError(
        `${a} is a pipe, not a file: a sharded job's tasks read byte ranges of its shards, more than once; write it to a file first (neardup dedup and neardup spans, in one process, read a pipe)`,
      );
    out.push(a);
  }
  return out.map((p) => (isS3Url(p) ? p : path.resolve(p)));
}

/** The objects an `s3://` argument names, as shard names; under a prefix, every one must be of a format its name tells (as in a local directory of shards). */
async function listS3Shards(url: string, format: InputFormat | 'auto'): Promise<string[]> {
  const found = await listS3Input(url);
  const unknown = found.kind === 'prefix' && format === 'auto' ? found.objects.filter((o) => formatFromExtension(o.key) === undefined) : [];
  if (unknown.length > 0)
    throw new UsageError(
      `${url} is a prefix of shards, but the format of s3://${found.bucket}/${unknown[0]!.key} is not known from its name: name the shards with a glob (e.g. '${
        url.replace(/\/+$/, '')
      }/*.jsonl'), or force a format`,
      { option: 'format' },
    );
  return found.objects.map((o) => `s3://${found.bucket}/${o.key}`);
}

/** What the command line says about a job. */
export interface PlanInput {
  shards: string[];
  against?: string[];
  read: ReadOptions;
  options: DedupOptions;
  partitions?: number;
  /** Input bytes one task of the per-shard stages reads at most (consecutive smaller shards share a task). Default {@link TASK_BYTES}. */
  taskBytes?: number;
  onBadShard: 'stop' | 'skip';
  mode: JobOutputMode;
  pairFormat: PairFormat;
  outDir?: string;
  /** `--tag-prefix` of annotate. */
  tagPrefix?: string;
  /** `--dry-run`: --output dedup without output shards (the `--removed` audit only). */
  dryRun?: boolean;
  /** `--removed FILE`: the audit `job report` writes (dedup). */
  removed?: string;
}

/** The plan (without id and version) for {@link saveJob}. */
export async function planJob(input: PlanInput): Promise<Omit<JobSpec, 'id' | 'version'>> {
  const format = input.read.format ?? 'auto';
  const corpus = await listShards(input.shards, format);
  const ref = input.against ? await listShards(input.against, format) : [];
  if (input.against && input.mode === 'clusters')
    throw new UsageError('--against reports pairs across the two corpora: --output clusters does not apply (use pairs, dedup or annotate)');
  const all = [...corpus, ...ref];
  await refuseRepeatedFiles(all);
  if (input.against && input.options.keep !== undefined)
    throw new UsageError(
      `--keep ${input.options.keep} does not apply with --against: it keeps every document of the corpus that matches no reference document`,
    );
  // Pairs have no kept member: the policy is not part of their job.
  const keep = input.mode === 'pairs' ? undefined : (input.options.keep as KeepPolicy | undefined);
  if (typeof input.options.keep === 'function') throw new TypeError('a job ranks documents by a --keep policy, not a compare function');
  if (input.against && input.options.removal === 'cluster')
    throw new UsageError('--removal cluster does not apply with --against: it keeps every document of the corpus that matches no reference document');
  const threshold = input.options.threshold ?? ENGINE_DEFAULTS.threshold;
  const signer = createTextSigner({ shingle: input.options.shingle, minhash: input.options.minhash });
  const bands = chooseBands(threshold, signer.numPerm, input.options.lsh);
  const writesShards = input.mode === 'dedup' || input.mode === 'annotate';
  if (writesShards && !input.outDir && !input.dryRun)
    throw new UsageError(`--output ${input.mode} writes one output shard per input shard: give --out-dir DIR`);
  // --out-dir names a directory of output shards; pairs and clusters are one file: never ignored.
  if (!writesShards && input.outDir !== undefined)
    throw new UsageError(
      `--out-dir applies to --output dedup or annotate (one output shard per input shard); --output ${input.mode} writes one file: give --out FILE`,
    );
  const outDir = input.outDir ? (isS3Url(input.outDir) ? input.outDir.replace(/\/+$/, '') : path.resolve(input.outDir)) : undefined;
  // Only corpus shards get outputs: their names are relative to the corpus's own common directory.
  const names = [...outputNames(corpus), ...outputNames(ref)];
  if (outDir) {
    for (let i = 0; i < corpus.length; i++) {
      if ((isS3Url(outDir) ? `${outDir}/${names[i]}` : path.resolve(outDir, names[i]!)) === corpus[i])
        throw new UsageError(`--out-dir ${input.outDir} would overwrite the input shard ${corpus[i]}`);
    }
  }
  const identities: ShardIdentity[] = new Array(all.length);
  // Objects in storage: a HEAD and two ranged GETs each, 16 shards at a time (latency-bound).
  await inParallel(all.map((p, i) => async () => void (identities[i] = isS3Url(p) ? await s3ShardIdentity(p) : shardIdentity(p))), 16);
  const total = identities.reduce((a, x) => a + x.size, 0);
  // One partition per task's worth of input (the keys of ~64 MiB of text), at most one per shard:
  // a join task then reads about one task's worth of keys, and tiny inputs need one.
  const taskBytes = input.taskBytes ?? TASK_BYTES;
  const groups = groupShards(identities.map((x) => x.size), taskBytes);
  const partitions = input.partitions ?? Math.max(1, Math.min(groups.length - 1, Math.ceil(total / taskBytes)));
  const { stdin: _stdin, raw: _raw, displayName: _dn, ...read } = input.read;
  const shards = all.map((p, i) => ({ path: p, side: (i < corpus.length ? 0 : 1) as 0 | 1, out: names[i]!, identity: identities[i]! }));
  return {
    shards,
    groups,
    // Sign reads a shard in byte ranges exactly when it has a line spec; verify then reads its lines in place.
    gather: shards.some((_, s) => shardLineSpec({ shards, read } as JobSpec, s) === undefined),
    read,
    threshold,
    // A renamed preset is recorded under its stored name: the same job planned with either name is the same job.
    shingle: withStoredPreset(input.options.shingle ?? {}),
    minhash: input.options.minhash ?? {},
    bands: bands.bands,
    rows: bands.rows,
    partitions,
    ...(input.partitions !== undefined ? { partitionsGiven: true } : {}),
    against: !!input.against,
    onBadShard: input.onBadShard,
    maxBucketPairs: input.options.maxPairs ?? ENGINE_DEFAULTS.maxPairs,
    // The pair format only shapes --output pairs: for the other outputs it is not part of the job.
    output: {
      mode: input.mode,
      pairFormat: input.mode === 'pairs' ? input.pairFormat : 'tsv',
      dir: writesShards ? outDir : undefined,
      ...(input.tagPrefix ? { tagPrefix: input.tagPrefix } : {}),
      ...(input.removed ? { removed: isS3Url(input.removed) ? input.removed : path.resolve(input.removed) } : {}),
    },
    ...(keep !== undefined ? { keep } : {}),
    ...(input.mode !== 'pairs' && !input.against ? { removal: input.options.removal ?? 'verified' } : {}),
  };
}

/** Shingle options with the normalization preset under its stored name (`seed000` for `lowercase-collapse`). */
function withStoredPreset(o: ShingleOptions): ShingleOptions {
  if (o.normalize?.preset === undefined) return o;
  return { ...o, normalize: { ...o.normalize, preset: storedPresetName(o.normalize.preset) } };
}
