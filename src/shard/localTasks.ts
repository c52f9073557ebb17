/**
 * Running a stage's tasks on every core of this machine (`neardup job … --local`): a few forked
 * task processes (src/shard/taskChild.ts), each taking the next task when it finishes one, so a
 * local job uses the machine as two workers would.
 * @module
 */
import { fork, type ChildProcess } from 'node:child_process';
import { InputError, UsageError } from '../io/errors.js';
import type { StageName } from './job.js';

/** A task for a task process. */
export interface TaskRequest {
  workDir: string;
  stage: string;
  task: number;
}

/** A task process's answer: done, or the task's error. */
export interface TaskReply {
  task: number;
  error?: { kind: 'input' | 'usage' | 'other'; message: string; file?: string; line?: number; reason?: string; position?: string };
}

/** The error a task process reported, rebuilt so that it exits as it would have in this process. */
function rebuilt(e: NonNullable<TaskReply['error']>): Error {
  if (e.kind === 'input') return new InputError(e.file!, e.line, e.reason!, e.position);
  if (e.kind === 'usage') return new UsageError(e.message);
  return new Error(e.message);
}

/**
 * Task processes kept for the stages of one job run: forking fresh ones per stage cost each stage
 * their start-up (~0.3 s of a core each), and threw away what the last stage's tasks had warmed.
 * {@link close} ends them.
 */
export class TaskProcesses {
  private readonly children: ChildProcess[] = [];

  /** @param size the most task processes at once (one per core). */
  constructor(private readonly size: number) {}

  /**
   * Runs tasks `tasks` of `stage` on up to `size` task processes; `onDone` after each. The first
   * error (in task order of completion) stops handing out tasks; it is thrown once the running
   * ones end.
   */
  async run(workDir: string, stage: StageName, tasks: readonly number[], onDone: (task: number) => void): Promise<void> {
    const queue = [...tasks];
    const n = Math.max(1, Math.min(this.size, queue.length));
    while (this.children.length < n) this.children.push(fork(new URL('./taskChild.js', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' }));
    let failure: Error | undefined;
    const one = (child: ChildProcess): Promise<void> =>
      new Promise((resolve) => {
        let current: number | undefined;
        const finish = (): void => {
          child.off('message', onMessage);
          child.off('exit', onExit);
          child.off('error', onError);
          resolve();
        };
        const next = (): void => {
          const t = failure ? undefined : queue.shift();
          if (t === undefined) return finish();
          current = t;
          child.send({ workDir, stage, task: t } satisfies TaskRequest);
        };
        const onMessage = (r: TaskReply): void => {
          current = undefined;
          if (r.error) failure ??= rebuilt(r.error);
          else onDone(r.task);
          next();
        };
        const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
          this.drop(child);
          if (current !== undefined) failure ??= new Error(`the task process running ${stage} task ${current} ended (${signal ?? `exit code ${code}`}) before the task did`);
          else failure ??= new Error(`a task process of ${stage} ended (${signal ?? `exit code ${code}`})`);
          finish();
        };
        const onError = (e: Error): void => {
          failure ??= e;
        };
        child.on('message', onMessage);
        child.on('exit', onExit);
        child.on('error', onError);
        next();
      });
    await Promise.all(this.children.slice(0, n).map(one));
    if (failure) {
      // A failed stage ends the run: do not keep processes that may still hold a task's state.
      this.close();
      throw failure;
    }
  }

  private drop(child: ChildProcess): void {
    const i = this.children.indexOf(child);
    if (i >= 0) this.children.splice(i, 1);
  }

  /** Ends the task processes. */
  close(): void {
    for (const c of this.children.splice(0)) {
      if (c.connected) c.disconnect();
      if (c.exitCode === null && c.signalCode === null) c.kill();
    }
  }
}

/** Runs tasks `tasks` of `stage` on `processes` forked task processes, ended when the stage ends; `onDone` after each. */
export async function runTasksInProcesses(workDir: string, stage: StageName, tasks: readonly number[], processes: number, onDone: (task: number) => void): Promise<void> {
  const pool = new TaskProcesses(processes);
  try {
    await pool.run(workDir, stage, tasks, onDone);
  } finally {
    pool.close();
  }
}
