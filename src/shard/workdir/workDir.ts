/**
 * Where a job's plan, task markers and intermediate files live: a directory every worker sees (a
 * POSIX file system: local, NFS, Lustre, EFS), or a prefix in object storage (`s3://bucket/prefix`,
 * src/shard/workdir/s3work.ts). The stages themselves always run on a local directory; the two
 * implement {@link WorkDir} (./posix.ts, ./s3work.ts) and ./open.ts is the one place that picks
 * one for a `--work-dir`, so the job commands, the BullMQ workers and the Slurm members have no
 * branch of their own.
 * @module
 */
import type { JobSpec, TaskStage } from '../files/job.js';

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
  /** Marks the output directory incomplete (a job starts writing there) or complete (`_SUCCESS`, after every output shard). */
  markOutput(job: JobSpec, complete: boolean): Promise<void>;
  /** Removes what no marker names (leftovers of killed or losing attempts); with `all`, the whole job. Returns what was removed. */
  clean(job: JobSpec, all: boolean): Promise<string[]>;
}

/** The names (relative to the output directory) of a job's output shards: one per corpus shard. */
export function outputShardNames(job: Pick<JobSpec, 'shards'>): string[] {
  return job.shards.filter((s) => s.side === 0).map((s) => s.out);
}
