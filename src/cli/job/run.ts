/**
 * The CLI side of sharded jobs: building the plan from flags and running the stages (on BullMQ
 * workers, or in this process). The output and summary of a finished job are ./finish.ts.
 * @module
 */
import { Command, Option } from 'commander';
import { availableParallelism } from 'node:os';
import { STAGES, taskCount, type JobOutputMode, type JobSpec } from '../../shard/files/job.js';
import { driveLink, type RoundState } from '../../shard/stages/linkDriver.js';
import { largestDecide, warnDecideForecast } from '../../shard/plan/decideForecast.js';
import { planJob, type PlanInput } from '../../shard/plan/plan.js';
import { TaskProcesses } from '../../run/localTasks.js';
import { outputShardNames, type WorkDir } from '../../shard/workdir/workDir.js';
import { openWorkDir } from '../../shard/workdir/open.js';
import { refuseHiddenShardNames, refuseStrayOutputs } from '../../io/write/outDir.js';
import { UsageError } from '../../common/errors.js';
import type { Progress } from '../progress.js';
import { parsePositiveInt, type EngineFlags, type InputFlags } from '../options.js';
import { dedupCommand } from '../dedup/command.js';
import { pipelineOptionsFrom } from '../pipelineOptions.js';
import { ms, Reporter, type LogFlags } from '../report.js';
import type { PairFormat } from '../../io/write/write.js';
import { checkAuditFlags } from '../dedup/output.js';
import { refuseAliasedOutputs, refuseDirectoryHolding, refuseOutputInInputs } from '../../io/write/alias.js';
import { honouredValues, refusalOf, routeMarks, supportOf, type Route } from '../../engine/routes.js';

/** Flags of the commands that plan a job. */
export interface PlanFlags extends InputFlags, EngineFlags, LogFlags {
  workDir: string;
  against?: string[];
  partitions?: number;
  taskBytes?: number;
  output: JobOutputMode;
  out?: string;
  outDir?: string;
  outputFormat?: PairFormat;
  onBadShard: 'stop' | 'skip';
  tagPrefix?: string;
  removed?: string;
  dryRun?: boolean;
}

/**
 * How a sharded job treats each option of `neardup dedup` is the job route's capability table
 * (src/engine/routes.ts). A job takes dedup's own option definitions, so the two commands parse
 * alike; every option that table does not honour, an option added to dedup later included, is
 * refused by name when given (exit 2), never ignored.
 */
const JOB: Route = 'job';

/** Options the job commands define their own way: --against takes shards, dedup/annotate outputs go to --out-dir (their own, with a job's wording); the log options. */
const OWN = new Set(['against', 'output', 'out', 'outDir', 'quiet', 'verbose', 'json']);

/** The job commands' own options (not dedup's). */
const JOB_OWN = new Set([
  'workDir',
  'partitions',
  'taskBytes',
  'outDir',
  'onBadShard',
  'redis',
  'queue',
  'local',
  'processes',
  'waitNotice',
  'redisTimeout',
  'estimate',
  'sampleMb',
  'taskMemory',
]);

/** The option of `cmd` named by its attribute, as typed on the command line. */
function flagOf(cmd: Command, attr: string): string {
  const o = cmd.options.find((x) => x.attributeName() === attr && x.long);
  return o?.long ?? `--${attr}`;
}

/**
 * Adds the options of a job's plan: dedup's engine and input options (the same definitions), the
 * job's own, and dedup's other options hidden, so that {@link refuseUnsupported} names them.
 */
