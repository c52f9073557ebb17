/**
 * `neardup job spans`: `neardup spans` as a sharded job (src/shard/spans/), on any runner: here
 * (`--local`), on BullMQ workers (`--redis`), or planned only (`--plan-only`) for array runners
 * that then run `neardup stage NAME --task I` for each stage that has tasks (spans-anchor and
 * spans-anchor-find for substring windows, then spans-hash, spans-find, spans-text, spans-decide, spans-cut)
 * and `neardup job report`.
 * It takes `neardup spans`' own option definitions, so the two parse alike, and writes its bytes;
 * an option the job cannot honour is refused by name (exit 2), never ignored.
 * @module
 */
import { Command } from 'commander';
import { UsageError } from '../../common/errors.js';
import { refuseAliasedOutputs, refuseOutputInInputs } from '../../io/write/alias.js';
import { shellQuote } from '../../distributed/slurm.js';
import { STAGES, taskCount, type JobSpec } from '../../shard/files/job.js';
import { planSpansJob } from '../../shard/plan/spansPlan.js';
import { summarizeSpans, writeSpansAudit } from '../../shard/spans/summary.js';
import { progressOf } from '../../shard/stages/summary.js';
import { openWorkDir } from '../../shard/workdir/open.js';
import type { WorkDir } from '../../shard/workdir/workDir.js';
import { spansAuditFormat } from '../../spans/file/audit.js';
import { parsePositiveInt, readOptionsFrom } from '../options.js';
import { requireOutForJson } from '../pipelineOptions.js';
import { int, Reporter, type LogFlags } from '../report.js';
import { refuseLengthUnit, spansCommand, spansOptionsFrom, type SpansFlags } from '../spans/command.js';
import { printSpansSummary } from '../spans/summary.js';
import { addRunOptions, checkRunFlags, runJob, type RunFlags } from './where.js';
import type { FinishRun } from './finish.js';
import { savePlan, WORK_DIR_ADVICE } from './run.js';

/**
 * The options of `neardup spans` a spans job honours exactly as `neardup spans` does (the
 * differential test draws them). Any other option of `neardup spans`, one added later included, is
 * refused by name when given, never ignored.
 */
export const JOB_SPANS_HONOURS: ReadonlySet<string> = new Set([
  'format',
  'text',
  'id',
  'textField',
  'idField',
  'delimiter',
  'tsvQuotes',
  'skipInvalid',
  'unit',
  'window',
  'minLength',
  'lengthUnit',
  'minDocs',
  'minUnitWords',
  'minDocWords',
  'normalize',
  'output',
  'removed',
  'dryRun',
  'top',
  'quiet',
  'verbose',
  'json',
]);

/** The options of `neardup spans` a spans job refuses, and why (the refusal names the option). */
const REFUSED: Record<string, string> = {
  out: 'a spans job writes one output shard per input shard: give --out-dir DIR',
  limit: 'a spans job reads every record of its shards: drop --limit, or run neardup spans',
  zstdLevel: 'a spans job writes .zst output shards at the default level: drop --zstd-level, or run neardup spans',
};

/** The flags of `job spans`. */
interface JobSpansFlags extends SpansFlags, RunFlags {
  workDir: string;
  outDir?: string;
  taskBytes?: number;
  partitions?: number;
  planOnly?: boolean;
}

