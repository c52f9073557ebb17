/**
 * A sharded dedup job: its plan (`job.json` in the job directory, which every worker reads) and the
 * stages it runs. The plan holds everything a task needs, so tasks take only (job directory, stage,
 * task index) and any machine that sees the directory can run any task.
 * @module
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ReadOptions } from '../io/read.js';
import type { ShingleOptions } from '../text/shingler.js';
import type { MinHashOptions } from '../sketch/minhash.js';
import type { PairFormat } from '../io/write.js';
import { UsageError } from '../io/errors.js';

/** Version of the plan and of the stage outputs' layout; a job directory of another version is refused. */
export const JOB_VERSION = 1;

/** What a job writes. `pairs` and `clusters` go to one file; `dedup` and `annotate` write one output shard per input shard. */
export type JobOutputMode = 'pairs' | 'clusters' | 'dedup' | 'annotate';

/** The stages, in order. */
export const STAGES = ['sign', 'join', 'gather', 'verify', 'components', 'filter'] as const;
/** A stage name. */
export type StageName = (typeof STAGES)[number];

/** One input shard of a job. */
export interface ShardSpec {
  /** Absolute path. */
  path: string;
  /** 0: the corpus; 1: the reference corpus of `--against`. */
  side: 0 | 1;
  /** Output path (for dedup/annotate outputs), relative to the output directory. */
  out: string;
}

/** The plan of a job, stored as job.json. */
export interface JobSpec {
  version: number;
  /** A random id, used to name the engine's jobs. */
  id: string;
  shards: ShardSpec[];
  /** Reader options (without stdin). */
  read: Omit<ReadOptions, 'stdin' | 'raw' | 'displayName'>;
  threshold: number;
  shingle: ShingleOptions;
  minhash: MinHashOptions;
  bands: number;
  rows: number;
  /** Band-key partitions (join tasks). */
  partitions: number;
  /** Whether `--against` is on: pairs only between side 0 and side 1. */
  against: boolean;
  /** A shard that fails to read: stop the job, or skip the shard (counted and named in the summary). */
  onBadShard: 'stop' | 'skip';
  /** Most candidate pairs one bucket may produce (a guard against a few huge groups of copies). */
  maxBucketPairs: number;
  output: { mode: JobOutputMode; pairFormat: PairFormat; dir?: string };
}

/** The plan file's path. */
export function jobFile(workDir: string): string {
  return path.join(workDir, 'job.json');
}

/** Reads the plan of the job in `workDir`. */
export function loadJob(workDir: string): JobSpec {
  let text: string;
  try {
    text = readFileSync(jobFile(workDir), 'utf8');
  } catch {
    throw new UsageError(`${workDir} holds no job (no job.json): create one with "neardup job plan" or "neardup job dedup"`);
  }
  const job = JSON.parse(text) as JobSpec;
  if (job.version !== JOB_VERSION) throw new UsageError(`${jobFile(workDir)} is a version ${job.version} job; this neardup runs version ${JOB_VERSION}`);
  return job;
}

/**
 * Writes the plan (atomically), or checks that the one already in `workDir` is the same job, so that
 * submitting again resumes it. Returns the plan in force.
 */
export async function saveJob(workDir: string, spec: Omit<JobSpec, 'id' | 'version'>): Promise<JobSpec> {
  await fsp.mkdir(workDir, { recursive: true });
  let existing: JobSpec | undefined;
  try {
    existing = JSON.parse(await fsp.readFile(jobFile(workDir), 'utf8')) as JobSpec;
  } catch {
    existing = undefined;
  }
  if (existing) {
    const { id: _id, version, ...rest } = existing;
    if (version === JOB_VERSION && JSON.stringify(rest) === JSON.stringify(spec)) return existing;
    throw new UsageError(`${workDir} already holds a different job (${jobFile(workDir)}): use a new --work-dir, or remove that one`);
  }
  const job: JobSpec = { version: JOB_VERSION, id: randomBytes(6).toString('hex'), ...spec };
  const tmp = `${jobFile(workDir)}.tmp-${process.pid}`;
  await fsp.writeFile(tmp, JSON.stringify(job, null, 2) + '\n');
  await fsp.rename(tmp, jobFile(workDir));
  return job;
}

/** Number of tasks of a stage. */
export function taskCount(job: JobSpec, stage: StageName): number {
  switch (stage) {
    case 'join':
      return job.partitions;
    case 'components':
      return 1;
    case 'filter':
      return job.output.mode === 'dedup' || job.output.mode === 'annotate' ? job.shards.length : 0;
    default:
      return job.shards.length;
  }
}

/** Output names for shards: their paths relative to the deepest directory holding them all. */
export function outputNames(paths: readonly string[]): string[] {
  if (paths.length === 0) return [];
  const dirs = paths.map((p) => path.dirname(p).split(path.sep));
  let common = dirs[0]!;
  for (const d of dirs) {
    let i = 0;
    while (i < common.length && i < d.length && common[i] === d[i]) i++;
    common = common.slice(0, i);
  }
  const base = common.join(path.sep) || path.sep;
  return paths.map((p) => path.relative(base, p));
}
