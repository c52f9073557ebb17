/**
 * Submitting a job's stages to BullMQ and waiting for them: the submitter enqueues every unfinished
 * task of a stage, waits until all have committed (the stage barrier), then enqueues the next stage.
 * Completion is read from the task markers in the job directory, so a resubmitted job resumes where
 * it stopped, whatever happened to the queue.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { UsageError } from '../io/errors.js';
import { readMarker } from '../shard/commit.js';
import { STAGES, taskCount, type JobSpec, type StageName } from '../shard/job.js';
import { connectionFromUrl, DEFAULT_QUEUE, INPUT_FAILURE, loadBullmq, type TaskData } from './bullmq.js';

/** Options of {@link submitJob}. */
export interface SubmitOptions {
  redis: string;
  queue?: string;
  /** Tries per task for failures that are not the input's (a crash, a full disk). Default 3. */
  attempts?: number;
  /** Called as tasks complete. */
  onProgress?: (stage: StageName, done: number, total: number) => void;
  /** Poll interval, ms. Default 250. */
  pollMs?: number;
}

/** A task that failed for good. */
export class TaskFailedError extends Error {
  override readonly name = 'TaskFailedError';
}

/** Runs every stage of `job` on the queue's workers; resolves when all tasks have committed. */
export async function submitJob(workDir: string, job: JobSpec, options: SubmitOptions): Promise<void> {
  const { Queue } = await loadBullmq();
  const queue = new Queue<TaskData>(options.queue ?? DEFAULT_QUEUE, { connection: connectionFromUrl(options.redis) });
  // A fresh suffix per submission: ids of an earlier, failed submission do not block re-adding.
  const round = randomBytes(3).toString('hex');
  try {
    await queue.waitUntilReady();
    for (const stage of STAGES) {
      const total = taskCount(job, stage);
      if (total === 0) continue;
      const pending = new Map<number, string>();
      for (let t = 0; t < total; t++) if (!readMarker(workDir, job, stage, t)) pending.set(t, `${job.id}.${round}.${stage}.${t}`);
      options.onProgress?.(stage, total - pending.size, total);
      if (pending.size === 0) continue;
      await queue.addBulk(
        [...pending].map(([task, jobId]) => ({
          name: `${stage}:${task}`,
          data: { workDir, stage, task },
          opts: { jobId, attempts: options.attempts ?? 3, backoff: { type: 'fixed', delay: 500 }, removeOnComplete: true, removeOnFail: false },
        })),
      );
      let polls = 0;
      while (pending.size > 0) {
        await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
        for (const t of [...pending.keys()]) if (readMarker(workDir, job, stage, t)) pending.delete(t);
        options.onProgress?.(stage, total - pending.size, total);
        // Failures are rarer than progress: ask the queue every few polls.
        if (pending.size > 0 && ++polls % 4 === 0) {
          for (const [t, id] of pending) {
            const j = await queue.getJob(id);
            if (!j || !(await j.isFailed())) continue;
            if (readMarker(workDir, job, stage, t)) continue;
            const reason = j.failedReason ?? 'unknown failure';
            // Stop the rest of this stage: nothing later can run.
            for (const other of pending.values()) if (other !== id) await queue.remove(other).catch(() => 0);
            await queue.remove(id).catch(() => 0);
            // The reason names the file and line (or row group) the reader stopped at.
            if (reason.startsWith(INPUT_FAILURE)) throw new UsageError(`${stage} task ${t}: ${reason.slice(INPUT_FAILURE.length)}`);
            throw new TaskFailedError(`${stage} task ${t} failed after ${j.attemptsMade} attempts: ${reason}`);
          }
        }
      }
    }
  } finally {
    await queue.close();
  }
}