export function addPlanOptions(cmd: Command): Command {
  for (const o of dedupCommand({ routeMarks: false }).options) {
    const attr = o.attributeName();
    if (OWN.has(attr)) continue;
    const support = supportOf(JOB, attr);
    if (typeof support === 'object' && 'no' in support) o.hideHelp();
    // An option honoured at some values only says which, in the help.
    if (honouredValues(JOB, attr)?.length) o.description = `${o.description}${routeMarks(attr, [JOB])}`;
    cmd.addOption(o);
  }
  return cmd
    .requiredOption(
      '--work-dir <dir>',
      'job directory on storage every worker sees (the same path on every machine), or s3://bucket/prefix (no shared file system needed)',
    )
    .option(
      '--against <shards...>',
      'reference corpus (files or directories of shards): report or drop documents of SHARDS that are near duplicates of one of these',
    )
    .option(
      '--task-bytes <n>',
      'input bytes one task of the per-shard stages (sign, gather, verify, filter) reads at most: consecutive smaller shards share a task, a larger shard has one of its own (default 67108864, 64 MiB)',
      parsePositiveInt('task-bytes', 2 ** 50),
    )
    .option(
      '--partitions <n>',
      'band-key partitions, i.e. join tasks (default: one per 64 MiB of input, at most one per task of the per-shard stages)',
      parsePositiveInt('partitions', 100000),
    )
    .addOption(
      new Option(
        '--output <mode>',
        'pairs, clusters (JSONL), dedup (each shard without duplicates), annotate (each shard with its tags: cluster, cluster_size, duplicate_of, similarity, kept)',
      ).choices(['pairs', 'clusters', 'dedup', 'annotate']).default('pairs'),
    )
    .option('--out-dir <dir>', 'for --output dedup/annotate: where the output shards go (same relative names, formats and compression as the inputs)')
    .addOption(
      new Option('--on-bad-shard <what>', 'a shard that fails to read: stop the job, or skip the shard (named in the summary)').choices(['stop', 'skip'])
        .default('stop'),
    );
}

/**
 * Refuses, naming it, every option of `neardup dedup` given to a job command that the job would not
 * honour exactly as `neardup dedup` does: a different answer with exit 0 is never an option.
 */
export function refuseUnsupported(cmd: Command): void {
  const given = (attr: string): boolean => {
    const src = cmd.getOptionValueSource(attr);
    return src !== undefined && src !== 'default';
  };
  for (const o of cmd.options) {
    const attr = o.attributeName();
    const support = supportOf(JOB, attr);
    if (support === 'yes' || OWN.has(attr) || !given(attr)) continue;
    if (typeof support === 'object' && 'only' in support) {
      const refused = refusalOf(JOB, { name: attr, flag: flagOf(cmd, attr), value: cmd.getOptionValue(attr) });
      if (refused !== undefined) throw new UsageError(refused);
      continue;
    }
    if (JOB_OWN.has(attr)) continue;
    // Of a --x / --no-x pair, name the one typed (its value says which).
    const v: unknown = cmd.getOptionValue(attr);
    const typed = cmd.options.find((x) => x.attributeName() === attr && (x.negate ? v === false : v !== false)) ?? o;
    throw new UsageError(refusalOf(JOB, { name: attr, flag: typed.long ?? typed.flags, value: v })!);
  }
  // neardup dedup picks its candidates by itself for word and spot shingles (the exact join for
  // short documents): a job, which runs LSH, would find other pairs unless told the same.
  const shingle = cmd.getOptionValue('shingle') as string | undefined;
  if ((shingle === 'word' || shingle === 'spot') && !given('candidates')) {
    throw new UsageError(
      `--shingle ${shingle}: neardup dedup chooses the candidate method itself for ${shingle} shingles (the exact join for short documents), sharded jobs run MinHash-LSH: add --candidates lsh (and give neardup dedup the same to compare)`,
    );
  }
}

/** What the flags say about a job's plan. */
export function planInputFrom(shards: string[], flags: PlanFlags): PlanInput {
  // A job's outputs are --out-dir shards (dedup, annotate) or --out (pairs, clusters).
  checkAuditFlags({ output: flags.output, out: flags.outDir ?? flags.out, tagPrefix: flags.tagPrefix, removed: flags.removed, dryRun: flags.dryRun });
  const { dedup: options, read, pairFormat } = pipelineOptionsFrom(flags);
  return {
    shards,
    against: flags.against,
    // The plan records the delimiter read with (a comma unless given), as it always has.
    read: { ...read, delimiter: read.delimiter ?? ',' },
    options,
    partitions: flags.partitions,
    taskBytes: flags.taskBytes,
    onBadShard: flags.onBadShard,
    mode: flags.output,
    pairFormat,
    outDir: flags.outDir,
    tagPrefix: flags.tagPrefix,
    dryRun: flags.dryRun,
    removed: flags.removed,
  };
}

