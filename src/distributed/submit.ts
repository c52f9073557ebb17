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
import type { Queue, QueueEvents } from 'bullmq';
import { type BullMQ, connectionFromUrl, DEFAULT_QUEUE, INPUT_FAILURE, loadBullmq, type TaskData } from './bullmq.js';
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
  await new Submission(wd, job, options, await loadBullmq()).run();
}

/** What the wait on one stage (or link round) keeps between polls. */
interface StageWait {
  stage: TaskStage;
  /** The stage's name in job ids, which hold no '/': a round's name is written with '-'. */
  tag: string;
  /** Task → its queue job id, for the tasks not yet committed. */
  pending: Map<number, string>;
  lastActivity: number;
  lastIdleNotice: number;
}

/** One submission of a job: its queue, its Redis deadlines and notices, and the wait on each stage. */
class Submission {
  private readonly workDir: string;
  private readonly queueName: string;
  private readonly where: string;
  private readonly notice: (message: string) => void;
  private readonly noticeMs: number;
  private readonly redisTimeoutMs: number;
  private readonly callMs: number;
  private readonly pollMs: number;
  private readonly queue: Queue<TaskData>;
  // A fresh suffix per submission (and per resubmission of a lost task): ids of an earlier, failed submission do not block re-adding.
  private readonly round = randomBytes(3).toString('hex');
  private resubmits = 0;
  private unreachableSince: number | undefined;
  private lastUnreachableNotice = 0;
  // A task's end wakes the wait at once (a stage's last task would otherwise wait up to a poll to
  // start the next stage, six times a job). Best effort: made once Redis answers, never reconnected
  // (a Redis that went away must not keep this process alive); the polls stay, for whatever it misses.
  private wake: (() => void) | undefined;
  private events: QueueEvents | undefined;

  constructor(private readonly wd: WorkDir, private readonly job: JobSpec, private readonly options: SubmitOptions, private readonly bullmq: BullMQ) {
    this.workDir = wd.name;
    this.queueName = options.queue ?? DEFAULT_QUEUE;
    this.where = `queue "${this.queueName}" on ${options.redis}`;
    this.notice = options.onNotice ?? (() => undefined);
    this.noticeMs = options.noticeMs ?? 30000;
    this.redisTimeoutMs = options.redisTimeoutMs ?? 120000;
    this.callMs = options.callTimeoutMs ?? 5000;
    this.pollMs = options.pollMs ?? 250;
    this.queue = new bullmq.Queue<TaskData>(this.queueName, { connection: { ...connectionFromUrl(options.redis), enableOfflineQueue: false } });
    this.queue.on('error', () => undefined); // Reported through the calls' own failures below.
  }

  async run(): Promise<void> {
    const { job, wd } = this;
    try {
      while ((await this.call('connect', () => this.queue.waitUntilReady())) === undefined) await new Promise((r) => setTimeout(r, this.pollMs * 4));
      this.listen();
      for (const stage of STAGES) {
        const total = taskCount(job, stage);
        if (total === 0) continue;
        // The link stage's rounds, each run like a stage; then its tasks, which record the last round.
        if (stage === 'link')
          await driveLink(job, {
            marker: (st, t) => wd.marker(job, st, t) as Promise<RoundState | undefined>,
            run: (st) => this.runStage(st, total),
          });
        await this.runStage(stage, total);
        await this.options.onStageDone?.(stage);
      }
    } finally {
      // Closing waits on Redis: never past a deadline.
      if (this.events) await deadline(this.events.close(), this.callMs).catch(() => undefined);
      await deadline(this.queue.close(), this.callMs).catch(() => this.queue.disconnect().catch(() => undefined));
    }
  }

  private listen(): void {
    const events = new this.bullmq.QueueEvents(this.queueName, {
      connection: { ...connectionFromUrl(this.options.redis), enableOfflineQueue: false, retryStrategy: () => null },
    });
    this.events = events;
    events.on('error', () => undefined);
    const woken = (): void => this.wake?.();
    events.on('completed', woken);
    events.on('failed', woken);
  }

  private nap(ms: number): Promise<void> {
    return new Promise<void>((r) => {
      const timer = setTimeout(() => r(), ms);
      this.wake = () => {
        clearTimeout(timer);
        r();
      };
    }).finally(() => (this.wake = undefined));
  }

