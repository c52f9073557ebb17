/**
 * Submitting a job's stages to BullMQ and waiting for them: the submitter enqueues every unfinished
 * task of a stage, waits until all have committed (the stage barrier), then enqueues the next stage.
 * Completion is read from the task markers in the job directory, so a resubmitted job resumes where
 * it stopped, whatever happened to the queue.
 *
 * The submitter watches the queue as well as the markers, with a deadline on every Redis call: a
 * task lost from the queue (Redis restarted without persistence, or flushed) is submitted again; a
 * Redis it cannot reach is reported every `noticeMs` and, past `redisTimeoutMs`, ends the wait with
 * an error; tasks that no worker takes are reported every `noticeMs`, naming the queue, Redis and
 * the workers alive (workers may still come, so it keeps waiting).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { UsageError } from '../common/errors.js';
import type { WorkDir } from '../shard/workdir/workDir.js';
import { STAGES, taskCount, type JobSpec, type TaskStage } from '../shard/files/job.js';
import { driveLink, type RoundState } from '../shard/stages/linkDriver.js';
import { connectionFromUrl, DEFAULT_QUEUE, INPUT_FAILURE, loadBullmq, type TaskData } from './bullmq.js';
import { liveWorkers } from './liveness.js';

/** Options of {@link submitJob}. */
export interface SubmitOptions {
  redis: string;
  queue?: string;
  /** Tries per task for failures that are not the input's (a crash, a full disk). Default 3. */
  attempts?: number;
  /** Called as tasks complete. */
  onProgress?: (stage: string, done: number, total: number) => void;
  /** Called with what the submitter has to say while it waits (no worker, Redis unreachable, a lost task). */
  onNotice?: (message: string) => void;
  /** Called once every task of a stage has committed, before the next stage is submitted (the CLI warns of decide's memory forecast after link). */
  onStageDone?: (stage: (typeof STAGES)[number]) => Promise<void>;
  /** Poll interval, ms. Default 250. */
  pollMs?: number;
  /** How long without a task taken by a worker (or without Redis) before saying so, and again after each such span, ms. Default 30000. */
  noticeMs?: number;
  /** How long Redis may stay unreachable before the submitter gives up, ms. Default 120000. */
  redisTimeoutMs?: number;
  /** Deadline of one Redis call, ms. Default 5000. */
  callTimeoutMs?: number;
}

/** A task that failed for good. */
export class TaskFailedError extends Error {
  override readonly name = 'TaskFailedError';
}

/** Redis could not be reached for longer than the submitter waits. */
export class QueueUnreachableError extends Error {
  override readonly name = 'QueueUnreachableError';
}

class CallTimeout extends Error {}

