/**
 * A pool of worker threads that sign batches of texts. Results come back per batch, so the caller
 * keeps document order no matter which worker signed what: the output is identical for any number
 * of workers.
 * @module
 */
import { WorkerPool } from './workerPool.js';
import { availableParallelism } from 'node:os';
import type { TextSignerOptions } from '../sketch/textSigner.js';
import type { BucketsReply, BucketsRequest, SignReply, SignRequest } from './signWorker.js';
import { collectSharedBuckets, mergeSharedBuckets, type BandKeyTable, type SharedBuckets } from '../lsh/candidates.js';
import type { RangeSetsRequest, ScoreJob, SetTargets, SignRangeReply, SignRangeRequest } from './rangeJobs.js';
import type { ByteRange, LineParseSpec } from '../io/lineRanges.js';

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
  private readonly pool: WorkerPool<SignRequest | SignRangeRequest | RangeSetsRequest | BucketsRequest, SignReply | SignRangeReply | BucketsReply>;
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
   * Writes the unsorted fingerprint sets of one batch into their blocks of the shared set arena
   * and, with `score`, scores pairs against them (see `SignRequest.arena` and `SignRequest.score`).
   */
  sets(texts: string[], arena: SetTargets, score?: ScoreJob): Promise<SignReply> {
    return this.pool.run({ id: this.nextId++, texts, arena, score }) as Promise<SignReply>;
  }

  /**
   * Pass 1 over a byte range of a line-format file: the worker reads, parses and signs it, and
   * returns band keys (and signatures with `withSignatures`) with each record's place in the file.
   */
  signRange(spec: LineParseSpec, range: ByteRange, first: boolean, bands: { bands: number; rows: number }, withSignatures = false): Promise<SignRangeReply> {
    return this.pool.run({ id: this.nextId++, kind: 'signRange', spec, start: range.start, end: range.end, first, bands, withSignatures }) as Promise<SignRangeReply>;
  }

  /**
   * {@link sets} for the documents whose lines start at `starts` (ascending; lengths without the
   * line break), read and parsed on the worker.
   */
  rangeSets(spec: LineParseSpec, starts: Float64Array, lengths: Int32Array, firstLine: number, arena: SetTargets, score?: ScoreJob): Promise<SignReply> {
    return this.pool.run({ id: this.nextId++, kind: 'rangeSets', spec, starts, lengths, firstLine, arena, score }) as Promise<SignReply>;
  }

  /** Signs one batch; resolves with that batch's reply. */
  run(texts: string[], bands?: { bands: number; rows: number }, withSignatures = false): Promise<SignReply> {
    return this.pool.run({ id: this.nextId++, texts, bands, withSignatures }) as Promise<SignReply>;
  }

  /**
   * `collectSharedBuckets` over all bands, with the bands split into one consecutive range per
   * worker and the results joined in band order (`mergeSharedBuckets`): the same buckets and
   * counters as one pass on this thread. The keys' arrays must be views of SharedArrayBuffers (the
   * workers read them in place); otherwise, with one worker, or with fewer than `minDocs`
   * documents, the pass runs here: below ~half a million documents the workers' start on this code
   * and the join cost more than they saved (300k documents: 293–309 ms here, 359–405 ms on 2
   * workers; 1M: ~0.95 s here, 0.76–0.9 s on 2 workers).
   */
  async sharedBuckets(keys: BandKeyTable, minDocs = 1 << 19): Promise<SharedBuckets> {
    const shared = [keys.hi, keys.lo, keys.present].every((a) => a.buffer instanceof SharedArrayBuffer);
    const bands = keys.bands;
    const groups = Math.min(this.size, bands);
    if (!shared || groups < 2 || keys.n < minDocs) return collectSharedBuckets(keys);
    const jobs: Promise<BucketsReply>[] = [];
    for (let g = 0; g < groups; g++) {
      const from = Math.floor((g * bands) / groups);
      const to = Math.floor(((g + 1) * bands) / groups);
      jobs.push(this.pool.run({ id: this.nextId++, kind: 'buckets', keys, from, to }) as Promise<BucketsReply>);
    }
    return mergeSharedBuckets(await Promise.all(jobs));
  }

  /** Stops the workers. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