/** Why a work dir inside an input's directory is refused: its files would sit among the shards. */
export const WORK_DIR_ADVICE = 'its files would sit among the input shards, read by a later run over the input: give a work dir outside it';

/** Writes (or reuses) the plan of the flags' job in its work dir. */
export async function planFromFlags(
  shards: string[],
  flags: PlanFlags,
  memory: Pick<JobSpec, 'taskMemory' | 'taskMemoryBudget'> = {},
): Promise<{ wd: WorkDir; job: JobSpec }> {
  const spec = { ...(await planJob(planInputFrom(shards, flags))), ...memory };
  await refuseJobAliases(spec, flags.out, flags.removed);
  await refuseOutputInInputs({ what: '--out-dir', path: spec.output.dir }, [...shards, ...(flags.against ?? [])]);
  await refuseOutputInInputs({ what: '--work-dir', path: flags.workDir }, [...shards, ...(flags.against ?? [])], WORK_DIR_ADVICE);
  const wd = openWorkDir(flags.workDir);
  return { wd, job: await savePlan(wd, flags.workDir, spec) };
}

/**
 * Saves the plan `spec` in the work dir `wd` (named `workDir`), or reuses the one there, once its
 * output directory is known to be fit: not the work dir nor holding it, holding no file this job
 * will not write (an earlier run's), and claimed by no other job still writing there. A refused
 * command leaves no plan behind that the corrected command would meet as "a different job".
 */
export async function savePlan(wd: WorkDir, workDir: string, spec: Omit<JobSpec, 'id' | 'version'>): Promise<JobSpec> {
  if (spec.output.dir) {
    await refuseDirectoryHolding({ what: '--out-dir', path: spec.output.dir }, { what: '--work-dir', path: workDir });
    refuseHiddenShardNames(spec.output.dir, outputShardNames(spec));
    await refuseStrayOutputs(spec.output.dir, outputShardNames(spec));
  }
  // (load() of a local work dir may throw at once rather than reject.)
  const existed = await Promise.resolve().then(() => wd.load()).then(() => true, () => false);
  const job = await wd.save(spec);
  try {
    // The job claims its output directory (another job's is refused, naming --out-dir), and an earlier
    // run's _SUCCESS goes: the directory must not look complete while it is rewritten.
    await wd.markOutput(job, false);
  } catch (e) {
    // A refused new plan is not left behind for the corrected command to meet as "a different job".
    if (!existed) await wd.clean(job, true);
    throw e;
  }
  return job;
}

/**
 * Refuses (exit 2) a job output that would overwrite one of the job's shards (corpus or `--against`):
 * `--out`, the `--removed` audit, or an `--out-dir` holding one.
 */
export async function refuseJobAliases(job: Pick<JobSpec, 'shards' | 'output'>, out: string | undefined, removed: string | undefined): Promise<void> {
  await refuseAliasedOutputs(
    [{ what: '--out', path: out }, { what: '--removed', path: removed }, { what: '--out-dir', path: job.output.dir, dir: true }],
    job.shards.map((s) => ({ what: s.side === 0 ? 'the input shard' : 'the --against shard', path: s.path, file: true })),
  );
}

/** Inputs below this run their tasks in one process by default: a task process costs ~0.1 s to start. */
const LOCAL_PROCESS_BYTES = 64 * 2 ** 20;

/** The default task processes of `job dedup --local`: one per core, or one for a small job. */
export function localProcesses(job: JobSpec): number {
  const bytes = job.shards.reduce((n, s) => n + s.identity.size, 0);
  return bytes < LOCAL_PROCESS_BYTES ? 1 : availableParallelism();
}

