/**
 * Submitting a planned job to Slurm: one array job per stage (`neardup stage <name>`, one array
 * member per task), each held until the previous stage's array succeeded (`--dependency=afterok`).
 * Only tasks without a marker are submitted, so submitting again after a cancelled or failed member
 * resubmits exactly what is missing; the stage command itself skips committed tasks, so a member
 * Slurm requeues (`--requeue`, node failure) is harmless too. A job planned with `--estimate` asks
 * for each stage's predicted peak memory of its largest task, plus a quarter, as `--mem`, unless the
 * extra sbatch arguments give one.
 * @module
 */
import { spawnSync } from 'node:child_process';
import { UsageError } from '../common/errors.js';
import type { WorkDir } from '../shard/workdir/workDir.js';
import { STAGES, taskCount, type JobSpec, type StageName } from '../shard/files/job.js';

/** One array job of the submission. */
export interface SlurmStage {
  /** The stage it runs. */
  stage: StageName;
  /** Its array members: the stage's tasks not yet committed. */
  tasks: number[];
  /** The sbatch arguments (without the dependency, known only once the previous one is submitted). */
  args: string[];
}

/** What {@link planSlurm} needs besides the job. */
export interface SlurmOptions {
  /** The command that runs neardup on the compute nodes, e.g. `[process.execPath, '/opt/neardup/dist/cli/main.js']`. */
  neardup: readonly string[];
  /** The directory the tasks run in (relative shard paths of the plan are relative to it). */
  cwd: string;
  /** More sbatch arguments for every stage (`--partition=…`, `--time=…`, `--mem=…`). */
  extra: readonly string[];
  /** Where the members' logs go (`<stage>-<job>_<task>.log`): a directory the compute nodes share. */
  logs: string;
}

/** A word quoted for a POSIX shell when it needs it. */
export function shellQuote(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/**
 * `p` as a literal part of an sbatch file name pattern (`--output`, `--error`, `--input`), where
 * sbatch replaces `%A`, `%a`, `%j`…: each `%` doubled, so a work dir such as `/data/50%` is the
 * directory its logs go to (a single `%` there made every member fail to open its log).
 */
export function sbatchLiteral(p: string): string {
  return p.replace(/%/g, '%%');
}

/** Task numbers as a Slurm array spec: `0-3,5,7-9`. */
export function arraySpec(tasks: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < tasks.length;) {
    let j = i;
    while (j + 1 < tasks.length && tasks[j + 1] === tasks[j]! + 1) j++;
    parts.push(i === j ? String(tasks[i]) : `${tasks[i]}-${tasks[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The Slurm job name of a stage of `job`: how a later submission finds what is still queued. */
export function slurmJobName(job: JobSpec, stage: StageName): string {
  return `neardup-${job.id.slice(0, 8)}-${stage}`;
}

/**
 * Slurm jobs of this job still pending or running (`squeue`), as `id stage` lines; empty when there
 * are none or squeue cannot run. Submitting again while they are queued would run their tasks twice.
 */
export function queuedSlurmJobs(job: JobSpec, squeue = 'squeue'): string[] {
  const r = spawnSync(squeue, ['-h', '-o', '%i %j', `--name=${STAGES.map((s) => slurmJobName(job, s)).join(',')}`], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return [];
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

/** `--mem` for a stage from the planner's estimate (a quarter above it, in MiB), unless the user's arguments set the memory. */
function memOf(job: JobSpec, stage: StageName, extra: readonly string[]): string[] {
  const peak = job.taskMemory?.[stage];
  if (peak === undefined || !(peak > 0) || extra.some((a) => /^--(mem|mem-per-cpu|mem-per-gpu)(=|$)/.test(a))) return [];
  return [`--mem=${Math.ceil((peak * 1.25) / 2 ** 20)}M`];
}

/** The array jobs that would finish the job in `workDir`: its stages with tasks still to run, in order. */
export async function planSlurm(wd: WorkDir, job: JobSpec, o: SlurmOptions): Promise<SlurmStage[]> {
  const workDir = wd.name;
  const out: SlurmStage[] = [];
  for (const stage of STAGES) {
    const n = taskCount(job, stage);
    const tasks: number[] = [];
    for (let t = 0; t < n; t++) if (!(await wd.isDone(job, stage, t))) tasks.push(t);
    if (tasks.length === 0) continue;
    // Each member runs exactly the task its array index names, given explicitly with the stage's
    // task count: from the environment alone, `neardup stage` counts members from the array's first
    // index and takes its size from the array, which for a resubmission of some tasks are not the stage's.
    const command = `${[...o.neardup, 'stage', stage, '--work-dir', workDir].map(shellQuote).join(' ')} --task "$SLURM_ARRAY_TASK_ID" --tasks ${n}`;
    const args = [
      `--job-name=${slurmJobName(job, stage)}`,
      `--array=${arraySpec(tasks)}`,
      '--requeue',
      `--chdir=${o.cwd}`,
      `--output=${sbatchLiteral(o.logs)}/${stage}-%A_%a.log`,
      ...memOf(job, stage, o.extra),
      ...o.extra,
      '--wrap',
      `exec ${command}`,
    ];
    out.push({ stage, tasks, args });
  }
  return out;
}

/** The submission as a shell script: what {@link submitSlurm} runs, for review or for another machine. */
export function slurmScript(stages: readonly SlurmStage[]): string {
  const lines = ['#!/bin/sh', 'set -e', 'dep='];
  for (const s of stages) {
    const args = s.args.map(shellQuote).join(' ');
    lines.push(
      `dep=$(sbatch --parsable \${dep:+--dependency=afterok:$dep} ${args})`,
      `echo "${s.stage}: job $dep (${s.tasks.length} task${s.tasks.length === 1 ? '' : 's'})"`,
    );
  }
  return lines.join('\n') + '\n';
}

/** Submits the stages in order, each after the previous one succeeded; returns their Slurm job ids. */
export function submitSlurm(stages: readonly SlurmStage[], sbatch = 'sbatch'): { stage: StageName; jobId: string; tasks: number }[] {
  const out: { stage: StageName; jobId: string; tasks: number }[] = [];
  let dep: string | undefined;
  for (const s of stages) {
    const args = ['--parsable', ...(dep ? [`--dependency=afterok:${dep}`] : []), ...s.args];
    const r = spawnSync(sbatch, args, { encoding: 'utf8' });
    if (r.error)
      throw new UsageError(
        `cannot run ${sbatch} (${
          (r.error as NodeJS.ErrnoException).code ?? r.error.message
        }): is Slurm installed here? "neardup job submit --slurm --print" writes the script to run on a login node`,
      );
    if (r.status !== 0)
      throw new Error(`sbatch failed for stage ${s.stage}${
        out.length
          ? ` (stages ${out.map((x) => `${x.stage}=${x.jobId}`).join(', ')} were submitted)`
          : ''
      }: ${r.stderr.trim()}`);
    dep = r.stdout.trim().split(';')[0]!;
    out.push({ stage: s.stage, jobId: dep, tasks: s.tasks.length });
  }
  return out;
}
