/**
 * Signing a whole corpus on worker threads, in document order.
 * @module
 */
import { SignatureMatrix } from '../sketch/signatureMatrix.js';
import { createTextSigner } from '../sketch/textSigner.js';
import { SignPool, defaultWorkers, type SignPoolOptions } from './signPool.js';
import type { SignReply } from './signWorker.js';

/** Options of {@link signCorpusParallel}. */
export interface SignCorpusOptions extends SignPoolOptions {
  /** Texts per batch sent to a worker. Default 512. */
  batchSize?: number;
}

/**
 * Signs every text of `texts` (an array, iterable or async iterable) on `workers` threads (default:
 * all cores) and returns the signatures in document order. With `workers: 1`… or any N, the result is
 * the same as signing in this thread with `createTextSigner`. `workers: 0` signs in this thread.
 */
export async function signCorpusParallel(
  texts: Iterable<string> | AsyncIterable<string>,
  options: SignCorpusOptions = {},
): Promise<SignatureMatrix> {
  const workers = options.workers ?? defaultWorkers();
  const batchSize = options.batchSize ?? 512;
  if (workers === 0) {
    const signer = createTextSigner(options);
    const sigs = new SignatureMatrix(signer.numPerm);
    for await (const t of texts) {
      const i = sigs.push();
      sigs.present[i] = signer.signInto(t, sigs.row(i)) ? 1 : 0;
    }
    return sigs;
  }
  const numPerm = createTextSigner(options).numPerm;
  const pool = new SignPool({ ...options, workers });
  try {
    const sigs = new SignatureMatrix(numPerm);
    const inflight: Promise<SignReply>[] = [];
    const drain = async (): Promise<void> => {
      const r = await inflight.shift()!;
      for (let i = 0; i < r.count; i++) {
        const row = sigs.push();
        sigs.present[row] = r.present[i]!;
        if (r.present[i]) sigs.row(row).set(r.sigs!.subarray(i * numPerm, (i + 1) * numPerm));
      }
    };
    let batch: string[] = [];
    for await (const t of texts) {
      batch.push(t);
      if (batch.length === batchSize) {
        inflight.push(pool.run(batch));
        batch = [];
        // Bounded read-ahead: at most two batches per worker in flight.
        if (inflight.length >= workers * 2) await drain();
      }
    }
    if (batch.length > 0) inflight.push(pool.run(batch));
    while (inflight.length > 0) await drain();
    return sigs;
  } finally {
    await pool.close();
  }
}
