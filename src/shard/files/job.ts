/**
 * A sharded dedup job: its plan (`job.json` in the job directory, which every worker reads) and the
 * stages it runs. The plan holds everything a task needs, so tasks take only (job directory, stage,
 * task index) and any machine that sees the directory can run any task.
 * The identity of each shard, which every task checks, is ./shardIdentity.ts.
 * @module
 */
import type { KeepPolicy } from '../../cluster/keepPolicy.js';
import type { RemovalRule } from '../../cluster/removal.js';
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ReadOptions } from '../../io/read/read.js';
import type { EngineOptions } from '../../engine/config.js';
import { identityChange, type ShardIdentity } from './shardIdentity.js';
import type { PairFormat } from '../../io/write/write.js';
import { InputError, UsageError } from '../../common/errors.js';
import { writeError } from '../../io/write/output.js';
import { OUTPUT_LOCK } from '../../io/write/outDir.js';
import { isS3Url } from '../../io/s3/client.js';
import { anchoredUnits, type ResolvedSpansOptions } from '../../spans/options.js';

/** Version of the plan and of the stage outputs' layout; a job directory of another version is refused. */
export const JOB_VERSION = 15;

/** What a job writes. `pairs` and `clusters` go to one file; `dedup` and `annotate` write one output shard per input shard. */
export type JobOutputMode = 'pairs' | 'clusters' | 'dedup' | 'annotate';

/**
 * The stages, in order: a dedup job's, then a spans job's (`neardup job spans`, src/shard/spans/).
 * A job has tasks in its own kind's stages only ({@link taskCount} is 0 in the others), so every
 * runner, which goes through the stages that have tasks, runs both kinds alike.
 */
export const STAGES = [
  'sign',
  'join',
  'route',
  'gather',
  'verify',
  'link',
  'decide',
  'components',
  'filter',
  'spans-anchor',
  'spans-anchor-find',
  'spans-hash',
  'spans-find',
  'spans-text',
  'spans-decide',
  'spans-cut',
] as const;

/**
 * A spans job's stages: for substring windows, count each group's window anchors (partitioned by
 * hash) and find each partition's repeated anchors; hash each group's units (partitioned by
 * hash), find each partition's repeated hashes, read their texts in each group, decide each
 * partition's cuts by text, cut each group's records.
 */
export const SPANS_STAGES: readonly StageName[] = STAGES.filter((s) => s.startsWith('spans-'));
/** A stage name. */
export type StageName = (typeof STAGES)[number];

/** A round of the link stage (`link/r0000`, …): tasks like a stage's, but as many rounds as it takes (src/shard/stages/link.ts). */
export type RoundStage = `link/r${string}`;
/** What a task belongs to: a stage, or a round of the link stage. */
export type TaskStage = StageName | RoundStage;
/** The name of link round `r`. */
export const roundStage = (r: number): RoundStage => `link/r${String(r).padStart(4, '0')}`;
/** The round of a round stage's name, or undefined for a stage. */
export const roundOf = (stage: string): number | undefined => (/^link\/r\d{4,}$/.test(stage) ? Number(stage.slice(6)) : undefined);

/** One input shard of a job. */
export interface ShardSpec {
  /** Absolute path. */
  path: string;
  /** 0: the corpus; 1: the reference corpus of `--against`. */
  side: 0 | 1;
  /** Output path (for dedup/annotate outputs), relative to the output directory. */
  out: string;
  /** The file as planned. */
  identity: ShardIdentity;
}