/** `p`, or a rejection after `ms` (the call itself is left to finish or fail on its own). */
function deadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CallTimeout(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/** Runs every stage of `job` on the queue's workers; resolves when all tasks have committed. */
export async function submitJob(wd: WorkDir, job: JobSpec, options: SubmitOptions): Promise<void> {
  const workDir = wd.name;
  const { Queue, QueueEvents } = await loadBullmq();
  const queueName = options.queue ?? DEFAULT_QUEUE;
  const where = `queue "${queueName}" on ${options.redis}`;
  const notice = options.onNotice ?? (() => undefined);
  const noticeMs = options.noticeMs ?? 30000;
  const redisTimeoutMs = options.redisTimeoutMs ?? 120000;
  const callMs = options.callTimeoutMs ?? 5000;
  const pollMs = options.pollMs ?? 250;
  const queue = new Queue<TaskData>(queueName, { connection: { ...connectionFromUrl(options.redis), enableOfflineQueue: false } });
  queue.on('error', () => undefined); // Reported through the calls' own failures below.
  // A task's end wakes the wait at once (a stage's last task would otherwise wait up to a poll to
  // start the next stage, six times a job). Best effort: made once Redis answers, never reconnected
  // (a Redis that went away must not keep this process alive); the polls stay, for whatever it misses.
  let wake: (() => void) | undefined;
  let events: InstanceType<typeof QueueEvents> | undefined;
  const listen = (): void => {
    events = new QueueEvents(queueName, { connection: { ...connectionFromUrl(options.redis), enableOfflineQueue: false, retryStrategy: () => null } });
    events.on('error', () => undefined);
    const woken = (): void => wake?.();
    events.on('completed', woken);
    events.on('failed', woken);
  };
  const nap = (ms: number): Promise<void> =>
    new Promise<void>((r) => {
      const timer = setTimeout(() => r(), ms);
      wake = () => {
        clearTimeout(timer);
        r();
      };
    }).finally(() => (wake = undefined));
  // A fresh suffix per submission (and per resubmission of a lost task): ids of an earlier, failed submission do not block re-adding.
  const round = randomBytes(3).toString('hex');
  let resubmits = 0;
  let unreachableSince: number | undefined;
  let lastUnreachableNotice = 0;

  /** Runs a Redis call with a deadline; undefined while Redis is unreachable (said every noticeMs, fatal past redisTimeoutMs). */
  const call = async <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      const v = await deadline(fn(), callMs);
      if (unreachableSince !== undefined) notice(`Redis is back (${where}); carrying on`);
      unreachableSince = undefined;
      return v;
    } catch (e) {
      const now = Date.now();
      unreachableSince ??= now;
      const down = now - unreachableSince;
      const why = e instanceof Error ? e.message : String(e);
      if (down >= redisTimeoutMs)
        throw new QueueUnreachableError(
          `cannot reach Redis for ${
            Math.round(down / 1000)
          } s (${where}; last error while trying to ${what}: ${why}); the job's finished tasks are kept in its --work-dir: submit the same command again once Redis is back`,
        );
      if (now - lastUnreachableNotice >= noticeMs || lastUnreachableNotice === 0) {
        lastUnreachableNotice = now;
        notice(
          `cannot reach Redis (${where}) for ${Math.round(down / 1000)} s: ${why}; still waiting (giving up after ${Math.round(redisTimeoutMs / 1000)} s)`,
        );
      }
      return undefined;
    }
  };

  const add = async (stage: TaskStage, tasks: Iterable<[number, string]>): Promise<boolean> =>
    (await call('add tasks', () =>
      queue.addBulk(
        [...tasks].map(([task, jobId]) => ({
          name: `${stage}:${task}`,
          data: { workDir, stage, task },
          opts: { jobId, attempts: options.attempts ?? 3, backoff: { type: 'fixed', delay: 500 }, removeOnComplete: true, removeOnFail: false },
        })),
      ))) !== undefined;

  try {
    while ((await call('connect', () => queue.waitUntilReady())) === undefined) await new Promise((r) => setTimeout(r, pollMs * 4));
    listen();
    for (const stage of STAGES) {
      const total = taskCount(job, stage);
      if (total === 0) continue;
      // The link stage's rounds, each run like a stage; then its tasks, which record the last round.
      if (stage === 'link')
        await driveLink(job, {
          marker: (st, t) => wd.marker(job, st, t) as Promise<RoundState | undefined>,
          run: (st) => runStage(st, total),
        });
      await runStage(stage, total);
      await options.onStageDone?.(stage);
    }
  } finally {
    // Closing waits on Redis: never past a deadline.
    if (events) await deadline(events.close(), callMs).catch(() => undefined);
    await deadline(queue.close(), callMs).catch(() => queue.disconnect().catch(() => undefined));
  }

  /** Submits the unfinished tasks of a stage (or link round) and waits until all have committed. */
  async function runStage(stage: TaskStage, total: number): Promise<void> {
    {
      const pending = new Map<number, string>();
      // Job ids hold no '/': a round's name is written with '-'.
      const tag = stage.replace('/', '-');
      for (let t = 0; t < total; t++) if (!(await wd.isDone(job, stage, t))) pending.set(t, `${job.id}.${round}.${tag}.${t}`);
      options.onProgress?.(stage, total - pending.size, total);
      if (pending.size === 0) return;
      while (!(await add(stage, pending))) await new Promise((r) => setTimeout(r, pollMs * 4));
      let polls = 0;
      let lastActivity = Date.now();
      let lastIdleNotice = Date.now();
      let done = total - pending.size;
      while (pending.size > 0) {
        await nap(pollMs);
        for (const t of [...pending.keys()]) if (await wd.isDone(job, stage, t)) pending.delete(t);
        options.onProgress?.(stage, total - pending.size, total);
        if (total - pending.size > done) {
          done = total - pending.size;
          lastActivity = Date.now();
        }
        // The queue is asked every few polls: failures, lost tasks and idle workers are rarer than progress.
        if (pending.size === 0 || ++polls % 4 !== 0) continue;
        const ids = [...pending];
        const jobs = await call('read task states', () => Promise.all(ids.map(([, id]) => queue.getJob(id))));
        if (!jobs) continue;
        const lost: [number, string][] = [];
        let started = false;
        for (let i = 0; i < ids.length; i++) {
          const [t, id] = ids[i]!;
          const j = jobs[i];
          if (await wd.isDone(job, stage, t)) continue;
          if (!j) {
            lost.push([t, `${job.id}.${round}.${tag}.${t}.r${++resubmits}`]);
            continue;
          }
          if (j.processedOn !== undefined && j.processedOn > lastActivity) lastActivity = j.processedOn;
          if (j.processedOn !== undefined && j.failedReason === undefined) started = true;
          if (j.failedReason === undefined || !(await call('read a failure', () => j.isFailed()))) continue;
          const reason = j.failedReason || 'unknown failure';
          // Stop the rest of this stage: nothing later can run.
          for (const other of pending.values()) if (other !== id) await call('remove tasks', () => queue.remove(other));
          await call('remove tasks', () => queue.remove(id));
          // The reason names the file and line (or row group) the reader stopped at.
          if (reason.startsWith(INPUT_FAILURE)) throw new UsageError(`${stage} task ${t}: ${reason.slice(INPUT_FAILURE.length)}`);
          throw new TaskFailedError(`${stage} task ${t} failed after ${j.attemptsMade} attempts: ${reason}`);
        }
        if (lost.length > 0 && (await add(stage, lost))) {
          for (const [t, id] of lost) pending.set(t, id);
          notice(
            `${lost.length} ${stage} task${
              lost.length === 1 ? ' was' : 's were'
            } no longer in ${where} (Redis restarted without persistence, or the queue was cleared): submitted again`,
          );
        }
        const now = Date.now();
        if (now - lastActivity >= noticeMs && now - lastIdleNotice >= noticeMs) {
          lastIdleNotice = now;
          // Live by their beats (./liveness.ts); Redis's client list also keeps workers that stopped answering.
          const alive = await call('count workers', async () => liveWorkers(await queue.client, queueName));
          // A task taken and still running on a live worker is work, not idleness (a task may outlast noticeMs).
          if (started && alive !== undefined && alive > 0) {
            lastActivity = now;
            continue;
          }
          const connected = await call('count workers', () => queue.getWorkersCount());
          const silent = alive !== undefined && connected !== undefined && connected > alive
            ? `, ${connected - alive} more connected but silent (stopped, frozen or gone)`
            : '';
          notice(
            `no worker has taken a ${stage} task for ${Math.round((now - lastActivity) / 1000)} s (${where}, ${alive ?? '?'} worker${
              alive === 1 ? '' : 's'
            } alive${silent}): start "neardup worker --redis ${options.redis} --queue ${queueName}"; still waiting`,
          );
        }
      }
    }
  }
}