/** True when task t of the stage has a valid marker (a damaged one is left for the task to report). */
async function taskDone(wd: WorkDir, job: JobSpec, stage: (typeof STAGES)[number], t: number): Promise<boolean> {
  try {
    return await wd.isDone(job, stage, t);
  } catch {
    return false;
  }
}

/**
 * Runs every unfinished task of every stage on this machine, stage after stage: a stage's tasks on
 * `processes` task processes at once (one core each), or in this process when one would do.
 */
export async function runLocally(wd: WorkDir, job: JobSpec, reporter: Reporter, processes = 1): Promise<void> {
  const pool = new TaskProcesses(processes);
  try {
    await runStages({ wd, job, reporter, processes, pool });
  } finally {
    pool.close();
  }
}

async function runStages(run: { wd: WorkDir; job: JobSpec; reporter: Reporter; processes: number; pool: TaskProcesses }): Promise<void> {
  const { wd, job, reporter, processes, pool } = run;
  for (const [i, stage] of STAGES.entries()) {
    const n = taskCount(job, stage);
    const t0 = performance.now();
    const bar = n > 0 ? reporter.progress(stage, 'tasks', n) : undefined;
    try {
      // The link stage's rounds first, each like a stage; then its tasks only record the last round.
      if (stage === 'link' && n > 0) {
        let rounds = 0;
        const last = await driveLink(job, {
          marker: (st, t) => wd.marker(job, st, t) as Promise<RoundState | undefined>,
          run: async (st, todo) => {
            rounds++;
            if (processes > 1) await pool.run(wd.name, st, todo);
            else for (const t of todo) await wd.run(job, st, t);
          },
        });
        reporter.verbose(`link: converged at round ${last} (${rounds} round${rounds === 1 ? '' : 's'} run now)`);
      }
      const done0 = await Promise.all(Array.from({ length: n }, (_, t) => taskDone(wd, job, stage, t)));
      const todo = done0.flatMap((d, t) => (d ? [] : [t]));
      let done = n - todo.length;
      bar?.update(done);
      // With more than one task process every task runs in one, as on workers: the planner's memory
      // per task is a task process's, and the submitter does not keep a stage's memory to the end.
      if (processes > 1 && todo.length > 0) {
        const next = STAGES.slice(i + 1).find((x) => taskCount(job, x) > 0);
        await pool.run(wd.name, stage, todo, {
          onDone: () => bar?.update(++done),
          next: next && { stage: next, processes: Math.min(processes, taskCount(job, next)) },
        });
      } else {
        for (const t of todo) {
          await wd.run(job, stage, t);
          bar?.update(++done);
        }
      }
    } finally {
      bar?.stop();
    }
    if (n > 0) reporter.verbose(`${stage}: ${n} task${n === 1 ? '' : 's'} in ${ms(performance.now() - t0)}`);
    if (stage === 'link' && n > 0) {
      const f = await warnDecideForecast({ job, marker: (t) => wd.marker(job, 'link', t), warn: (w) => reporter.warn(w) });
      const top = f && largestDecide(f);
      if (top)
        reporter.verbose(
          `decide: forecast peak ${Math.round(top.bytes / 2 ** 20)} MB (task ${top.task}: ${top.pairs} verified pairs, ${top.docs} clustered documents)`,
        );
    }
  }
}

/** Progress bars of a job run on workers, one per stage (shown only on a terminal, not with --quiet), fed by its progress callback. */
export function stageBars(reporter: Reporter): { update(stage: string, done: number, total: number): void; stop(): void } {
  let current: { stage: string; bar: Progress } | undefined;
  return {
    update(stage, done, total) {
      if (current?.stage !== stage) {
        current?.bar.stop();
        current = { stage, bar: reporter.progress(stage, 'tasks', total) };
      }
      current.bar.update(done);
    },
    stop() {
      current?.bar.stop();
      current = undefined;
    },
  };
}

/** The work dir of the flags, with its plan. */
export async function openJob(workDir: string): Promise<{ wd: WorkDir; job: JobSpec }> {
  const wd = openWorkDir(workDir);
  return { wd, job: await wd.load() };
}
