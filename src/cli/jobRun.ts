/**
 * The CLI side of sharded jobs: building the plan from flags, running the stages (on BullMQ workers,
 * or in this process), and printing the summary `neardup dedup` prints.
 * @module
 */
import { Command, Option } from 'commander';
import path from 'node:path';
import { promises as fsp } from 'node:fs';
import { SUCCESS_MARKER } from '../io/rewrite.js';
import { UsageError } from '../io/errors.js';
import { loadJob, saveJob, STAGES, taskCount, type JobOutputMode, type JobSpec } from '../shard/job.js';
import { planJob } from '../shard/plan.js';
import { runTask } from '../shard/stages.js';
import { summarize, writeJobOutput, type JobSummary } from '../shard/summary.js';
import { addEngineOptions, parsePositiveInt, type EngineFlags, type InputFlags } from './options.js';
import { pipelineOptionsFrom } from './pipelineOptions.js';
import { int, ms, Reporter, type LogFlags } from './report.js';
import type { PairFormat } from '../io/write.js';

/** Flags of the commands that plan a job. */
export interface PlanFlags extends InputFlags, EngineFlags, LogFlags {
  workDir: string;
  against?: string[];
  partitions?: number;
  output: JobOutputMode;
  out?: string;
  outDir?: string;
  outputFormat?: PairFormat;
  onBadShard: 'stop' | 'skip';
}

/** Adds the options of a job's plan. */
export function addPlanOptions(cmd: Command): Command {
  addEngineOptions(cmd);
  return cmd
    .requiredOption('--work-dir <dir>', 'job directory on storage every worker sees (the same path on every machine)')
    .option('--against <shards...>', 'reference corpus (files or directories of shards): report or drop documents of SHARDS that are near duplicates of one of these')
    .option('--partitions <n>', 'band-key partitions, i.e. join tasks (default: the number of shards, at least 4)', parsePositiveInt('partitions', 100000))
    .addOption(new Option('--output <mode>', 'pairs, clusters (JSONL), dedup (each shard without duplicates), annotate (each shard with cluster and duplicate_of)').choices(['pairs', 'clusters', 'dedup', 'annotate']).default('pairs'))
    .option('--out-dir <dir>', 'for --output dedup/annotate: where the output shards go (same relative names, formats and compression as the inputs)')
    .addOption(new Option('--output-format <format>', 'pairs as tsv, csv or jsonl (default: from --out extension, else tsv)').choices(['tsv', 'csv', 'jsonl']))
    .addOption(new Option('--on-bad-shard <what>', 'a shard that fails to read: stop the job, or skip the shard (named in the summary)').choices(['stop', 'skip']).default('stop'));
}

/** Writes (or reuses) the plan of the flags' job. */
export async function planFromFlags(shards: string[], flags: PlanFlags): Promise<JobSpec> {
  if (flags.verify && flags.verify !== 'exact') throw new UsageError('sharded jobs verify exactly: --verify estimate/none is for neardup dedup');
  const { dedup: options, read, pairFormat } = pipelineOptionsFrom(flags);
  const spec = await planJob({
    shards,
    against: flags.against,
    read,
    options,
    partitions: flags.partitions,
    onBadShard: flags.onBadShard,
    mode: flags.output,
    pairFormat,
    outDir: flags.outDir,
  });
  const job = await saveJob(path.resolve(flags.workDir), spec);
  // An output directory from an earlier run must not look complete while it is rewritten.
  if (job.output.dir) await fsp.rm(path.join(job.output.dir, SUCCESS_MARKER), { force: true });
  return job;
}

/** Runs every unfinished task of every stage in this process, in order. */
export async function runLocally(workDir: string, job: JobSpec, reporter: Reporter): Promise<void> {
  for (const stage of STAGES) {
    const n = taskCount(job, stage);
    const t0 = performance.now();
    for (let t = 0; t < n; t++) await runTask(workDir, stage, t, job);
    if (n > 0) reporter.verbose(`${stage}: ${n} task${n === 1 ? '' : 's'} in ${ms(performance.now() - t0)}`);
  }
}

/** Writes the pairs/clusters output and prints the summary (human, or --json). */
export async function finishJob(workDir: string, job: JobSpec, flags: LogFlags & { out?: string }, reporter: Reporter, started: number): Promise<JobSummary> {
  const s = summarize(workDir, job);
  const written = await writeJobOutput(workDir, job, flags.out, s);
  // Every output shard is in place: mark the directory complete, as neardup dedup does.
  if (job.output.dir) await fsp.writeFile(path.join(job.output.dir, SUCCESS_MARKER), '');
  const total = performance.now() - started;
  const corpusShards = job.shards.filter((x) => x.side === 0).length;
  if (flags.json) {
    reporter.json({
      command: 'job dedup',
      workDir,
      input: { shards: corpusShards, referenceShards: job.shards.length - corpusShards, docs: s.docs, emptyDocs: s.emptyDocs, skipped: s.skippedRecords, bytes: s.bytes },
      skippedShards: s.skippedShards,
      options: { threshold: job.threshold, shingle: job.shingle, minhash: job.minhash, verify: 'exact', partitions: job.partitions, against: job.against },
      lsh: { bands: job.bands, rows: job.rows },
      candidates: s.candidates,
      pairs: s.pairs,
      clusters: s.clusters,
      docsInClusters: s.docsInClusters,
      duplicates: s.duplicates,
      output: { mode: job.output.mode, path: job.output.dir ?? flags.out, records: written, format: job.output.mode === 'pairs' ? job.output.pairFormat : undefined },
      timings: { total },
    });
    return s;
  }
  reporter.summary(`docs        ${int(s.docs)} from ${corpusShards} shard${corpusShards === 1 ? '' : 's'}${job.against ? ` and ${job.shards.length - corpusShards} reference shards` : ''}: ${int(s.emptyDocs)} empty${s.skippedRecords ? `, ${int(s.skippedRecords)} invalid skipped` : ''}`);
  for (const b of s.skippedShards) reporter.summary(`skipped     shard ${b.path}: ${b.error}`);
  reporter.summary(`lsh         ${job.bands} bands × ${job.rows} rows, ${job.partitions} partitions`);
  reporter.summary(`candidates  ${int(s.candidates)}`);
  reporter.summary(`pairs       ${int(s.pairs)} (exact Jaccard ≥ ${job.threshold}${job.against ? ', corpus × reference only' : ''})`);
  if (job.against) reporter.summary(`matched     ${int(s.duplicates)} corpus documents are near duplicates of a reference document`);
  else reporter.summary(`clusters    ${int(s.clusters)}, holding ${int(s.docsInClusters)} docs (${int(s.duplicates)} duplicates beyond one per cluster)`);
  reporter.summary(`time        total ${ms(total)}`);
  const where = job.output.dir ?? flags.out;
  if (where) reporter.summary(`output      ${job.output.mode}: ${int(written)} records → ${where}`);
  return s;
}

/** The job directory of the flags, with its plan. */
export function openJob(workDir: string): { workDir: string; job: JobSpec } {
  const dir = path.resolve(workDir);
  return { workDir: dir, job: loadJob(dir) };
}
