/**
 * Restartable tasks: every task writes into a temp directory of its own and commits by renaming it
 * to its final name, with a completion marker (`_SUCCESS.json`, the task's counters) written last
 * inside it. Later stages read only final directories that hold the marker, so the leftovers of a
 * killed task (a `.NAME.tmp-…` directory) are never read as complete, and running a task again is
 * idempotent: the first commit wins, a later identical one is discarded.
 * @module
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** The completion marker's file name inside a committed task directory. */
export const MARKER = '_SUCCESS.json';

/** The final directory of task `task` of `stage` under `workDir`. */
export function taskDir(workDir: string, stage: string, task: number): string {
  return path.join(workDir, stage, String(task).padStart(5, '0'));
}

/** The marker of a committed task, or undefined when the task has not completed. */
export function readMarker<T = Record<string, unknown>>(workDir: string, stage: string, task: number): T | undefined {
  try {
    return JSON.parse(readFileSync(path.join(taskDir(workDir, stage, task), MARKER), 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The marker of a task that must have completed (throws naming the stage and task otherwise). */
export function requireMarker<T = Record<string, unknown>>(workDir: string, stage: string, task: number): T {
  const m = readMarker<T>(workDir, stage, task);
  if (!m) throw new Error(`${stage} task ${task} has not completed (no ${path.join(taskDir(workDir, stage, task), MARKER)}): run that stage first`);
  return m;
}

/** A hook for tests and fault drills: NEARDUP_FAULT_PAUSE_MS pauses a task after writing its temp output, before its commit. */
async function faultPause(): Promise<void> {
  const ms = Number(process.env.NEARDUP_FAULT_PAUSE_MS ?? 0);
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
}

/**
 * Runs a task: `build` writes its files into a fresh temp directory and returns the counters for the
 * marker; the directory is then renamed into place. When the task has already completed, `build` is
 * not called and the existing marker is returned (idempotent reruns).
 */
export async function commitTask<T extends object>(workDir: string, stage: string, task: number, build: (dir: string) => Promise<T>): Promise<T> {
  const done = readMarker<T>(workDir, stage, task);
  if (done) return done;
  const final = taskDir(workDir, stage, task);
  const parent = path.dirname(final);
  await fsp.mkdir(parent, { recursive: true });
  const tmp = path.join(parent, `.${path.basename(final)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await fsp.mkdir(tmp);
  try {
    const marker = await build(tmp);
    await faultPause();
    await fsp.writeFile(path.join(tmp, MARKER), JSON.stringify(marker));
    try {
      await fsp.rename(tmp, final);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Another run of the same task committed first (a task retried while a slow first run was
      // still going): its output is the same, keep it. A directory without the marker is the
      // leftover of a crashed commit on a filesystem without atomic rename: replace it.
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
      const other = readMarker<T>(workDir, stage, task);
      if (other) {
        await fsp.rm(tmp, { recursive: true, force: true });
        return other;
      }
      await fsp.rm(final, { recursive: true, force: true });
      await fsp.rename(tmp, final);
    }
    return marker;
  } catch (e) {
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw e;
  }
}

/** Temp directories of tasks under `workDir` (leftovers of killed tasks, or tasks still running). */
export async function tempDirs(workDir: string): Promise<string[]> {
  const out: string[] = [];
  let stages: string[];
  try {
    stages = await fsp.readdir(workDir);
  } catch {
    return out;
  }
  for (const s of stages) {
    const dir = path.join(workDir, s);
    let names: string[];
    try {
      names = await fsp.readdir(dir);
    } catch {
      continue;
    }
    for (const n of names) if (n.startsWith('.') && n.includes('.tmp-')) out.push(path.join(dir, n));
  }
  return out;
}
