/**
 * A job's work dir on a file system every worker mounts at the same path (local, NFS, Lustre, EFS):
 * tasks commit by renaming their temp directory into place (src/shard/files/commit.ts).
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isS3Url } from '../../io/s3/client.js';
import { processAlive as alive, readMarker, tempDirs } from '../files/commit.js';
import { isJobEntry, loadJob, saveJob, type JobSpec, type TaskStage } from '../files/job.js';
import { runTask } from '../stages/registry.js';
import { checkOutputClaim, markOutputDir, releaseOutputDir, type WorkDir } from './workDir.js';

function within(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Removes what the job wrote in `workDir` (its stage directories, then its plan), never an output
 * of the job (even one written inside a stage directory) nor any other file; then the directory
 * itself when nothing else is left. Returns what was removed.
 */
async function removeJobEntries(workDir: string, job: JobSpec): Promise<string[]> {
  const outputs = [job.output.dir, job.output.removed].filter((x): x is string => x !== undefined && !isS3Url(x));
  const names = (await fsp.readdir(workDir).catch(() => [] as string[])).filter(isJobEntry);
  // The plan last: a clean cut short leaves a plan to clean again.
  names.sort((a, b) => Number(a === 'job.json') - Number(b === 'job.json'));
  const gone: string[] = [];
  for (const n of names) {
    const p = path.join(workDir, n);
    if (outputs.some((o) => within(p, o))) continue;
    await fsp.rm(p, { recursive: true, force: true });
    gone.push(p);
  }
  await fsp.rmdir(workDir).catch(() => {}); // only when empty
  return gone;
}

/**
 * A directory on a file system every worker mounts at the same path: tasks commit by renaming
 * their temp directory into place (src/shard/files/commit.ts).
 */
export class PosixWorkDir implements WorkDir {
  constructor(readonly name: string) {}

  load(): Promise<JobSpec> {
    return Promise.resolve(loadJob(this.name));
  }

  save(spec: Omit<JobSpec, 'id' | 'version'>): Promise<JobSpec> {
    return saveJob(this.name, spec);
  }

  marker(job: JobSpec, stage: TaskStage, t: number): Promise<object | undefined> {
    return Promise.resolve(readMarker(this.name, job, stage, t));
  }

  isDone(job: JobSpec, stage: TaskStage, t: number): Promise<boolean> {
    return Promise.resolve(readMarker(this.name, job, stage, t) !== undefined);
  }

  async run(job: JobSpec, stage: TaskStage, t: number): Promise<object> {
    await checkOutputClaim(this, job, stage, () => this.isDone(job, stage, t));
    return runTask(this.name, stage, t, job);
  }

  withView<T>(_job: JobSpec, _report: boolean, fn: (dir: string) => Promise<T>): Promise<T> {
    return fn(this.name);
  }

  markOutput(job: JobSpec, complete: boolean): Promise<void> {
    return markOutputDir(this, job, complete);
  }

  async clean(job: JobSpec, all: boolean): Promise<string[]> {
    if (all) {
      await releaseOutputDir(this, job);
      return removeJobEntries(this.name, job);
    }
    // Temp directories of tasks whose process is gone on this machine (a running task's is kept).
    const gone = (await tempDirs(this.name)).filter((d) => {
      const m = /\.tmp-(\d+)-/.exec(path.basename(d));
      return !m || !alive(Number(m[1]));
    });
    for (const d of gone) await fsp.rm(d, { recursive: true, force: true });
    return gone;
  }
}