/** The `job spans` command. */
export function jobSpansCommand(): Command {
  const cmd = new Command('spans')
    .description(
      'run neardup spans as a sharded job, here (--local), on the BullMQ workers of --redis, or planned only (--plan-only) for array runners; writes what neardup spans writes (see docs/spans.md)',
    )
    .argument(
      '<shards...>',
      'input shards: JSONL, TSV, CSV, text or id⇥text files (.gz or .zst), directories of them, or quoted globs; one corpus in this order (keep-first across them)',
    );
  const own = new Set<string>();
  for (const o of spansCommand().options) {
    const attr = o.attributeName();
    own.add(attr);
    if (!JOB_SPANS_HONOURS.has(attr)) o.hideHelp();
    cmd.addOption(o);
  }
  cmd
    .requiredOption('--work-dir <dir>', 'job directory on storage every worker sees, or s3://bucket/prefix')
    .option('--out-dir <dir>', 'where the output shards go (same relative names, formats and compression as the inputs), then _SUCCESS')
    .option(
      '--task-bytes <n>',
      'input bytes one task of spans-anchor, spans-hash, spans-text and spans-cut reads at most (default 67108864, 64 MiB)',
      parsePositiveInt('task-bytes', 2 ** 50),
    )
    .option(
      '--partitions <n>',
      'hash partitions, i.e. spans-anchor-find, spans-find and spans-decide tasks (default: one per 64 MiB)',
      parsePositiveInt('partitions', 100000),
    )
    .option('--plan-only', 'write the plan only, for array runners: then "neardup stage NAME --task I" for each stage, and "neardup job report"');
  addRunOptions(cmd);
  cmd.action(async (shards: string[], flags: JobSpansFlags) => {
    for (const o of cmd.options) {
      const attr = o.attributeName();
      const src = cmd.getOptionValueSource(attr);
      if (!own.has(attr) || JOB_SPANS_HONOURS.has(attr) || src === undefined || src === 'default') continue;
      throw new UsageError(
        `${o.long ?? o.flags}: ${REFUSED[attr] ?? 'neardup job spans does not run this option of neardup spans yet: drop it, or run neardup spans'}`,
      );
    }
    if (!flags.planOnly) checkRunFlags(flags);
    if (flags.window !== undefined && flags.unit !== 'sentence') throw new UsageError('--window applies to --unit sentence only');
    if (flags.minLength !== undefined && flags.unit !== 'substring') throw new UsageError('--min-length applies to --unit substring only');
    refuseLengthUnit(flags);
    if (flags.dryRun && flags.outDir !== undefined) throw new UsageError('--dry-run writes no records: drop --out-dir');
    if (!flags.dryRun) requireOutForJson({ json: flags.json, out: flags.outDir });
    const audit = flags.removed !== undefined ? spansAuditFormat(flags.removed, '--removed') : undefined;
    const started = performance.now();
    const reporter = new Reporter(flags);
    const spec = await planSpansJob({
      shards,
      read: readOptionsFrom(flags),
      spans: spansOptionsFrom(flags),
      mode: flags.dryRun ? 'none' : flags.output,
      outDir: flags.outDir,
      removed: flags.removed,
      audit,
      partitions: flags.partitions,
      taskBytes: flags.taskBytes,
    });
    await refuseAliasedOutputs(
      [{ what: '--removed', path: flags.removed }, { what: '--out-dir', path: spec.output.dir, dir: true }],
      spec.shards.map((s) => ({ what: 'the input shard', path: s.path, file: true })),
    );
    await refuseOutputInInputs({ what: '--out-dir', path: spec.output.dir }, shards);
    await refuseOutputInInputs({ what: '--work-dir', path: flags.workDir }, shards, WORK_DIR_ADVICE);
    const wd = openWorkDir(flags.workDir);
    const job = await savePlan(wd, flags.workDir, spec);
    if (flags.planOnly) return printPlan(job, flags.workDir, reporter);
    await runJob(wd, job, flags, reporter);
    await finishSpansJob(wd, job, flags, { reporter, started });
  });
  return cmd;
}

/** The stages of a planned job and the commands that run them. */
function printPlan(job: JobSpec, workDir: string, reporter: Reporter): void {
  const stages = STAGES.map((s) => ({ stage: s, tasks: taskCount(job, s) })).filter((s) => s.tasks > 0);
  if (reporter.flags.json) return reporter.json({ command: 'job spans', workDir, id: job.id, shards: job.shards.length, partitions: job.partitions, stages });
  for (const s of stages)
    reporter.summary(
      `${s.stage.padEnd(11)} ${int(s.tasks)} task${s.tasks === 1 ? '' : 's'}: neardup stage ${s.stage} --work-dir ${shellQuote(workDir)} ${
        s.tasks > 1 ? `--task I (I from 0 to ${s.tasks - 1})` : '--task 0'
      }`,
    );
}

/**
 * Writes the `--removed` audit and prints the summary of a spans job whose stages have run, as
 * `neardup spans` prints its own; marks the output directory complete. `finished`: first refuse a
 * job whose stages have not all run (`job report`).
 */
export async function finishSpansJob(wd: WorkDir, job: JobSpec, flags: LogFlags & { removed?: string; outDir?: string }, run: FinishRun): Promise<void> {
  const { reporter, started, finished } = run;
  const spans = job.spans!;
  const removed = flags.removed ?? job.output.removed;
  if (removed !== undefined && spansAuditFormat(removed, '--removed') !== spans.audit)
    throw new UsageError(
      `--removed ${removed}: this job was planned ${
        spans.audit ? `with a ${spans.audit} audit` : 'without --removed'
      }; plan it with --removed FILE of that format`,
    );
  const result = await wd.withView(job, true, async (dir) => {
    if (finished) {
      const unfinished = progressOf(dir, job).filter((p) => p.done < p.total);
      if (unfinished.length > 0)
        throw new UsageError(`the job is not finished: ${unfinished.map((p) => `${p.stage} ${p.done}/${p.total}`).join(', ')} tasks done`);
    }
    const r = summarizeSpans(dir, job);
    if (removed !== undefined) await writeSpansAudit(dir, job, removed);
    return r;
  });
  await wd.markOutput(job, true);
  const o = spans.options;
  const summaryFlags = {
    unit: o.unit,
    window: o.window,
    minLength: o.minLength,
    lengthUnit: o.lengthUnit,
    minDocs: o.minDocs,
    output: spans.mode === 'none' ? 'dedup' : spans.mode,
    dryRun: spans.mode === 'none',
    removed,
    out: flags.outDir ?? job.output.dir,
  };
  printSpansSummary(reporter, summaryFlags, result, performance.now() - started);
}
