/**
 * `neardup worker`: a BullMQ worker that runs stage tasks from the queue. Workers share nothing but
 * Redis and the job directory; any number may run on any machines. A task whose worker dies is
 * found by BullMQ's stalled-job check once its lock expires and is run again by another worker;
 * tasks commit atomically (src/shard/files/commit.ts), so the dead run's leftovers are never read.
 * @module
 */
import { isUserError } from '../common/errors.js';
import { TooManyCandidatesError } from '../shard/stages/join.js';
import { TaskProcesses } from '../run/localTasks.js';
import { parseTaskStage } from '../shard/stages/registry.js';
import { connectionFromUrl, DEFAULT_QUEUE, INPUT_FAILURE, loadBullmq, type TaskData } from './bullmq.js';
import { startBeats } from './liveness.js';

/** Options of {@link runWorker}. */
export interface WorkerOptions {
  redis: string;
  queue?: string;
  /** Tasks run at once, each in a task process of its own. Default 1 (tasks are CPU-bound). */
  concurrency?: number;
  /** Lock duration, ms: a task of a worker silent for this long is taken as stalled. Default 30000. */
  lockMs?: number;
  /** How often this worker checks for stalled tasks, ms. Default: lockMs. */
  stalledMs?: number;
  /** Lines of log (task start/end) go here. */
  log?: (line: string) => void;
  /** Stops the worker when aborted (SIGINT/SIGTERM in the CLI). Default: run until then. */
  signal?: AbortSignal;
  /** Once stopped: how long a running task may go on to commit before the worker leaves it (it runs again elsewhere), ms. Default 10000. */
  graceMs?: number;
}

/** Runs a worker until `signal` aborts (or SIGINT/SIGTERM in the CLI). */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const { Worker, UnrecoverableError } = await loadBullmq();
  const log = options.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const lockDuration = options.lockMs ?? 30000;
  const concurrency = options.concurrency ?? 1;
  // Tasks run in task processes of their own, as in `job --local` (src/run/localTasks.ts): this
  // process keeps the queue, its locks and its connection; theirs keep each task's arrays, warmed
  // code and the plans of the work dirs they have run.
  const tasks = new TaskProcesses(concurrency);
  let running = 0;
  const worker = new Worker<TaskData>(
    options.queue ?? DEFAULT_QUEUE,
    async (job) => {
      const { workDir, stage, task } = job.data;
      log(`task start ${stage} ${task} ${workDir} (attempt ${job.attemptsMade + 1})`);
      const t0 = performance.now();
      running++;
      try {
        const marker = await tasks.runOne(workDir, parseTaskStage(stage), task);
        log(`task done ${stage} ${task} in ${Math.round(performance.now() - t0)} ms`);
        return marker;
      } catch (e) {
        const msg = (e as Error)?.message ?? String(e);
        log(`task failed ${stage} ${task}: ${msg}`);
        // Bad input fails the same way every time: no retries.
        if (isUserError(e) || e instanceof TooManyCandidatesError) throw new UnrecoverableError(INPUT_FAILURE + msg);
        throw e;
      } finally {
        running--;
      }
    },
    {
      connection: connectionFromUrl(options.redis),
      concurrency,
      lockDuration,
      stalledInterval: options.stalledMs ?? lockDuration,
      maxStalledCount: 3,
    },
  );
  worker.on('error', (e) => log(`worker error: ${e.message}`));
  const stopped = new Promise<'stop'>((resolve) => {
    if (options.signal?.aborted) return resolve('stop');
    options.signal?.addEventListener('abort', () => resolve('stop'), { once: true });
  });
  // While Redis is unreachable the worker never gets ready (its connection retries forever): a stop
  // must not wait for it.
  const ready = await Promise.race([worker.waitUntilReady().then(() => 'ready' as const), stopped]);
  if (ready === 'ready') {
    // Started while the queue is idle: a fresh worker's first task does not wait for one (~0.2 s).
    tasks.start();
    // For the submitter's count of live workers (./liveness.ts); beats end with the stop: no more tasks are taken.
    const beats = startBeats(worker.client, options.queue ?? DEFAULT_QUEUE, Math.min(5000, lockDuration / 2));
    log(`worker ready on queue ${options.queue ?? DEFAULT_QUEUE} (pid ${process.pid})`);
    await stopped;
    await Promise.race([beats.stop().catch(() => undefined), sleep(500)]);
  }
  // A graceful close waits for the running task and for Redis: neither may hold a stop for long.
  // Without a running task there is nothing to wait for but Redis, which may be down: 1 s at most.
  const grace = ready === 'ready' && running > 0 ? (options.graceMs ?? 10000) : Math.min(options.graceMs ?? 10000, 1000);
  const closed = worker.close().then(() => true, () => true);
  if (!(await Promise.race([closed, sleep(grace).then(() => false)]))) {
    log(
      running > 0 ? `worker stopping without waiting any longer (a running task is run again by another worker)` : `worker stopping without waiting for Redis`,
    );
    await Promise.race([worker.close(true).catch(() => undefined), sleep(1000)]);
    await Promise.race([worker.disconnect().catch(() => undefined), sleep(1000)]);
  }
  tasks.close();
  log('worker stopped');
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