/** The plan of a job, stored as job.json: the engine's options it runs ({@link EngineOptions}) resolved, and how its tasks split. */
export interface JobSpec extends Required<Pick<EngineOptions, 'threshold' | 'shingle' | 'minhash'>> {
  version: number;
  /** A random id: every task marker and intermediate file carries it, and readers check it. */
  id: string;
  shards: ShardSpec[];
  /** Reader options (without stdin). */
  read: Omit<ReadOptions, 'stdin' | 'raw' | 'displayName'>;
  bands: number;
  rows: number;
  /** Band-key partitions (join tasks). */
  partitions: number;
  /**
   * The shards of each task of the per-shard stages (sign, gather, verify, filter): task t reads
   * shards groups[t] to groups[t + 1] - 1. Consecutive small shards share a task, so a thousand tiny
   * shards cost a few tasks, not thousands of commits.
   */
  groups: number[];
  /**
   * Whether some shard is read sequentially (compressed, Parquet, CSV, in object storage, …), so
   * that the gather stage has tasks: plain line-format shards are read in place by verification,
   * and a corpus of only those gathers nothing. Absent in plans made before it: true.
   */
  gather?: boolean;
  /** Whether `--partitions` chose the partitions (else the planner did, and a resubmission takes the plan's). */
  partitionsGiven?: boolean;
  /** Whether `--against` is on: pairs only between side 0 and side 1. */
  against: boolean;
  /**
   * The keep policy of `--keep` (dedup, annotate and clusters outputs), when not `first`: sign
   * records what it ranks by in docs.bin, components picks each cluster's kept member by it.
   */
  keep?: KeepPolicy;
  /**
   * Which documents dedup drops (`--removal`), for the outputs that keep some: `verified` or
   * `cluster`. Absent in plans made before it, whose components stage kept one member per cluster.
   */
  removal?: RemovalRule;
  /** A shard that fails to read: stop the job, or skip the shard (counted and named in the summary). */
  onBadShard: 'stop' | 'skip';
  /** Most candidate pairs one bucket may produce (a guard against a few huge groups of copies). */
  maxBucketPairs: number;
  /**
   * `tagPrefix`: `--tag-prefix` of annotate's tags. `removed`: the `--removed` audit's path (dedup),
   * for which components computes each dropped document's similarity. No `dir` for dedup: a
   * `--dry-run`, which writes only the audit.
   */
  output: { mode: JobOutputMode; pairFormat: PairFormat; dir?: string; tagPrefix?: string; removed?: string };
  /**
   * The planner's peak memory of each stage's largest task (bytes), when planned with `--estimate`:
   * `job submit --slurm` asks for it as `--mem`. Not part of what makes two plans the same job.
   */
  taskMemory?: Partial<Record<StageName, number>>;
  /**
   * Set for a spans job (`neardup job spans`): the units and rule of `neardup spans`, and what it
   * writes. Its dedup fields (threshold, shingle, minhash, bands, rows…) are the planner's defaults
   * and unused; `partitions` is the hash partitions of its find stage.
   */
  spans?: SpansJobPlan;
  /** `job plan --task-memory` (bytes): a decide task forecast past it once link has run is warned of (src/shard/plan/decideForecast.ts). */
  taskMemoryBudget?: number;
}

/** What a spans job runs and writes. */
export interface SpansJobPlan {
  /** The options of `neardup spans` (defaults filled in; `normalize` a preset). */
  options: ResolvedSpansOptions;
  /** `dedup` or `annotate` output shards under `output.dir`, or `none` (`--dry-run`: the summary and the audit only). */
  mode: 'dedup' | 'annotate' | 'none';
  /** The `--removed` audit's format, when the job writes one (each cut task writes its rows). */
  audit?: 'tsv' | 'jsonl';
}

/**
 * True for a work dir entry (a name relative to the work dir, with `/`) that a job writes: its plan
 * (and the plan's temp files) and its stage directories. `job clean --all` removes these only: the
 * outputs, logs and any other file a user put there stay.
 */
export function isJobEntry(rel: string): boolean {
  const top = rel.split('/')[0]!;
  // output.json: the stamp of the _SUCCESS the job wrote (src/shard/workdir/workDir.ts).
  return top === 'job.json' || top === 'output.json' || top.startsWith('.job.json.tmp-') || (STAGES as readonly string[]).includes(top);
}

/** The command that removes a work dir: `rm -r` for a directory, the AWS CLI's for an `s3://` prefix. */
export const removeCommand = (workDir: string): string => (isS3Url(workDir) ? `aws s3 rm --recursive ${workDir.replace(/\/*$/, '/')}` : `rm -r ${workDir}`);

/** The plan file's path. */
export function jobFile(workDir: string): string {
  return isS3Url(workDir) ? `${workDir.replace(/\/+$/, '')}/job.json` : path.join(workDir, 'job.json');
}

/** The refusal for a damaged or foreign plan file. */
function damaged(workDir: string, why: string): UsageError {
  return new UsageError(
    `${jobFile(workDir)} is damaged (${why}): its tasks cannot be trusted; remove the directory (${removeCommand(workDir)}) and plan the job again`,
  );
}

