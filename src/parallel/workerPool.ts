/**
 * A fixed set of worker threads with a queue of jobs: one job per idle worker, replies matched to
 * their job, workers unreferenced while idle (an idle pool never keeps the process alive).
 * @module
 */
import { Worker } from 'node:worker_threads';

/** A reply a worker posts back: `error` set when the job failed there. */
export interface WorkerReply {
  error?: string;
}

/** A job: its request, and the promise the caller holds with its settle functions. */
interface Job<Req, Rep> {
  req: Req;
  transfer: ArrayBuffer[];
  resolve: (r: Rep) => void;
  reject: (e: Error) => void;
  promise: Promise<Rep>;
}

/** A pool of `size` workers started from `script`, each with `workerData`. */
export class WorkerPool<Req, Rep extends WorkerReply> {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: Job<Req, Rep>[] = [];
  private readonly pending = new Map<Worker, Job<Req, Rep>>();
  private closed = false;
  /** Called by the last reply of a running job once the pool is closing. */
  private drained: (() => void) | undefined;

  /** Starts `size` workers; `what` names them in errors ("signing worker failed: …"). */
  constructor(
    script: URL,
    workerData: unknown,
    size: number,
    private readonly what: string,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`workers must be a positive integer, got ${size}`);
    for (let i = 0; i < size; i++) {
      const w = new Worker(script, { workerData });
      w.on('message', (r: Rep) => this.done(w, r));
      w.on('error', (e) => this.fail(w, e));
      w.unref();
      this.workers.push(w);
      this.idle.push(w);
    }
  }

  /** Number of workers. */
  get size(): number {
    return this.workers.length;
  }

  /** Runs one job on the next idle worker; `transfer` lists buffers moved (not copied) to it. */
  run(req: Req, transfer: ArrayBuffer[] = []): Promise<Rep> {
    if (this.closed) return Promise.reject(new Error(`${this.what} pool is closed`));
    let job: Job<Req, Rep> | undefined;
    const promise = new Promise<Rep>((resolve, reject) => {
      job = { req, transfer, resolve, reject, promise: undefined as unknown as Promise<Rep> };
    });
    job!.promise = promise;
    this.queue.push(job!);
    this.pump();
    return promise;
  }

  private pump(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const w = this.idle.pop()!;
      const job = this.queue.shift()!;
      this.pending.set(w, job);
      w.ref();
      w.postMessage(job.req, job.transfer);
    }
  }

  private done(w: Worker, r: Rep): void {
    const job = this.pending.get(w);
    this.pending.delete(w);
    w.unref();
    this.idle.push(w);
    if (job) {
      if (r.error) job.reject(new Error(`${this.what} failed: ${r.error}`));
      else job.resolve(r);
    }
    if (this.closed && this.pending.size === 0) this.drained?.();
    this.pump();
  }

  private fail(w: Worker, e: Error): void {
    const job = this.pending.get(w);
    this.pending.delete(w);
    job?.reject(e);
    if (this.closed && this.pending.size === 0) this.drained?.();
  }

  /**
   * Rejects a job the closing pool will not run. Its caller has usually stopped waiting (a pipeline
   * closing after a failure): the rejection is marked handled, so it cannot crash the process as an
   * unhandled rejection, while a caller that still awaits it gets the error.
   */
  private abandon(job: Job<Req, Rep>): void {
    job.promise.catch(() => undefined);
    job.reject(new Error(`${this.what} pool is closed`));
  }

  /**
   * Stops the workers; queued jobs are rejected. Jobs already running are let finish first (their
   * replies still settle their promises): terminating a worker in the middle of a job sometimes left
   * `terminate()` pending forever on Node 20, with nothing keeping the event loop alive, so a
   * pipeline closing its pool after a failure could stall. A job that runs past 10 s is not waited for.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.abandon(job);
    if (this.pending.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 10_000);
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    for (const job of this.pending.values()) this.abandon(job);
    this.pending.clear();
    // Idle workers are unreferenced; referenced again, their exit keeps the event loop alive until
    // terminate() resolves.
    await Promise.all(
      this.workers.map((w) => {
        w.ref();
        return w.terminate();
      }),
    );
  }
}
