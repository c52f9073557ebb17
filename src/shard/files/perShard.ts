/**
 * The per-shard stages (sign, gather, verify, filter) run one task per group of consecutive shards
 * (`JobSpec.groups`): a task handles its shards one by one into one set of files whose rows carry
 * their shard, and its marker lists each shard's counters in shard order. Readers find a shard's
 * task and counters through here.
 * @module
 */
import path from 'node:path';
import { ColumnFile, DamagedFileError } from './columns.js';
import { commitTask, requireMarker, taskDir, type MarkerBase, type TaskRef } from './commit.js';
import { shardsOfTask, taskOfShard, type JobSpec, type StageName } from './job.js';

/** The marker of a per-shard stage's task: its shards' counters, in order. */
export interface PerShardMarker<X> {
  shards: X[];
}

/** Shard `s`'s counters in a per-shard stage (its task must have completed). */
export function shardMarker<X>(workDir: string, job: JobSpec, stage: StageName, s: number): X {
  const t = taskOfShard(job, s);
  const m = requireMarker<PerShardMarker<X>>(workDir, job, stage, t);
  const x = Array.isArray(m.shards) ? m.shards[s - job.groups[t]!] : undefined;
  if (x === undefined || x === null)
    throw new DamagedFileError(`${path.join(taskDir(workDir, stage, t), '_SUCCESS.json')}: has no counters of shard ${s}: the job directory is damaged`);
  return x;
}

/** A task of a per-shard stage. */
export interface PerShardTask extends TaskRef {
  job: JobSpec;
  stage: StageName;
}

/**
 * Runs a task of a per-shard stage: `run` handles each of its shards in order, then `finish`
 * writes the task's files (one per task, whatever the number of shards: a thousand tiny shards
 * must not cost thousands of files) into the task's directory.
 */
export function runPerShard<X extends object>(
  at: PerShardTask,
  run: (s: number) => Promise<X>,
  finish: (dir: string) => Promise<void>,
): Promise<PerShardMarker<X> & MarkerBase> {
  return commitTask<PerShardMarker<X>>(at, async (dir) => {
    const { first, end } = shardsOfTask(at.job, at.task);
    const shards: X[] = [];
    for (let s = first; s < end; s++) shards.push(await run(s));
    await finish(dir);
    return { shards };
  });
}

/**
 * Opens file `name` (of `kind`) of every join task, each of which must have completed: a task of a
 * later stage opens them once and reads only its own rows of each. The caller closes them.
 */
export function openJoinFiles(workDir: string, job: JobSpec, name: string, kind: string): ColumnFile[] {
  const files: ColumnFile[] = [];
  try {
    for (let p = 0; p < job.partitions; p++) {
      requireMarker(workDir, job, 'join', p);
      files.push(ColumnFile.open(path.join(taskDir(workDir, 'join', p), name), kind, job.id));
    }
  } catch (e) {
    for (const f of files) f.close();
    throw e;
  }
  return files;
}

/**
 * Per-shard views of one file of a per-shard stage's tasks (`stage/<t>/<name>`): each task's file
 * is opened when one of its shards is first asked for, each shard's view made once, and all closed
 * together.
 */
export class ShardFiles<T> {
  private files = new Map<number, ColumnFile>();
  private views = new Map<number, T>();
  private readonly workDir: string;
  private readonly job: JobSpec;
  private readonly stage: StageName;

  /** The file `name` (of `kind`) of the tasks of `stage`, each shard's view made by `view`. */
  constructor(
    at: Omit<PerShardTask, 'task'>,
    private readonly file: { name: string; kind: string },
    private readonly view: (f: ColumnFile, s: number) => T,
  ) {
    ({ workDir: this.workDir, job: this.job, stage: this.stage } = at);
  }

  /** Shard `s`'s view. */
  get(s: number): T {
    let v = this.views.get(s);
    if (v !== undefined) return v;
    const t = taskOfShard(this.job, s);
    let f = this.files.get(t);
    if (!f) {
      requireMarker(this.workDir, this.job, this.stage, t);
      this.files.set(t, f = ColumnFile.open(path.join(taskDir(this.workDir, this.stage, t), this.file.name), this.file.kind, this.job.id));
    }
    this.views.set(s, v = this.view(f, s));
    return v;
  }

  /** Forgets shard `s`'s view (a reader going through the shards in order keeps one at a time). */
  drop(s: number): void {
    this.views.delete(s);
  }

  /** Closes every file. */
  close(): void {
    for (const f of this.files.values()) f.close();
    this.files.clear();
    this.views.clear();
  }
}