/** Parses and checks a plan file's text (of the job in `workDir`, which errors name). */
export function parseJob(workDir: string, text: string): JobSpec {
  let job: JobSpec;
  try {
    job = JSON.parse(text) as JobSpec;
  } catch (e) {
    throw damaged(workDir, `not JSON: ${(e as Error).message}`);
  }
  if (job === null || typeof job !== 'object' || Array.isArray(job)) throw damaged(workDir, 'not a JSON object');
  if (job.version !== JOB_VERSION) {
    if (typeof job.version === 'number')
      throw new UsageError(
        `${jobFile(workDir)} is a version ${job.version} job; this neardup runs version ${JOB_VERSION}: plan the job again in a new --work-dir`,
      );
    throw damaged(workDir, 'no version');
  }
  const ok = typeof job.id === 'string' && /^[0-9a-f]{12}$/.test(job.id)
    && Array.isArray(job.shards) && job.shards.length > 0
    && job.shards.every((s) =>
      s && typeof s.path === 'string' && (s.side === 0 || s.side === 1) && typeof s.out === 'string' && s.identity && typeof s.identity.size === 'number'
      && typeof s.identity.ends === 'string'
    )
    && typeof job.threshold === 'number' && job.threshold > 0 && job.threshold <= 1
    && Number.isInteger(job.bands) && job.bands > 0 && Number.isInteger(job.rows) && job.rows > 0
    && Number.isInteger(job.partitions) && job.partitions > 0
    && Array.isArray(job.groups) && job.groups.length >= 2 && job.groups[0] === 0 && job.groups.at(-1) === job.shards.length
    && job.groups.every((g, i) => Number.isInteger(g) && (i === 0 || g > job.groups[i - 1]!))
    && (job.gather === undefined || typeof job.gather === 'boolean')
    && typeof job.against === 'boolean' && (job.onBadShard === 'stop' || job.onBadShard === 'skip')
    && typeof job.maxBucketPairs === 'number'
    && job.read !== null && typeof job.read === 'object' && job.shingle !== null && typeof job.shingle === 'object' && job.minhash !== null
    && typeof job.minhash === 'object'
    && job.output !== null && typeof job.output === 'object' && ['pairs', 'clusters', 'dedup', 'annotate'].includes(job.output.mode)
    && (job.spans === undefined
      || (job.spans !== null && typeof job.spans === 'object' && job.spans.options !== null && typeof job.spans.options === 'object'
        && ['dedup', 'annotate', 'none'].includes(job.spans.mode)))
    && (job.taskMemory === undefined
      || (job.taskMemory !== null && typeof job.taskMemory === 'object' && Object.values(job.taskMemory).every((v) => typeof v === 'number')))
    && (job.taskMemoryBudget === undefined || typeof job.taskMemoryBudget === 'number');
  if (!ok) throw damaged(workDir, 'a field is missing or has a wrong type');
  return job;
}

/** Reads the plan of the job in `workDir`. */
export function loadJob(workDir: string): JobSpec {
  let text: string;
  try {
    text = readFileSync(jobFile(workDir), 'utf8');
  } catch {
    throw new UsageError(`${workDir} holds no job (no job.json): create one with "neardup job plan" or "neardup job dedup"`);
  }
  return parseJob(workDir, text);
}

/**
 * The plan without what differs between two plannings of the same job: id, version, shard
 * identities, and whether it gathers (which follows from its shards; plans made before it lack it).
 */
function sameJobKey(spec: Omit<JobSpec, 'id' | 'version'>): Record<string, string> {
  const { taskMemory: _m, taskMemoryBudget: _b, gather: _g, partitionsGiven: _p, ...rest } = spec;
  const fields: Record<string, unknown> = { ...rest, shards: spec.shards.map(({ identity: _i, ...r }) => r) };
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, JSON.stringify(v)]));
}

/** The fields in which two plans differ, as "name (planned X, now Y)". */
function planDifferences(planned: Omit<JobSpec, 'id' | 'version'>, now: Omit<JobSpec, 'id' | 'version'>): string[] {
  const a = sameJobKey(planned);
  const b = sameJobKey(now);
  const short = (v: string | undefined): string => (v === undefined ? 'none' : v.length > 60 ? `${v.slice(0, 57)}…` : v);
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]).map((
    k,
  ) => (k === 'shards' ? 'shards (other inputs)' : `${k} (planned ${short(a[k])}, now ${short(b[k])})`));
}

/**
 * Writes the plan, or checks that the one already in `workDir` is the same job, so that submitting
 * again resumes it. Returns the plan in force. The plan file is created exclusively (a complete temp
 * file hard-linked into place), so of two submissions racing on a new directory exactly one plans
 * it and the other finds that plan and is refused unless it is the same job. A directory that holds
 * task outputs but no plan (removed, or never written) is refused: those tasks belong to no plan.
 */
