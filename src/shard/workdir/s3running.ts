/**
 * Running records of tasks on a work dir in object storage: a local work dir shows a running task
 * by its temp directory and a live pid, but a task on an `s3://` work dir runs in a spool on some
 * other machine, and nothing of it is in storage until it commits. So a task puts
 * `<stage>/.running-<task>-<id>.json` when it starts, rewrites it every {@link BEAT_MS} and deletes
 * it when it ends; `job status` counts a record written within {@link STALE_MS} as running, an older
 * one (a killed task's) as dead, and `job clean` removes the dead ones.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { remoteRunningFile } from '../files/commit.js';
import { STAGES } from '../files/job.js';
import { inParallel, PARALLEL, parseS3Url, s3Delete, s3Get, s3List, s3Put } from '../../io/s3/client.js';
import { faultHooks } from '../../common/faults.js';

/** How often a running task rewrites its record. */
export const BEAT_MS = 15_000;
/** A record older than this belongs to a task that is gone (three beats missed; clocks of the machines may differ a little). */
export const STALE_MS = 60_000;
/** A test's hook may take a record for stale sooner (src/common/faults.ts). */
const staleMs = (): number => faultHooks().runningStaleMs?.() ?? STALE_MS;

/** A running record's body. */
export interface RunningRecord {
  stage: string;
  task: number;
  host: string;
  pid: number;
  startedAt: number;
  /** The last beat (epoch ms, the writer's clock). */
  beat: number;
}

const pad = (t: number): string => String(t).padStart(5, '0');

/** Puts the running record of task `t` of `stage` under work dir `name` and keeps it fresh; the returned function stops the beats and deletes it. */
export async function markRunning(name: string, stage: string, t: number): Promise<() => Promise<void>> {
  const url = `${name}/${stage}/.running-${pad(t)}-${randomBytes(6).toString('hex')}.json`;
  const rec: RunningRecord = { stage, task: t, host: hostname(), pid: process.pid, startedAt: Date.now(), beat: Date.now() };
  const put = (): Promise<unknown> => s3Put(url, JSON.stringify({ ...rec, beat: Date.now() }) + '\n').catch(() => undefined);
  // Status is a convenience: a store that refuses the record must not fail the task.
  await put();
  const timer = setInterval(() => void put(), BEAT_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await s3Delete(url).catch(() => undefined);
  };
}

/** The running records of `stage` under work dir `name`, by task: fresh (running) and stale (dead) counts, and the stale records' URLs. */
export async function runningTasks(name: string, stage: string, now = Date.now()): Promise<Map<number, { live: number; dead: number; stale: string[] }>> {
  const { bucket, key } = parseS3Url(name);
  const prefix = `${key ? `${key}/` : ''}${stage}/.running-`;
  const out = new Map<number, { live: number; dead: number; stale: string[] }>();
  const objects = await s3List(bucket, prefix);
  await inParallel(
    objects.map((o) => async () => {
      const m = /\.running-(\d+)-[0-9a-f]+\.json$/.exec(o.key);
      if (!m) return;
      const url = `s3://${bucket}/${o.key}`;
      const body = await s3Get(url);
      if (!body) return; // Deleted since the listing: the task ended.
      let beat = 0;
      try {
        beat = Number((JSON.parse(body.toString('utf8')) as RunningRecord).beat) || 0;
      } catch {
        // A torn record counts as stale.
      }
      const t = Number(m[1]);
      const e = out.get(t) ?? { live: 0, dead: 0, stale: [] };
      if (now - beat <= staleMs()) e.live++;
      else {
        e.dead++;
        e.stale.push(url);
      }
      out.set(t, e);
    }),
    PARALLEL,
  );
  return out;
}

/** Writes the running tasks of `stage` into a local status view `dir` (`<stage>/.running-<task>.json`, read by `job status`). */
export async function runningView(name: string, stage: string, dir: string): Promise<void> {
  const running = await runningTasks(name, stage);
  if (running.size === 0) return;
  await fsp.mkdir(path.join(dir, stage), { recursive: true });
  for (const [t, r] of running) await fsp.writeFile(path.join(dir, stage, remoteRunningFile(t)), JSON.stringify({ live: r.live, dead: r.dead }));
}

/** The keys (within the bucket) of the running records of tasks gone (not rewritten for {@link STALE_MS}), for `job clean`. */
export async function staleRunning(name: string): Promise<string[]> {
  const out: string[] = [];
  for (const stage of STAGES) for (const r of (await runningTasks(name, stage)).values()) out.push(...r.stale.map((u) => parseS3Url(u).key));
  return out;
}
