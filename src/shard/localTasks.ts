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
 * Runs tasks `tasks` of `stage` on `processes` forked task processes; `onDone` after each. The first
 * error (in task order of completion) stops handing out tasks; it is thrown once the running
 * ones end.
 */
export async function runTasksInProcesses(workDir: string, stage: StageName, tasks: readonly number[], processes: number, onDone: (task: number) => void): Promise<void> {
  const queue = [...tasks];
  const n = Math.max(1, Math.min(processes, queue.length));
  let failure: Error | undefined;
  const children: ChildProcess[] = [];
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const child = fork(new URL('./taskChild.js', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
      children.push(child);
      let current: number | undefined;
      const next = (): void => {
        const t = failure ? undefined : queue.shift();
        if (t === undefined) {
          child.disconnect();
          return;
        }
        current = t;
        child.send({ workDir, stage, task: t } satisfies TaskRequest);
      };
      child.on('message', (r: TaskReply) => {
        current = undefined;
        if (r.error) failure ??= rebuilt(r.error);
        else onDone(r.task);
        next();
      });
      child.on('exit', (code, signal) => {
        if (current !== undefined) failure ??= new Error(`the task process running ${stage} task ${current} ended (${signal ?? `exit code ${code}`}) before the task did`);
        resolve();
      });
      child.on('error', (e) => {
        failure ??= e;
      });
      next();
    });
  try {
    await Promise.all(Array.from({ length: n }, one));
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill();
  }
  if (failure) throw failure;
}
