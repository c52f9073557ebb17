/**
 * The stage registry: runs task i of a stage by name, and the "array job" split of a stage's tasks
 * over N processes (Slurm arrays, Kubernetes Indexed Jobs, Spark's rdd.pipe).
 * @module
 */
import { UsageError } from '../../common/errors.js';
import { loadJob, roundOf, STAGES, taskCount, type JobSpec, type StageName, type TaskStage } from '../files/job.js';
import { runSign } from './sign.js';
import { runJoin } from './join.js';
import { runGather } from './gather.js';
import { runRoute } from './route.js';
import { runVerify, verifyReads } from './verify.js';
import { runComponents } from './components.js';
import { runFilter } from './filter.js';
import { decideReads, runDecide } from './decide.js';
import { runLink, runLinkRound, verifyTasksOfGroup } from './link.js';
import { runSpansCut } from '../spans/cut.js';
import { runSpansDecide } from '../spans/decide.js';
import { runSpansText } from '../spans/text.js';
import { runSpansFind } from '../spans/find.js';
import { runSpansHash } from '../spans/hash.js';
import { runSpansAnchor } from '../spans/anchor.js';
import { runSpansAnchorFind } from '../spans/anchorFind.js';

const RUNNERS: Record<StageName, (workDir: string, job: JobSpec, task: number) => Promise<object>> = {
  sign: runSign,
  join: runJoin,
  link: runLink,
  route: runRoute,
  gather: runGather,
  verify: runVerify,
  decide: runDecide,
  components: runComponents,
  filter: runFilter,
  'spans-anchor': runSpansAnchor,
  'spans-anchor-find': runSpansAnchorFind,
  'spans-hash': runSpansHash,
  'spans-find': runSpansFind,
  'spans-text': runSpansText,
  'spans-decide': runSpansDecide,
  'spans-cut': runSpansCut,
};

/**
 * What a task of a stage reads beyond what the plan alone names (src/shard/files/taskReads.ts,
 * `taskInputs`): the numbers its further reads follow from, found in the inputs the plan names. For
 * verify, the shards its routed pairs touch; for decide, those its components' pairs touch; for link
 * and link's round 0, the verify tasks whose first groups it covers. A work dir that copies a task's
 * inputs (src/shard/workdir/s3work.ts) asks here, after the first inputs are in place; the stages
 * not listed read only what the plan names.
 */
const FOLLOW_UP: Partial<Record<StageName, (workDir: string, job: JobSpec, task: number) => number[]>> = {
  verify: verifyReads,
  decide: decideReads,
  link: verifyTasksOfGroup,
};

/**
 * The numbers task `task` of `stage` reads by (`taskInputs`' `known`), from its first inputs, which
 * are in `workDir`; undefined when the plan names all it reads. `round`: link's converged round,
 * which a link task reads first.
 */
export function followUpReads(at: { workDir: string; job: JobSpec; stage: TaskStage; task: number; round?: number }): number[] | undefined {
  const { workDir, job, stage, task, round } = at;
  if (stage === 'link' || roundOf(stage) === 0) return [...(round !== undefined ? [round] : []), ...FOLLOW_UP.link!(workDir, job, task)];
  const reads = FOLLOW_UP[stage as StageName];
  return reads?.(workDir, job, task);
}

/** Checks a stage name. */
export function parseStage(name: string): StageName {
  if (!(STAGES as readonly string[]).includes(name)) throw new UsageError(`unknown stage "${name}" (expected ${STAGES.join(', ')})`);
  return name as StageName;
}

/** Checks the name of a stage or of a link round (`link/r0003`: what the queue's tasks may name). */
export function parseTaskStage(name: string): TaskStage {
  return roundOf(name) !== undefined ? (name as TaskStage) : parseStage(name);
}

/** Runs task `task` of `stage` (or of a link round) in the job at `workDir` (idempotent: a completed task returns its marker). */
export async function runTask(workDir: string, stage: TaskStage, task: number, job: JobSpec = loadJob(workDir)): Promise<object> {
  const round = roundOf(stage);
  if (round !== undefined) return runLinkRound(workDir, job, round, task);
  stage = stage as StageName;
  const n = taskCount(job, stage);
  if (!(Number.isInteger(task) && task >= 0 && task < n)) throw new UsageError(`stage ${stage} of this job has tasks 0 to ${n - 1}, not ${task}`);
  return RUNNERS[stage](workDir, job, task);
}

/** The tasks of a stage that array member `index` of `members` runs: index, index + members, … */
export function tasksOfMember(total: number, index: number, members: number): number[] {
  const out: number[] = [];
  for (let t = index; t < total; t += members) out.push(t);
  return out;
}

/** A whole number from an environment variable, checked as --task and --tasks are (a usage error naming it). */
function envInt(env: NodeJS.ProcessEnv, name: string, min: number): number {
  const v = env[name]!;
  const x = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(x) || x < min) throw new UsageError(`${name} must be an integer from ${min}, got "${v}"`);
  return x;
}

/**
 * The array index and size from the environment, when not given: Slurm (SLURM_ARRAY_TASK_ID,
 * SLURM_ARRAY_TASK_COUNT, with SLURM_ARRAY_TASK_MIN as the first index), Kubernetes Indexed Jobs
 * (JOB_COMPLETION_INDEX) or AWS Batch array jobs (AWS_BATCH_JOB_ARRAY_INDEX); for the last two the
 * size comes from --tasks. Each value is checked as --task and
 * --tasks are: an index below the array's first, a count of 0 or text is a usage error naming it.
 */
export function arrayIndexFromEnv(env: NodeJS.ProcessEnv = process.env): { index?: number; members?: number } {
  if (env.SLURM_ARRAY_TASK_ID !== undefined) {
    const id = envInt(env, 'SLURM_ARRAY_TASK_ID', 0);
    const min = env.SLURM_ARRAY_TASK_MIN !== undefined ? envInt(env, 'SLURM_ARRAY_TASK_MIN', 0) : 0;
    if (id < min) throw new UsageError(`SLURM_ARRAY_TASK_ID ${id} is below SLURM_ARRAY_TASK_MIN ${min}`);
    const count = env.SLURM_ARRAY_TASK_COUNT !== undefined ? envInt(env, 'SLURM_ARRAY_TASK_COUNT', 1) : undefined;
    if (count !== undefined && id - min >= count)
      throw new UsageError(`SLURM_ARRAY_TASK_ID ${id} is not below SLURM_ARRAY_TASK_MIN + SLURM_ARRAY_TASK_COUNT (${min} + ${count})`);
    return { index: id - min, members: count };
  }
  if (env.JOB_COMPLETION_INDEX !== undefined) return { index: envInt(env, 'JOB_COMPLETION_INDEX', 0) };
  if (env.AWS_BATCH_JOB_ARRAY_INDEX !== undefined) return { index: envInt(env, 'AWS_BATCH_JOB_ARRAY_INDEX', 0) };
  return {};
}
