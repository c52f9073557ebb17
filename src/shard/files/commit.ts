/**
 * Restartable tasks: every task writes into a temp directory of its own and commits by renaming it
 * to its final name, with a completion marker (`_SUCCESS.json`, the task's counters) written last
 * inside it. Later stages read only final directories that hold the marker, so the leftovers of a
 * killed task (a `.NAME.tmp-…` directory) are never read as complete, and running a task again is
 * idempotent: the first commit wins, a later identical one is discarded.
 *
 * Every file is synced before the marker is written, and the marker names the job's plan and lists
 * the task's files with their sizes (and a SHA-256 of the text files, whose format has no checksum
 * of its own): a reader refuses another job's task, and a file that is short, torn or altered.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, promises as fsp, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import { writeError } from '../../io/write/output.js';
import { DamagedFileError } from './columns.js';
import { faultHooks } from '../../common/faults.js';
import { TaskMeter, type TaskStats } from './taskStats.js';

export type { TaskStats } from './taskStats.js';

/** The completion marker's file name inside a committed task directory. */
export const MARKER = '_SUCCESS.json';

/** What every marker holds besides the task's own counters. */
export interface MarkerBase {
  /** The id of the job (plan) the task belongs to. */
  plan: string;
  /** The task's files: size, and SHA-256 for text files. */
  files: Record<string, { bytes: number; sha256?: string }>;
  /** What the task cost (markers written before #36 have none). */
  stats?: TaskStats;
}

/** The name of the record a failed attempt of a task leaves in its stage directory. */
export function failedFile(workDir: string, stage: string, task: number): string {
  return path.join(workDir, stage, `.failed-${String(task).padStart(5, '0')}.json`);
}

/**
 * The name, in a stage's directory of a status view, of the running tasks of a work dir in object
 * storage (`{ live, dead }` attempts: src/shard/workdir/s3running.ts); a local work dir has none.
 */
export function remoteRunningFile(task: number): string {
  return `.running-${String(task).padStart(5, '0')}.json`;
}

/** What a failed attempt of a task records. */
export interface FailedRecord {
  stage: string;
  task: number;
  error: string;
  /** The error's class name (UsageError, DamagedFileError, …). */
  kind: string;
  at: number;
  host: string;
  pid: number;
}

/** What a task reads of its job: the directory and the plan's id. */
export interface JobRef {
  id: string;
}

/** The final directory of task `task` of `stage` under `workDir`. */
export function taskDir(workDir: string, stage: string, task: number): string {
  return path.join(workDir, stage, String(task).padStart(5, '0'));
}

/**
 * The marker of a committed task, or undefined when the task has not completed. A marker that is
 * damaged or belongs to another job is an error naming it, never "not done" or "done".
 */
export function readMarker<T = Record<string, unknown>>(workDir: string, job: JobRef, stage: string, task: number): (T & MarkerBase) | undefined {
  const file = path.join(taskDir(workDir, stage, task), MARKER);
  let seen = markers.get(job);
  if (!seen) markers.set(job, seen = new Map());
  const known = seen.get(file);
  if (known) return known as T & MarkerBase;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new DamagedFileError(`${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const body = parseMarker<T>(text, file, job);
  seen.set(file, body);
  return body;
}

/**
 * Parses and checks the text of a task marker (`file` names it in errors): JSON with a plan id and a
 * file list, its own checksum right, and the plan's id that of `job`. Returns it without the checksum.
 */
export function parseMarker<T = Record<string, unknown>>(text: string, file: string, job: JobRef): T & MarkerBase {
  let m: T & MarkerBase;
  try {
    m = JSON.parse(text) as T & MarkerBase;
  } catch {
    throw new DamagedFileError(`${file}: damaged task marker (not JSON): remove that task's directory to run it again`);
  }
  if (m === null || typeof m !== 'object' || typeof m.plan !== 'string' || m.files === null || typeof m.files !== 'object') {
    throw new DamagedFileError(`${file}: damaged task marker (no plan id or file list): remove that task's directory to run it again`);
  }
  // The marker's own checksum: a counter altered on disk would change the job's summary.
  const { check, ...body } = m as T & MarkerBase & { check?: string };
  if (check !== markerCheck(body)) throw new DamagedFileError(`${file}: damaged task marker (checksum mismatch): remove that task's directory to run it again`);
  if (m.plan !== job.id)
    throw new DamagedFileError(`${file}: belongs to job ${m.plan}, not to this directory's job ${job.id}: the directory mixes two jobs; use a new --work-dir`);
  return body as T & MarkerBase;
}

