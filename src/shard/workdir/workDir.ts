/**
 * Where a job's plan, task markers and intermediate files live: a directory every worker sees (a
 * POSIX file system: local, NFS, Lustre, EFS), or a prefix in object storage (`s3://bucket/prefix`,
 * src/shard/workdir/s3work.ts). The stages themselves always run on a local directory; the two
 * implement {@link WorkDir} (./posix.ts, ./s3work.ts) and ./open.ts is the one place that picks
 * one for a `--work-dir`, so the job commands, the BullMQ workers and the Slurm members have no
 * branch of their own.
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { taskCount, type JobSpec, type StageName, type TaskStage } from '../files/job.js';
import { isS3Url, s3Delete } from '../../io/s3/client.js';
import { SUCCESS_MARKER, writeSuccessMarker } from '../../io/write/outDir.js';
import {
  claimOutputDirectory,
  completeUnderClaim,
  inDir,
  readSmall,
  releaseClaim,
  requireClaim,
  writeSmall,
  type Claimant,
  type ClaimHistory,
} from '../../io/write/outClaim.js';

/** A job's work dir, wherever it is. */
export interface WorkDir {
  /** What the job is known by: an absolute directory, or the `s3://` name without a trailing `/`. Tasks on the queue and Slurm members carry it. */
  readonly name: string;
  /** Reads the plan (a usage error when there is none). */
  load(): Promise<JobSpec>;
  /** Writes the plan, or finds the same job already planned there (see {@link saveJob}). */
  save(spec: Omit<JobSpec, 'id' | 'version'>): Promise<JobSpec>;
  /** Task `t`'s marker, when it has committed (a damaged marker is an error naming it). */
  marker(job: JobSpec, stage: TaskStage, t: number): Promise<object | undefined>;
  /** Whether task `t` of `stage` has committed (a damaged marker is an error naming it). */
  isDone(job: JobSpec, stage: TaskStage, t: number): Promise<boolean>;
  /** Runs task `t` of `stage` (idempotent: a committed task returns its marker). */
  run(job: JobSpec, stage: TaskStage, t: number): Promise<object>;
  /**
   * Calls `fn` with a local directory that holds the plan and every committed marker, and with
   * `report` the files the job's output and summary are made of (for `job report` and `job status`).
   * Errors name the work dir's own names.
   */
  withView<T>(job: JobSpec, report: boolean, fn: (dir: string) => Promise<T>): Promise<T>;
  /**
   * Marks the output directory incomplete (a job starts writing there: it claims the directory,
   * ../../io/write/outClaim.ts) or complete (`_SUCCESS` in place of the claim, after every output shard).
   */
  markOutput(job: JobSpec, complete: boolean): Promise<void>;
  /** Removes what no marker names (leftovers of killed or losing attempts); with `all`, the whole job. Returns what was removed. */
  clean(job: JobSpec, all: boolean): Promise<string[]>;
}

/** The names (relative to the output directory) of a job's output shards: one per corpus shard. */
export function outputShardNames(job: Pick<JobSpec, 'shards'>): string[] {
  return job.shards.filter((s) => s.side === 0).map((s) => s.out);
}

/** The stage whose tasks write into the job's output directory, if it has one. */
export function outputStage(job: JobSpec): TaskStage | undefined {
  if (!job.output.dir) return undefined;
  return job.spans ? 'spans-cut' : 'filter';
}

const claimant = (wd: WorkDir, job: JobSpec): Claimant => ({ workDir: wd.name, plan: job.id });

/** The work dir's record of the `_SUCCESS` the job wrote into its output directory (./outClaim.ts). */
const OUTPUT_RECORD = 'output.json';

/** What the job in `wd` says about its output directory: whether its output stage wrote there, and the stamp of its `_SUCCESS`. */
function history(wd: WorkDir, job: JobSpec, stage: TaskStage): ClaimHistory {
  return {
    async wrote() {
      for (let t = 0; t < taskCount(job, stage as StageName); t++) if (await wd.isDone(job, stage, t)) return true;
      return false;
    },
    async finished() {
      const text = await readSmall(inDir(wd.name, OUTPUT_RECORD));
      return text === undefined ? undefined : (JSON.parse(text) as { success?: string }).success;
    },
  };
}

/**
 * Before task `t` of `stage` writes into the output directory: refuses (exit 2) a job that no longer
 * holds its claim there. `done`: the task has committed (it writes nothing then).
 */
export async function checkOutputClaim(wd: WorkDir, job: JobSpec, stage: TaskStage, done: () => Promise<boolean>): Promise<void> {
  if (stage !== outputStage(job) || (await done())) return;
  await requireClaim(job.output.dir!, claimant(wd, job));
}

/** {@link WorkDir.markOutput} for every work dir: the claim, then `_SUCCESS` removed; or `_SUCCESS` in place of the claim. */
export async function markOutputDir(wd: WorkDir, job: JobSpec, complete: boolean): Promise<void> {
  const dir = job.output.dir;
  const stage = outputStage(job);
  if (!dir || !stage) return;
  const me = claimant(wd, job);
  if (complete) {
    return completeUnderClaim(dir, me, {
      history: history(wd, job, stage),
      write: () => writeSuccessMarker(dir, outputShardNames(job)),
      keep: (success) => writeSmall(inDir(wd.name, OUTPUT_RECORD), `${JSON.stringify({ success })}\n`),
    });
  }
  await claimOutputDirectory(dir, me, history(wd, job, stage));
  if (isS3Url(dir)) await s3Delete(inDir(dir, SUCCESS_MARKER));
  else await fsp.rm(path.join(dir, SUCCESS_MARKER), { force: true });
}

/** For `job clean --all`: the job's claim on its output directory goes (its shards stay, without `_SUCCESS`). */
export async function releaseOutputDir(wd: WorkDir, job: JobSpec): Promise<void> {
  if (job.output.dir) await releaseClaim(job.output.dir, claimant(wd, job));
}
