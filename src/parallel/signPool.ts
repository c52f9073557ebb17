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
  private readonly pool: WorkerPool<SignRequest | SignRangeRequest | RangeSetsRequest, SignReply | SignRangeReply>;
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

  /** Stops the workers. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
