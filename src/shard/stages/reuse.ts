/**
 * Things a task process keeps between tasks: a `--local` task process or a worker runs many tasks
 * of a stage one after another, and making a signer (its WebAssembly memory) or growing a batch
 * buffer afresh in each one cost page faults and start-up time a single `neardup dedup` pays once.
 * Borrowed, not shared: a worker with `--concurrency` above 1 gets one per running task.
 * @module
 */
import { createTextSigner, type TextSigner } from '../../sketch/textSigner.js';
import type { JobSpec } from '../files/job.js';

/** A pool of reusable values made on demand; a borrowed value is back in the pool when `fn` settles. */
export class Reusable<T> {
  private readonly free: T[] = [];
  constructor(private readonly make: () => T) {}

  /** Runs `fn` with a value of its own. */
  async with<R>(fn: (value: T) => Promise<R>): Promise<R> {
    const value = this.free.pop() ?? this.make();
    try {
      return await fn(value);
    } finally {
      this.free.push(value);
    }
  }
}

const signers = new Map<string, Reusable<TextSigner>>();

/** Runs `fn` with a text signer of the job's shingle and MinHash options, reused between tasks. */
export function withSigner<R>(job: JobSpec, fn: (signer: TextSigner) => Promise<R>): Promise<R> {
  const key = JSON.stringify([job.shingle, job.minhash]);
  let pool = signers.get(key);
  if (!pool) signers.set(key, pool = new Reusable(() => createTextSigner({ shingle: job.shingle, minhash: job.minhash })));
  return pool.with(fn);
}
