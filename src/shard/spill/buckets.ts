/**
 * Rows grouped by an integer key out of core: rows (key x, y, value) are appended to bucket files,
 * each bucket a range of keys holding at most a row budget (a single key with more rows than the
 * budget is a bucket of its own), and read back bucket after bucket, grouped by key in the order
 * they were added (a counting sort: stable). The counts per key are known before the rows are
 * added (a first pass), so the buckets are cut exactly; memory is the counts (4 bytes a key), the
 * write buffers, and one bucket at a time. A row is 16 bytes: x and y as int32, the value as float64.
 * @module
 */
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Bytes of one row. */
export const ROW_BYTES = 16;
/** Most bucket files open at once: past it, buckets are made larger. */
const MAX_BUCKETS = 512;
/** Bytes of write buffer over all buckets. */
const BUFFER_BYTES = 16 * 2 ** 20;

/** A bucket read back: keys from..to−1; key k's rows are start[k − from] to start[k − from + 1] of x, y, v. */
export interface Bucket {
  from: number;
  to: number;
  start: Int32Array;
  x: Int32Array;
  y: Int32Array;
  v: Float64Array;
}

/** What a {@link KeyBuckets} is cut by. */
export interface BucketOptions {
  /** A directory of its own for the bucket files (removed by {@link KeyBuckets.remove}). */
  dir: string;
  /** Rows of each key 0..K−1 (every row added must be counted). */
  counts: Int32Array;
  /** Most rows a bucket holds. */
  rows: number;
}

/** Rows spilled to bucket files by key (see the module comment). */
export class KeyBuckets {
  /** First key of each bucket, and the end: length buckets + 1. */
  private readonly bounds: number[] = [0];
  private readonly bucketOf: Int32Array;
  private readonly fds: number[] = [];
  private readonly files: string[] = [];
  private readonly buf: Buffer[] = [];
  private readonly used: Int32Array;
  private readonly bufRows: number;
  private readonly counts: Int32Array;

  constructor(o: BucketOptions) {
    const K = o.counts.length;
    this.counts = o.counts;
    let total = 0;
    for (let k = 0; k < K; k++) total += o.counts[k]!;
    // Few enough files to hold open: larger buckets past MAX_BUCKETS of the budget's.
    const rows = Math.max(1, o.rows, Math.ceil(total / MAX_BUCKETS));
    this.bucketOf = new Int32Array(K);
    let inBucket = 0;
    for (let k = 0; k < K; k++) {
      const c = o.counts[k]!;
      if (inBucket > 0 && inBucket + c > rows) {
        this.bounds.push(k);
        inBucket = 0;
      }
      inBucket += c;
      this.bucketOf[k] = this.bounds.length - 1;
    }
    this.bounds.push(K);
    const B = this.bounds.length - 1;
    this.bufRows = Math.max(256, Math.floor(BUFFER_BYTES / ROW_BYTES / B));
    this.used = new Int32Array(B);
    for (let b = 0; b < B; b++) {
      this.files.push(path.join(o.dir, `bucket-${b}.bin`));
      this.fds.push(openSync(this.files[b]!, 'w'));
      this.buf.push(Buffer.allocUnsafe(this.bufRows * ROW_BYTES));
    }
  }

  /** Buckets cut. */
  get count(): number {
    return this.bounds.length - 1;
  }

  /** Appends row (x, y, v) under key x. */
  add(x: number, y: number, v: number): void {
    const b = this.bucketOf[x]!;
    const buf = this.buf[b]!;
    const at = this.used[b]! * ROW_BYTES;
    buf.writeInt32LE(x, at);
    buf.writeInt32LE(y, at + 4);
    buf.writeDoubleLE(v, at + 8);
    if (++this.used[b]! === this.bufRows) this.flush(b);
  }

  private flush(b: number): void {
    const n = this.used[b]! * ROW_BYTES;
    for (let at = 0; at < n;) at += writeSync(this.fds[b]!, this.buf[b]!, at, n - at);
    this.used[b] = 0;
  }

  /** Writes what the buffers hold and closes the files: call once, after the last {@link add}. */
  finish(): void {
    for (let b = 0; b < this.count; b++) {
      this.flush(b);
      closeSync(this.fds[b]!);
    }
    this.buf.length = 0;
  }

  /** Reads the buckets back in key order, one at a time, each grouped by key (rows of a key in the order added). */
  forEach(each: (bucket: Bucket) => void): void {
    for (let b = 0; b < this.count; b++) each(this.read(b));
  }

  private read(b: number): Bucket {
    const from = this.bounds[b]!;
    const to = this.bounds[b + 1]!;
    const start = new Int32Array(to - from + 1);
    for (let k = from; k < to; k++) start[k - from + 1] = start[k - from]! + this.counts[k]!;
    const n = start[to - from]!;
    const x = new Int32Array(n);
    const y = new Int32Array(n);
    const v = new Float64Array(n);
    const fill = start.slice(0, to - from);
    // Read in pieces, each row placed at its key's next slot: no second copy of the bucket.
    const piece = Buffer.allocUnsafe(Math.min(n, 65536) * ROW_BYTES);
    const fd = openSync(this.files[b]!, 'r');
    try {
      for (let done = 0; done < n;) {
        const want = Math.min(n - done, piece.length / ROW_BYTES) * ROW_BYTES;
        for (let got = 0; got < want;) {
          const r = readSync(fd, piece, got, want - got, done * ROW_BYTES + got);
          if (r === 0) throw new Error(`${this.files[b]}: shorter than its rows`);
          got += r;
        }
        for (let at = 0; at < want; at += ROW_BYTES) {
          const k = piece.readInt32LE(at);
          const q = fill[k - from]!++;
          x[q] = k;
          y[q] = piece.readInt32LE(at + 4);
          v[q] = piece.readDoubleLE(at + 8);
        }
        done += want / ROW_BYTES;
      }
    } finally {
      closeSync(fd);
    }
    return { from, to, start, x, y, v };
  }

  /** Removes the bucket files. */
  remove(): void {
    for (const f of this.files) rmSync(f, { force: true });
  }
}
