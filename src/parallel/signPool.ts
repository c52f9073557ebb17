/**
 * A pool of worker threads that sign batches of texts. Results come back per batch, so the caller
 * keeps document order no matter which worker signed what: the output is identical for any number
 * of workers.
 * @module
 */
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { TextSignerOptions } from '../sketch/textSigner.js';
import type { SignReply, SignRequest } from './signWorker.js';

/** Options of {@link SignPool}. */
export interface SignPoolOptions extends TextSignerOptions {
  /** Worker threads. Default: all cores (`os.availableParallelism()`). */
  workers?: number;
}

/** The default worker count: every core. */
export function defaultWorkers(): number {
  return Math.max(1, availableParallelism());
}

/** A fixed set of signing workers with a queue of batches. */
export class SignPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: { req: SignRequest; resolve: (r: SignReply) => void; reject: (e: Error) => void }[] = [];
  private readonly pending = new Map<Worker, { resolve: (r: SignReply) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private closed = false;

  constructor(options: SignPoolOptions = {}) {
    const n = options.workers ?? defaultWorkers();
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`workers must be a positive integer, got ${n}`);
    const { workers: _w, ...signerOptions } = options;
    for (let i = 0; i < n; i++) {
      const w = new Worker(new URL('./signWorker.js', import.meta.url), { workerData: signerOptions });
      w.on('message', (r: SignReply) => this.done(w, r));
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

  /** Computes the fingerprint sets of one batch (see `SignReply.setData`). */
  sets(texts: string[]): Promise<SignReply> {
    if (this.closed) return Promise.reject(new Error('sign pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ req: { id: this.nextId++, texts, sets: true }, resolve, reject });
      this.pump();
    });
  }

  /** Signs one batch; resolves with that batch's reply. */
  run(texts: string[], bands?: { bands: number; rows: number }, withSignatures = false): Promise<SignReply> {
    if (this.closed) return Promise.reject(new Error('sign pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ req: { id: this.nextId++, texts, bands, withSignatures }, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const w = this.idle.pop()!;
      const job = this.queue.shift()!;
      this.pending.set(w, job);
      w.ref();
      w.postMessage(job.req);
    }
  }

  private done(w: Worker, r: SignReply): void {
    const job = this.pending.get(w);
    this.pending.delete(w);
    w.unref();
    this.idle.push(w);
    if (job) {
      if (r.error) job.reject(new Error(`signing worker failed: ${r.error}`));
      else job.resolve(r);
    }
    this.pump();
  }

  private fail(w: Worker, e: Error): void {
    const job = this.pending.get(w);
    this.pending.delete(w);
    job?.reject(e);
  }

  /** Stops the workers. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
