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
import type { BandKeyTable, SharedBuckets } from '../lsh/candidates.js';
import type { RangeSetsRequest, ScoreJob, SetTargets, SignRangeReply, SignRangeRequest } from './rangeJobs.js';
import type { ByteRange, LineParseSpec } from '../io/ranges/lineRanges.js';

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
  signRange(
    spec: LineParseSpec,
    range: ByteRange,
    o: { first: boolean; bands: { bands: number; rows: number }; withSignatures?: boolean },
  ): Promise<SignRangeReply> {
    const { first, bands, withSignatures = false } = o;
    return this.pool.run({ id: this.nextId++, kind: 'signRange', spec, start: range.start, end: range.end, first, bands, withSignatures }) as Promise<
      SignRangeReply
    >;
  }

  /**
   * {@link sets} for the documents whose lines start at `starts` (ascending; lengths without the
   * line break), read and parsed on the worker.
   */
  rangeSets(
    spec: LineParseSpec,
    lines: { starts: Float64Array; lengths: Int32Array; firstLine: number },
    arena: SetTargets,
    score?: ScoreJob,
  ): Promise<SignReply> {
    const { starts, lengths, firstLine } = lines;
    return this.pool.run({ id: this.nextId++, kind: 'rangeSets', spec, starts, lengths, firstLine, arena, score }) as Promise<SignReply>;
  }

  /** Signs one batch; resolves with that batch's reply. */
  run(texts: string[], bands?: { bands: number; rows: number }, withSignatures = false): Promise<SignReply> {
    return this.pool.run({ id: this.nextId++, texts, bands, withSignatures }) as Promise<SignReply>;
  }

  /**
   * `collectSharedBuckets` of consecutive band ranges on the workers, two ranges per worker, in band
   * order (join them with `joinRanges`). The keys' arrays must be views of SharedArrayBuffers (the
   * workers read them in place); otherwise, with one worker, or with fewer than `minDocs`
   * documents, this returns undefined: bucket here. Below ~half a million documents the workers'
   * start on this code and the join cost more than they saved (300k documents: 293–309 ms here,
   * 359–405 ms on 2 workers).
   */
  bucketRanges(keys: BandKeyTable, minDocs = 1 << 19): Promise<SharedBuckets>[] | undefined {
    const shared = [keys.hi, keys.lo, keys.present].every((a) => a.buffer instanceof SharedArrayBuffer);
    const bands = keys.bands;
    if (!shared || this.size < 2 || keys.n < minDocs) return undefined;
    const ranges = Math.min(2 * this.size, bands);
    const jobs: Promise<SharedBuckets>[] = [];
    for (let g = 0; g < ranges; g++) {
      const from = Math.floor((g * bands) / ranges);
      const to = Math.floor(((g + 1) * bands) / ranges);
      const job = this.pool.run({ id: this.nextId++, kind: 'buckets', keys, from, to }) as Promise<BucketsReply>;
      // A caller that stops at an earlier range (too many pairs) never awaits the later ones.
      job.catch(() => undefined);
      jobs.push(job);
    }
    return jobs;
  }

  /** Stops the workers. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