/** A marker body with its checksum, as a marker file holds it. */
export function sealMarker(body: object): object {
  return { ...body, check: markerCheck(body) };
}

/**
 * Markers read, per loaded plan: a committed marker never changes, and a task that reads the
 * markers of every shard would otherwise parse and check each once per shard it handles.
 */
const markers = new WeakMap<JobRef, Map<string, object>>();

/**
 * The marker of a task that must have completed. A missing one is a usage error (a stage run before
 * the one it reads), naming the stage and task.
 */
export function requireMarker<T = Record<string, unknown>>(workDir: string, job: JobRef, stage: string, task: number): T & MarkerBase {
  const m = readMarker<T>(workDir, job, stage, task);
  if (!m) throw new UsageError(`${stage} task ${task} has not completed (no ${path.join(taskDir(workDir, stage, task), MARKER)}): run that stage first`);
  return m;
}

/** The check written into a marker: SHA-256 (first 16 hex digits) of its JSON without the check. */
function markerCheck(body: object): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 16);
}

/** Text outputs get a SHA-256 in the marker; column files carry block checksums of their own. */
const isText = (name: string): boolean => !name.endsWith('.bin');

async function sha256Of(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Writes a file, of a text, a buffer or parts one after the other (synced to disk with the task's other files when the task commits, or at once with `sync`). */
export async function writeSynced(file: string, text: string | Buffer | readonly Uint8Array[], sync = false): Promise<void> {
  const fh = await fsp.open(file, 'w');
  try {
    if (typeof text === 'string' || !Array.isArray(text)) await fh.writeFile(text as string | Buffer);
    // Parts one after the other, not concatenated first (a copy as large as them all).
    else for (const part of text as readonly Uint8Array[]) await fh.writeFile(part);
    if (sync) await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Syncs a file to disk and returns its size and (for text outputs) SHA-256. */
async function syncAndDescribe(file: string, name: string): Promise<{ bytes: number; sha256?: string }> {
  const fh = await fsp.open(file, 'r');
  try {
    await fh.sync();
    const bytes = (await fh.stat()).size;
    return isText(name) ? { bytes, sha256: await sha256Of(file) } : { bytes };
  } finally {
    await fh.close();
  }
}

/** Syncs a directory's entries (a rename in it) to disk, where the platform allows. */
async function syncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r').catch(() => undefined);
  if (!fh) return;
  try {
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is then as durable as they make it.
  } finally {
    await fh.close();
  }
}

/** A task of a job: where the job lives, the job, the stage and the task's number. */
export interface TaskRef {
  workDir: string;
  job: JobRef;
  stage: string;
  task: number;
}

/**
 * Syncs every file of `dir` and describes it (size, hash) for the marker: every file reaches the
 * disk before the marker that vouches for it; syncs issued together share the filesystem's journal
 * commits (a task of a thousand tiny shards writes thousands).
 */
async function syncFiles(dir: string): Promise<MarkerBase['files']> {
  const files: MarkerBase['files'] = {};
  const names = (await fsp.readdir(dir)).sort();
  for (let i = 0; i < names.length; i += 32) {
    const batch = names.slice(i, i + 32);
    const described = await Promise.all(batch.map((name) => syncAndDescribe(path.join(dir, name), name)));
    batch.forEach((name, j) => (files[name] = described[j]!));
  }
  return files;
}

/**
 * Renames the finished temp directory `tmp` to the task's directory. When another run of the same
 * task committed first (a task retried while a slow first run was still going), its output is the
 * same: that marker is kept and returned. A directory without the marker is the leftover of a
 * crashed commit on a filesystem without atomic rename: it is replaced.
 */
async function placeTask<T extends object>(at: TaskRef, tmp: string, marker: T & MarkerBase): Promise<T & MarkerBase> {
  const { workDir, job, stage, task } = at;
  const final = taskDir(workDir, stage, task);
  try {
    await fsp.rename(tmp, final);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
    const other = readMarker<T>(workDir, job, stage, task);
    if (other) {
      await fsp.rm(tmp, { recursive: true, force: true });
      await fsp.rm(failedFile(workDir, stage, task), { force: true }).catch(() => undefined);
      return other;
    }
    await fsp.rm(final, { recursive: true, force: true });
    await fsp.rename(tmp, final);
  }
  await syncDir(path.dirname(final));
  await fsp.rm(failedFile(workDir, stage, task), { force: true }).catch(() => undefined);
  return marker;
}

/**
 * Runs a task: `build` writes its files into a fresh temp directory and returns the counters for
 * the marker; every file is synced, the marker written and synced, and the directory is then
 * renamed into place. When the task has already completed, `build` is not called
 * and the existing marker is returned (idempotent reruns).
 */
export async function commitTask<T extends object>(at: TaskRef, build: (dir: string) => Promise<T>): Promise<T & MarkerBase> {
  const { workDir, job, stage, task } = at;
  const done = readMarker<T>(workDir, job, stage, task);
  if (done) return done;
  const final = taskDir(workDir, stage, task);
  const parent = path.dirname(final);
  await fsp.mkdir(parent, { recursive: true });
  const tmp = path.join(parent, `.${path.basename(final)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await fsp.mkdir(tmp);
  const meter = new TaskMeter();
  try {
    let counters: T;
    try {
      counters = await build(tmp);
    } catch (e0) {
      // A full disk while a stage writes (Node's ENOSPC names no file): named by the task's directory.
      const e = ['ENOSPC', 'EDQUOT', 'EFBIG'].includes((e0 as NodeJS.ErrnoException)?.code ?? '') && !(e0 as NodeJS.ErrnoException).path
        ? writeError(final, e0)
        : e0;
      await recordFailure(workDir, stage, task, e);
      throw e;
    } finally {
      meter.stop();
    }
    const files = await syncFiles(tmp);
    const marker = { ...counters, plan: job.id, files, stats: meter.stats(files) } as T & MarkerBase;
    await faultHooks().beforeCommit?.();
    await writeSynced(path.join(tmp, MARKER), JSON.stringify(sealMarker(marker)), true);
    await syncDir(tmp);
    return await placeTask(at, tmp, marker);
  } catch (e) {
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw e;
  }
}

/**
 * Records a failed attempt of a task (its error and when) next to the task's directory, for `job
 * status`; the record goes when the task commits. A record that cannot be written is not an error
 * of its own: the task's error is what the caller sees.
 */
async function recordFailure(workDir: string, stage: string, task: number, e: unknown): Promise<void> {
  const err = e instanceof Error ? e : new Error(String(e));
  const rec: FailedRecord = { stage, task, error: err.message, kind: err.constructor.name, at: Date.now(), host: hostname(), pid: process.pid };
  const file = failedFile(workDir, stage, task);
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fsp.writeFile(tmp, JSON.stringify(rec) + '\n');
    await fsp.rename(tmp, file);
  } catch {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
  }
}

/** The failed-attempt record of a task, if one is there and readable. */
export function readFailed(workDir: string, stage: string, task: number): FailedRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(failedFile(workDir, stage, task), 'utf8')) as FailedRecord;
    return r && typeof r.error === 'string' ? r : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The path of text output `name` of a committed task, after checking its size against the marker;
 * `verify` (given to a reader of the whole file) checks its SHA-256 once read.
 */
export function taskText(at: Omit<TaskRef, 'job'>, marker: MarkerBase, name: string): { path: string; verify(hash: string): void } {
  const { workDir, stage, task } = at;
  const file = path.join(taskDir(workDir, stage, task), name);
  const want = marker.files[name];
  if (!want) throw new DamagedFileError(`${file}: not listed in its task's marker: the job directory is damaged`);
  let size: number;
  try {
    size = statSync(file).size;
  } catch (e) {
    throw new DamagedFileError(`${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (size !== want.bytes) throw new DamagedFileError(`${file}: truncated or damaged (${size} bytes, its task wrote ${want.bytes})`);
  return {
    path: file,
    verify(hash) {
      if (want.sha256 !== undefined && hash !== want.sha256) throw new DamagedFileError(`${file}: damaged (its SHA-256 differs from the one its task wrote)`);
    },
  };
}

/** Whether process `pid` is alive on this machine (a task's temp directory names its pid). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Temp directories of tasks under `workDir` (leftovers of killed tasks, or tasks still running). */
export async function tempDirs(workDir: string): Promise<string[]> {
  const out: string[] = [];
  const stages = await fsp.readdir(workDir).catch(() => [] as string[]);
  for (const s of stages) {
    const dir = path.join(workDir, s);
    let names: string[];
    try {
      names = await fsp.readdir(dir);
    } catch {
      continue;
    }
    for (const n of names) if (n.startsWith('.') && n.includes('.tmp-')) out.push(path.join(dir, n));
    // Link rounds' task directories are a level down (link/r0003/).
    if (names.some((n) => /^r\d{4,}$/.test(n))) out.push(...(await tempDirs(dir)).filter((d) => /^r\d{4,}$/.test(path.basename(path.dirname(d)))));
  }
  return out;
}
