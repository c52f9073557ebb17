/**
 * The plan of a spans job (`neardup job spans`): the shards, their groups and the hash partitions
 * as a dedup job plans them ({@link planJob}), and the options of `neardup spans`. What a sharded
 * spans job cannot write yet is refused here, naming the shard, before anything runs.
 * @module
 */
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import { formatFromExtension } from '../../io/read/formats.js';
import { isParquetFile, type ReadOptions } from '../../io/read/read.js';
import { isS3Url } from '../../io/s3/client.js';
import { resolveSpansOptions, type SpansOptions } from '../../spans/options.js';
import type { JobSpec, SpansJobPlan } from '../files/job.js';
import { planJob } from './plan.js';
import { parquetTextColumn } from '../../spans/file/parquet.js';

/** What the command line says about a spans job. */
export interface SpansPlanInput {
  shards: string[];
  read: ReadOptions;
  spans: SpansOptions;
  /** `dedup` or `annotate` output shards under `outDir`, or `none` (`--dry-run`). */
  mode: SpansJobPlan['mode'];
  outDir?: string;
  /** The `--removed` audit, `.tsv` or `.jsonl`. */
  removed?: string;
  audit?: 'tsv' | 'jsonl';
  partitions?: number;
  taskBytes?: number;
}

/** A shard's format as a reader finds it with `--format auto`: by its name, else (a local file) a Parquet file by its first bytes. */
async function shardFormat(file: string): Promise<string | undefined> {
  return formatFromExtension(file) ?? (!isS3Url(file) && (await isParquetFile(file)) ? 'parquet' : undefined);
}

/** The plan (without id and version) of a spans job. */
export async function planSpansJob(input: SpansPlanInput): Promise<Omit<JobSpec, 'id' | 'version'>> {
  if (input.mode !== 'none' && !input.outDir)
    throw new UsageError(
      `--output ${input.mode} writes one output shard per input shard: give --out-dir DIR (or --dry-run for the summary and the audit only)`,
    );
  if (input.shards.includes('-'))
    throw new UsageError('a spans job reads its shards twice, from files every task sees: not standard input (save it to a file first)');
  if (input.outDir && isS3Url(input.outDir)) throw new UsageError('--out-dir: a spans job writes its output shards to a directory, not to s3:// yet');
  const options = resolveSpansOptions(input.spans);
  const plan = await planJob({
    shards: input.shards,
    read: { ...input.read, delimiter: input.read.delimiter ?? ',' },
    options: {},
    partitions: input.partitions,
    taskBytes: input.taskBytes,
    onBadShard: 'stop',
    mode: input.mode === 'annotate' ? 'annotate' : 'dedup',
    pairFormat: 'tsv',
    outDir: input.outDir,
    dryRun: input.mode === 'none',
  });
  if (input.mode !== 'none') {
    for (const s of plan.shards) {
      const f = input.read.format !== undefined && input.read.format !== 'auto' ? input.read.format : await shardFormat(s.path);
      // Its text column is one a cut text can go back into (./spans/file/parquet.ts), checked before
      // anything runs. A shard in S3 (a work dir in S3: tasks copy their shards to a local spool) is
      // checked by the first task that reads it, which stops the job with the same error.
      if (f === 'parquet' && !isS3Url(s.path)) await parquetTextColumn(s.path, s.path, input.read, input.mode);
      if (input.mode === 'annotate' && (f === 'text' || f === 'idtext'))
        throw new UsageError(
          `annotating adds two fields, and a ${f} line of ${s.path} has no room for them: use JSONL, TSV or CSV, or the dedup output with the audit`,
        );
    }
  }
  return {
    ...plan,
    output: { ...plan.output, ...(input.removed !== undefined ? { removed: isS3Url(input.removed) ? input.removed : path.resolve(input.removed) } : {}) },
    spans: { options, mode: input.mode, ...(input.audit ? { audit: input.audit } : {}) },
  };
}
