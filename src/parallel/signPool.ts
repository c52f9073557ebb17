/**
 * A pool of worker threads that sign batches of texts. Results come back per batch, so the caller
 * keeps document order no matter which worker signed what: the output is identical for any number
 * of workers.
 * @module
 */
import { WorkerPool } from './workerPool.js';
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
  private readonly pool: WorkerPool<SignRequest, SignReply>;
  private nextId = 0;

  constructor(options: SignPoolOptions = {}) {
    const n = options.workers ?? defaultWorkers();
    const { workers: _w, ...signerOptions } = options;
    this.pool = new WorkerPool(new URL('./signWorker.js', import.meta.url), signerOptions, n, 'signing worker');
  }

  /** Number of workers. */
  get size(): number {
    return this.pool.size;
  }

  /**
   * Computes the fingerprint sets of one batch (see `SignReply.setData`), sorted or, with `unsorted`,
   * in any order; with `score`, also scores pairs against them (see `SignRequest.score`).
   */
  sets(texts: string[], unsorted = false, score?: SignRequest['score']): Promise<SignReply> {
    return this.pool.run({ id: this.nextId++, texts, sets: true, unsorted, score });
  }

  /** Signs one batch; resolves with that batch's reply. */
  run(texts: string[], bands?: { bands: number; rows: number }, withSignatures = false): Promise<SignReply> {
    return this.pool.run({ id: this.nextId++, texts, bands, withSignatures });
  }

  /** Stops the workers. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