export async function saveJob(workDir: string, spec: Omit<JobSpec, 'id' | 'version'>): Promise<JobSpec> {
  await fsp.mkdir(workDir, { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    let text: string | undefined;
    try {
      text = await fsp.readFile(jobFile(workDir), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (text !== undefined) return sameJob(workDir, parseJob(workDir, text), spec);
    // This run's locks on its own output files in the work dir (`--out J/pairs.tsv`) are no leftovers.
    const leftovers = (await fsp.readdir(workDir)).filter((n) => !n.startsWith('.job.json.tmp-') && !n.endsWith(OUTPUT_LOCK));
    // Another submission planned the directory meanwhile: read its plan.
    if (leftovers.includes('job.json')) continue;
    if (leftovers.length > 0) {
      throw new UsageError(
        `${workDir} holds ${leftovers.slice(0, 3).join(', ')}${
          leftovers.length > 3 ? ', …' : ''
        } but no job.json: outputs of a removed or unfinished plan are never reused; use a new --work-dir, or remove the whole directory (${
          removeCommand(workDir)
        }) first`,
      );
    }
    const job: JobSpec = { version: JOB_VERSION, id: randomBytes(6).toString('hex'), ...spec };
    const tmp = path.join(workDir, `.job.json.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    const fh = await fsp.open(tmp, 'wx').catch((e: unknown) => {
      throw writeError(jobFile(workDir), e);
    });
    try {
      await fh.writeFile(JSON.stringify(job, null, 2) + '\n');
      await fh.sync();
    } catch (e) {
      // A full disk: Node's ENOSPC names no file; no temp file is left.
      await fh.close().catch(() => undefined);
      await fsp.rm(tmp, { force: true });
      throw writeError(jobFile(workDir), e);
    }
    await fh.close();
    try {
      // link() fails if job.json exists: the first complete plan wins, atomically.
      await fsp.link(tmp, jobFile(workDir));
      return job;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      await fsp.rm(tmp, { force: true });
    }
  }
  throw new UsageError(`${workDir}: another process keeps replacing job.json; use a new --work-dir`);
}

/**
 * The plan `existing` found in `workDir`, when `spec` is the same job planned again (a resubmission
 * resumes it); a different job, or a shard changed since, is refused.
 */
export function sameJob(workDir: string, existing: JobSpec, spec: Omit<JobSpec, 'id' | 'version'>): JobSpec {
  const { id: _id, version: _v, ...rest } = existing;
  // Partitions chosen by neardup (not by --partitions) are the plan's: a resubmission takes them.
  const now = spec.partitionsGiven ? spec : { ...spec, partitions: existing.partitions };
  const differences = planDifferences(rest, now);
  if (differences.length > 0) {
    throw new UsageError(
      `${workDir} already holds a different job (${jobFile(workDir)}): it differs in ${
        differences.join(', ')
      }. Run the plan as it is with "neardup job run --work-dir ${workDir}", or use a new --work-dir, or remove the whole directory (${
        removeCommand(workDir)
      }) first`,
    );
  }
  for (let s = 0; s < existing.shards.length; s++) {
    const change = identityChange(existing.shards[s]!.identity, spec.shards[s]!.identity);
    if (change)
      throw new InputError(
        existing.shards[s]!.path,
        undefined,
        `changed since the job in ${workDir} was planned (${change}): its finished tasks read the old file; plan again in a new --work-dir (or remove ${workDir} first)`,
      );
  }
  return existing;
}

/** Number of tasks of a stage. */
export function taskCount(job: JobSpec, stage: StageName): number {
  if (SPANS_STAGES.includes(stage) !== (job.spans !== undefined)) return 0;
  switch (stage) {
    // Only windows that one process thins out by their anchors have the anchor stages' work.
    case 'spans-anchor':
      return anchoredUnits(job.spans!.options) ? job.groups.length - 1 : 0;
    case 'spans-anchor-find':
      return anchoredUnits(job.spans!.options) ? job.partitions : 0;
    case 'spans-find':
    case 'spans-decide':
      return job.partitions;
    case 'join':
      return job.partitions;
    case 'gather':
      return job.gather === false ? 0 : job.groups.length - 1;
    case 'filter':
      return job.output.mode === 'dedup' || job.output.mode === 'annotate' ? job.groups.length - 1 : 0;
    default:
      return job.groups.length - 1;
  }
}

/** The shards of task `t` of a per-shard stage: [first, end). */
export function shardsOfTask(job: JobSpec, t: number): { first: number; end: number } {
  return { first: job.groups[t]!, end: job.groups[t + 1]! };
}

/** The task of a per-shard stage that handles shard `s`. */
export function taskOfShard(job: JobSpec, s: number): number {
  return rangeOf(job.groups, s);
}

/** The range holding x among ranges [starts[i], starts[i + 1]) (`starts` ascending, its last value the end). */
export function rangeOf(starts: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
