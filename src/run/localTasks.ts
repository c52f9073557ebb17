/**
 * Running stage tasks in forked task processes (src/run/taskChild.ts): `neardup job … --local`
 * runs a stage on one per core, each taking the next task when it finishes one; a `neardup worker`
 * runs each task it takes from the queue in one of its own.
 * @module
 */
import { fork, type ChildProcess } from 'node:child_process';
import { InputError, UsageError } from '../common/errors.js';
import type { TaskStage } from '../shard/files/job.js';

/** Options of {@link TaskProcesses.run}. */
export interface RunTasksOptions {
  /** Called after each task that succeeded. */
  onDone?: (task: number) => void;
  /** The next stage, to start processes for in the places this one leaves idle. */
  next?: NextStage;
}

/** The stage after the one a {@link TaskProcesses.run} runs, and how many task processes it will use. */
export interface NextStage {
  stage: TaskStage;
  processes: number;
}

/** A task for a task process. */
export interface TaskRequest {
  workDir: string;
  stage: string;
  task: number;
}

/** A task process's answer: done with the task's marker, or the task's error. */
export interface TaskReply {
  task: number;
  marker?: object;
  error?: { kind: 'input' | 'usage' | 'other'; message: string; file?: string; line?: number; reason?: string; position?: string };
}

/** The error a task process reported, rebuilt so that it exits as it would have in this process. */
function rebuilt(e: NonNullable<TaskReply['error']>): Error {
  if (e.kind === 'input') return new InputError(e.file!, e.line, e.reason!, e.position);
  if (e.kind === 'usage') return new UsageError(e.message);
  return new Error(e.message);
}

/**
 * V8 flags of a task process. A task is one core's work and its process runs beside one per other
 * core, so V8's helper threads (concurrent marking and sweeping, background compilation) only took
 * CPU from the sibling tasks: 3.6 of a worker's 29.6 s of CPU over the join, route, verify and
 * components stages of the 1M-document bench job (bench/RESULTS.md, round 17).
 */
export const TASK_PROCESS_FLAGS: readonly string[] = ['--single-threaded'];

/** The most of a task process's standard error kept for the message of its death ({@link lastWords}). */
const TAIL_BYTES = 4096;
/** The lines of it that message quotes. */
const TAIL_LINES = 8;

/**
 * What a task process wrote last on standard error (an uncaught error's stack, a fatal V8 message),
 * as indented lines for the message of its death: its stderr is passed on to this process's as it
 * comes, but that may be a log nobody reads with the failure, or, for a job run inside a test's
 * process, not what the run's output captured, so the failure said only "exit code 1".
 */