  /** Runs a Redis call with a deadline; undefined while Redis is unreachable (said every noticeMs, fatal past redisTimeoutMs). */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      const v = await deadline(fn(), this.callMs);
      if (this.unreachableSince !== undefined) this.notice(`Redis is back (${this.where}); carrying on`);
      this.unreachableSince = undefined;
      return v;
    } catch (e) {
      const now = Date.now();
      this.unreachableSince ??= now;
      const down = now - this.unreachableSince;
      const why = e instanceof Error ? e.message : String(e);
      if (down >= this.redisTimeoutMs)
        throw new QueueUnreachableError(
          `cannot reach Redis for ${
            Math.round(down / 1000)
          } s (${this.where}; last error while trying to ${what}: ${why}); the job's finished tasks are kept in its --work-dir: submit the same command again once Redis is back`,
        );
      if (now - this.lastUnreachableNotice >= this.noticeMs || this.lastUnreachableNotice === 0) {
        this.lastUnreachableNotice = now;
        this.notice(
          `cannot reach Redis (${this.where}) for ${Math.round(down / 1000)} s: ${why}; still waiting (giving up after ${
            Math.round(this.redisTimeoutMs / 1000)
          } s)`,
        );
      }
      return undefined;
    }
  }

  private async add(stage: TaskStage, tasks: Iterable<[number, string]>): Promise<boolean> {
    return (await this.call('add tasks', () =>
      this.queue.addBulk(
        [...tasks].map(([task, jobId]) => ({
          name: `${stage}:${task}`,
          data: { workDir: this.workDir, stage, task },
          opts: { jobId, attempts: this.options.attempts ?? 3, backoff: { type: 'fixed', delay: 500 }, removeOnComplete: true, removeOnFail: false },
        })),
      ))) !== undefined;
  }

  /** Submits the unfinished tasks of a stage (or link round) and waits until all have committed. */
  private async runStage(stage: TaskStage, total: number): Promise<void> {
    const { job, wd, options } = this;
    const pending = new Map<number, string>();
    const tag = stage.replace('/', '-');
    for (let t = 0; t < total; t++) if (!(await wd.isDone(job, stage, t))) pending.set(t, `${job.id}.${this.round}.${tag}.${t}`);
    options.onProgress?.(stage, total - pending.size, total);
    if (pending.size === 0) return;
    while (!(await this.add(stage, pending))) await new Promise((r) => setTimeout(r, this.pollMs * 4));
    let polls = 0;
    const wait: StageWait = { stage, tag, pending, lastActivity: Date.now(), lastIdleNotice: Date.now() };
    let done = total - pending.size;
    while (pending.size > 0) {
      await this.nap(this.pollMs);
      for (const t of [...pending.keys()]) if (await wd.isDone(job, stage, t)) pending.delete(t);
      options.onProgress?.(stage, total - pending.size, total);
      if (total - pending.size > done) {
        done = total - pending.size;
        wait.lastActivity = Date.now();
      }
      // The queue is asked every few polls: failures, lost tasks and idle workers are rarer than progress.
      if (pending.size === 0 || ++polls % 4 !== 0) continue;
      await this.watchQueue(wait);
    }
  }

  /** Reads the pending tasks' states from the queue: throws on a task failed for good, submits lost tasks again, says when no worker takes any. */
  private async watchQueue(wait: StageWait): Promise<void> {
    const { job, wd } = this;
    const { stage, tag, pending } = wait;
    const ids = [...pending];
    const jobs = await this.call('read task states', () => Promise.all(ids.map(([, id]) => this.queue.getJob(id))));
    if (!jobs) return;
    const lost: [number, string][] = [];
    let started = false;
    for (let i = 0; i < ids.length; i++) {
      const [t, id] = ids[i]!;
      const j = jobs[i];
      if (await wd.isDone(job, stage, t)) continue;
      if (!j) {
        lost.push([t, `${job.id}.${this.round}.${tag}.${t}.r${++this.resubmits}`]);
        continue;
      }
      if (j.processedOn !== undefined && j.processedOn > wait.lastActivity) wait.lastActivity = j.processedOn;
      if (j.processedOn !== undefined && j.failedReason === undefined) started = true;
      if (j.failedReason === undefined || !(await this.call('read a failure', () => j.isFailed()))) continue;
      const reason = j.failedReason || 'unknown failure';
      // Stop the rest of this stage: nothing later can run.
      for (const other of pending.values()) if (other !== id) await this.call('remove tasks', () => this.queue.remove(other));
      await this.call('remove tasks', () => this.queue.remove(id));
      // The reason names the file and line (or row group) the reader stopped at.
      if (reason.startsWith(INPUT_FAILURE)) throw new UsageError(`${stage} task ${t}: ${reason.slice(INPUT_FAILURE.length)}`);
      throw new TaskFailedError(`${stage} task ${t} failed after ${j.attemptsMade} attempts: ${reason}`);
    }
    if (lost.length > 0 && (await this.add(stage, lost))) {
      for (const [t, id] of lost) pending.set(t, id);
      this.notice(
        `${lost.length} ${stage} task${
          lost.length === 1 ? ' was' : 's were'
        } no longer in ${this.where} (Redis restarted without persistence, or the queue was cleared): submitted again`,
      );
    }
    await this.noticeIdle(wait, started);
  }

  /** Says, every noticeMs, that no worker has taken a task of the stage, unless one is still running on a live worker. */
  private async noticeIdle(wait: StageWait, started: boolean): Promise<void> {
    const now = Date.now();
    if (now - wait.lastActivity < this.noticeMs || now - wait.lastIdleNotice < this.noticeMs) return;
    wait.lastIdleNotice = now;
    // Live by their beats (./liveness.ts); Redis's client list also keeps workers that stopped answering.
    const alive = await this.call('count workers', async () => liveWorkers(await this.queue.client, this.queueName));
    // A task taken and still running on a live worker is work, not idleness (a task may outlast noticeMs).
    if (started && alive !== undefined && alive > 0) {
      wait.lastActivity = now;
      return;
    }
    const connected = await this.call('count workers', () => this.queue.getWorkersCount());
    const silent = alive !== undefined && connected !== undefined && connected > alive
      ? `, ${connected - alive} more connected but silent (stopped, frozen or gone)`
      : '';
    this.notice(
      `no worker has taken a ${wait.stage} task for ${Math.round((now - wait.lastActivity) / 1000)} s (${this.where}, ${alive ?? '?'} worker${
        alive === 1 ? '' : 's'
      } alive${silent}): start "neardup worker --redis ${this.options.redis} --queue ${this.queueName}"; still waiting`,
    );
  }
}