function lastWords(tail: string): string {
  const lines = tail.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '').slice(-TAIL_LINES);
  return lines.length === 0 ? '' : `; its last lines on stderr:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}

/**
 * Task processes of one job run (or one worker), each serving the tasks of one stage: kept between
 * the tasks of a stage (their warmed code and kept arrays, and no start-up per task), replaced by a
 * fresh one for another stage. A process kept across stages held the memory of the stages before
 * (glibc keeps what V8 frees): the short-text planner bench's verify tasks peaked at 640–700 MB after
 * join in the same process, against 186–228 MB with a process per stage (the planner predicts 170 MB;
 * bench/RESULTS.md, round 18). {@link close} ends them.
 */
export class TaskProcesses {
  private readonly children: ChildProcess[] = [];
  private readonly busy = new Set<ChildProcess>();
  /** The stage each task process has served (none yet: absent). */
  private readonly stageOf = new Map<ChildProcess, TaskStage>();
  /** The end of what each task process wrote on stderr, and when its stderr has ended. */
  private readonly stderrOf = new WeakMap<ChildProcess, { tail: string; ended: Promise<void> }>();
  private closed = false;

  /** @param size the most task processes at once (one per core). */
  constructor(private readonly size: number) {}

  private spawn(): ChildProcess {
    const child = fork(new URL('./taskChild.js', import.meta.url), [], {
      execArgv: [...process.execArgv, ...TASK_PROCESS_FLAGS],
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      serialization: 'json',
    });
    // Passed on as it comes, its end kept for the message of an early death (lastWords).
    const err = { tail: '', ended: new Promise<void>((resolve) => child.stderr!.once('close', resolve)) };
    child.stderr!.on('data', (d: Buffer) => {
      process.stderr.write(d);
      err.tail = (err.tail + d.toString()).slice(-TAIL_BYTES);
    });
    // Like the inherited stderr it replaces, the pipe does not keep this process alive.
    (child.stderr as { unref?: () => void }).unref?.();
    this.stderrOf.set(child, err);
    this.children.push(child);
    // One that ends while idle is not handed a task.
    child.once('exit', () => this.drop(child));
    return child;
  }

  /**
   * Runs tasks `tasks` of `stage` on up to `size` task processes; `o.onDone` after each. The first
   * error (in task order of completion) stops handing out tasks; it is thrown once the running
   * ones end. With `o.next`, the places this stage leaves idle (fewer tasks than processes, or lanes
   * that ran out of tasks) start fresh processes for the next stage while this one still runs.
   */
  async run(workDir: string, stage: TaskStage, tasks: readonly number[], o: RunTasksOptions = {}): Promise<void> {
    const { onDone, next } = o;
    const queue = [...tasks];
    let failure: Error | undefined;
    // One lane per task process, each taking the next task when its last one ends; a lane that runs
    // out of tasks while others still run hands its process's place to the next stage.
    const lane = async (): Promise<void> => {
      for (let t = queue.shift(); t !== undefined && failure === undefined; t = queue.shift()) {
        try {
          await this.runOne(workDir, stage, t);
          onDone?.(t);
        } catch (e) {
          failure ??= e as Error;
        }
      }
      if (next && failure === undefined && !this.closed) this.prepare(next.stage, next.processes);
    };
    const lanes = Math.max(1, Math.min(this.size, queue.length));
    // Each lane takes its process before the first await: the places left over start the next stage's.
    const running = Array.from({ length: lanes }, lane);
    if (next && lanes < this.size) this.prepare(next.stage, Math.min(next.processes, this.size - lanes));
    await Promise.all(running);
    if (failure) {
      // A failed stage ends the run: do not keep processes that may still hold a task's state.
      this.close();
      throw failure;
    }
  }

  /** The task processes now: pid, the stage served or readied for (none: fresh), and whether a task runs. */
  get processes(): { pid: number; stage?: TaskStage; busy: boolean }[] {
    return this.children.map((c) => ({ pid: c.pid!, stage: this.stageOf.get(c), busy: this.busy.has(c) }));
  }

  /** Starts all `size` task processes now, so that the first tasks do not wait for them. */
  start(): void {
    while (this.children.length < this.size) this.spawn();
  }

  /**
   * Readies `count` idle task processes (at most `size` in all) for `stage` now, so that its first
   * tasks do not wait for a start: ends every idle one that has served or was readied for another
   * stage (its memory is that stage's), and forks fresh ones for `stage`.
   */
  prepare(stage: TaskStage, count = this.size): void {
    for (const c of [...this.children]) if (!this.busy.has(c) && this.stageOf.has(c) && this.stageOf.get(c) !== stage) this.retire(c);
    let ready = this.children.filter((c) => !this.busy.has(c)).length;
    while (ready < count && this.children.length < this.size) {
      this.stageOf.set(this.spawn(), stage);
      ready++;
    }
  }

  /** Ends an idle task process (it exits when disconnected). */
  private retire(child: ChildProcess): void {
    this.drop(child);
    if (child.connected) child.disconnect();
  }

  /**
   * Runs task `task` of `stage` in an idle task process (forked while fewer than `size` run) and
   * resolves with its marker. At most `size` at once. A task process that ends before its task
   * does is dropped and the task rejected, so that the queue runs it again.
   */
  runOne(workDir: string, stage: TaskStage, task: number): Promise<object> {
    const idle = this.children.filter((c) => !this.busy.has(c));
    let child = idle.find((c) => (this.stageOf.get(c) ?? stage) === stage);
    // Only idle processes of another stage: one of them makes room for a fresh one.
    if (!child && idle.length > 0) this.retire(idle[0]!);
    if (!child) {
      if (this.children.length >= this.size) return Promise.reject(new Error(`more than ${this.size} tasks at once on ${this.size} task processes`));
      child = this.spawn();
    }
    const c = child;
    this.busy.add(c);
    this.stageOf.set(c, stage);
    return new Promise<object>((resolve, reject) => {
      let failure: Error | undefined;
      const settle = (): void => {
        c.off('message', onMessage);
        c.off('exit', onExit);
        c.off('error', onError);
        this.busy.delete(c);
      };
      const onMessage = (r: TaskReply): void => {
        settle();
        if (r.error) reject(rebuilt(r.error));
        else resolve(r.marker ?? {});
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        settle();
        this.drop(c);
        // A task left by close() never answers: its caller has stopped (a worker past its grace
        // leaves the task to run again elsewhere; its queue client, already closed, must not be
        // handed a failure).
        if (this.closed) return;
        if (failure) return reject(failure);
        // Its last writes may reach this process after its exit: waited for, a moment at most.
        const err = this.stderrOf.get(c);
        void Promise.race([err?.ended, new Promise((r) => setTimeout(r, 1000).unref())]).then(() => {
          reject(
            new Error(
              `the task process running ${stage} task ${task} ended (${signal ?? `exit code ${code}`}) before the task did${lastWords(err?.tail ?? '')}`,
            ),
          );
        });
      };
      // A failed send (the process is ending; one that has ended is no longer in the pool): its exit follows and rejects.
      const onError = (e: Error): void => {
        failure ??= e;
      };
      c.on('message', onMessage);
      c.on('exit', onExit);
      c.on('error', onError);
      c.send({ workDir, stage, task } satisfies TaskRequest);
    });
  }

  private drop(child: ChildProcess): void {
    const i = this.children.indexOf(child);
    if (i >= 0) this.children.splice(i, 1);
    this.stageOf.delete(child);
  }

  /** Ends the task processes (a running task is left undone). */
  close(): void {
    this.closed = true;
    this.busy.clear();
    for (const c of this.children.splice(0)) {
      if (c.connected) c.disconnect();
      // SIGKILL: a task process ignores SIGTERM and SIGINT (see src/run/taskChild.ts).
      if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    }
  }
}

/** Runs tasks `tasks` of `stage` on `processes` forked task processes, ended when the stage ends. */
export async function runTasksInProcesses(workDir: string, stage: TaskStage, tasks: readonly number[], processes: number): Promise<void> {
  const pool = new TaskProcesses(processes);
  try {
    await pool.run(workDir, stage, tasks);
  } finally {
    pool.close();
  }
}
