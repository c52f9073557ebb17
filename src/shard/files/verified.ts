/**
 * The job's verified pairs in global order, (shardA, docA, shardB, docB), read from the verify
 * tasks' outputs. Each task's rows are in that order and a first document's pairs are all in one
 * task (its component's), so the global order is, shard by shard, the tasks' rows merged by first
 * document. Readers: the components stage, the recall estimate and the pairs output. In a job with
 * exact copies, the decide tasks' files of the same layout hold the pairs (src/shard/stages/copyPairs.ts),
 * and a first document's pairs are all in one decide task (its component's).
 * @module
 */
import path from 'node:path';
import { openSync, readSync, closeSync } from 'node:fs';
import { ColumnFile, DamagedFileError } from './columns.js';
import { requireMarker, taskDir } from './commit.js';
import { taskCount, type JobSpec } from './job.js';

/** One verify task's rows of one shard A. */
interface Slice {
  task: number;
  /** First row (in the task's file) of the slice. */
  lo: number;
  docA: Uint32Array;
  /** Next row of the slice to merge. */
  at: number;
}

/** Where the job's pairs are: the verify tasks', or with copies the decide tasks'. */
export type PairStage = 'verify' | 'decide';

/** Opens every `stage` task's pairs.bin (each task must have completed); the caller closes them. */
function openVerified(workDir: string, job: JobSpec, stage: PairStage = 'verify'): ColumnFile[] {
  const files: ColumnFile[] = [];
  try {
    for (let t = 0; t < taskCount(job, stage); t++) {
      requireMarker(workDir, job, stage, t);
      files.push(ColumnFile.open(path.join(taskDir(workDir, stage, t), 'pairs.bin'), 'verified', job.id));
    }
  } catch (e) {
    for (const f of files) f.close();
    throw e;
  }
  return files;
}

/** A step of the merge: shard A's slices (before its runs), or a run of rows [lo, hi) of one task sharing a first document. */
type Step = { A: number; slices: readonly Slice[] } | { task: number; lo: number; hi: number };

/** The merge of the verify tasks' rows in global order: each shard's slices, then its runs. */
function* runs(files: readonly ColumnFile[], S: number): Generator<Step> {
  for (let A = 0; A < S; A++) {
    const slices: Slice[] = [];
    for (let t = 0; t < files.length; t++) {
      const st = files[t]!.f64('astart', A, A + 2);
      if (st[1]! > st[0]!) slices.push({ task: t, lo: st[0]!, docA: files[t]!.u32('docA', st[0]!, st[1]!), at: 0 });
    }
    if (slices.length === 0) continue;
    yield { A, slices };
    for (;;) {
      // The slice whose next first document is smallest (a document is in one task only).
      let best: Slice | undefined;
      for (const s of slices) if (s.at < s.docA.length && (!best || s.docA[s.at]! < best.docA[best.at]!)) best = s;
      if (!best) break;
      const d = best.docA[best.at]!;
      let e = best.at + 1;
      while (e < best.docA.length && best.docA[e] === d) e++;
      yield { task: best.task, lo: best.lo + best.at, hi: best.lo + e };
      best.at = e;
    }
  }
}

/** Calls fn for every verified pair of the job, in global order. */
export function forEachVerified(workDir: string, job: JobSpec, fn: (shardA: number, docA: number, shardB: number, docB: number, sim: number) => void): void {
  const files = openVerified(workDir, job);
  try {
    let cols: { lo: number; b: Uint32Array; s: Uint32Array; sim: Float64Array; a: Uint32Array }[] = [];
    let shardA = 0;
    for (const step of runs(files, job.shards.length)) {
      if ('A' in step) {
        shardA = step.A;
        cols = [];
        for (const sl of step.slices) {
          const hi = sl.lo + sl.docA.length;
          const f = files[sl.task]!;
          cols[sl.task] = { lo: sl.lo, a: sl.docA, s: f.u32('shardB', sl.lo, hi), b: f.u32('docB', sl.lo, hi), sim: f.f64('similarity', sl.lo, hi) };
        }
        continue;
      }
      const c = cols[step.task]!;
      for (let i = step.lo - c.lo; i < step.hi - c.lo; i++) fn(shardA, c.a[i]!, c.s[i]!, c.b[i]!, c.sim[i]!);
    }
  } finally {
    for (const f of files) f.close();
  }
}

/**
 * Reads a file front to back in pieces of a given length, through a read-ahead buffer: a piece is
 * one document's pair lines (tens of bytes), and a read per piece was most of writing the output.
 */
export class PieceReader {
  private readonly fd: number;
  private buf: Buffer;
  /** The buffer's unread bytes: [start, end). */
  private start = 0;
  private end = 0;
  /** The file offset of the buffer's `end`. */
  private pos = 0;
  /** `bufferBytes`: the read-ahead (a piece longer than it is read whole). */
  constructor(
    private readonly file: string,
    bufferBytes = 1 << 16,
  ) {
    this.buf = Buffer.alloc(bufferBytes);
    this.fd = openSync(file, 'r');
  }

  /** The next `n` bytes (a view, valid until the next call). */
  take(n: number): Buffer {
    if (this.end - this.start < n) {
      // Keep the unread bytes at the front, then read as much as fits.
      const left = this.end - this.start;
      if (n > this.buf.length) {
        const grown = Buffer.alloc(n);
        this.buf.copy(grown, 0, this.start, this.end);
        this.buf = grown;
      } else this.buf.copy(this.buf, 0, this.start, this.end);
      this.start = 0;
      this.end = left;
      while (this.end < n) {
        const r = readSync(this.fd, this.buf, this.end, this.buf.length - this.end, this.pos);
        if (r === 0) throw new DamagedFileError(`${this.file}: shorter than its pairs.bin says: the job directory is damaged`);
        this.end += r;
        this.pos += r;
      }
    }
    const piece = this.buf.subarray(this.start, this.start + n);
    this.start += n;
    return piece;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * Writes the job's pair lines in global order: each verify task's `pairs.txt` (the caller checks
 * their hashes first) taken in the runs of the merge, through `write` in pieces of about 1 MiB, each
 * a buffer of its own (a stream keeps what it is given until written).
 */
export async function writeVerifiedLines(workDir: string, job: JobSpec, write: (bytes: Buffer) => Promise<void>, stage: PairStage = 'verify'): Promise<void> {
  const files = openVerified(workDir, job, stage);
  const readers: PieceReader[] = [];
  try {
    for (let t = 0; t < files.length; t++) readers.push(new PieceReader(path.join(taskDir(workDir, stage, t), 'pairs.txt')));
    const out = Buffer.alloc(1 << 20);
    let used = 0;
    let lengths: { lo: number; bytes: Uint32Array }[] = [];
    for (const step of runs(files, job.shards.length)) {
      if ('A' in step) {
        lengths = [];
        for (const sl of step.slices) lengths[sl.task] = { lo: sl.lo, bytes: files[sl.task]!.u32('bytes', sl.lo, sl.lo + sl.docA.length) };
        continue;
      }
      const l = lengths[step.task]!;
      let n = 0;
      for (let i = step.lo - l.lo; i < step.hi - l.lo; i++) n += l.bytes[i]!;
      if (used + n > out.length && used > 0) {
        await write(Buffer.from(out.subarray(0, used)));
        used = 0;
      }
      const piece = readers[step.task]!.take(n);
      if (n > out.length) await write(Buffer.from(piece));
      else {
        piece.copy(out, used);
        used += n;
      }
    }
    if (used > 0) await write(Buffer.from(out.subarray(0, used)));
  } finally {
    for (const r of readers) r.close();
    for (const f of files) f.close();
  }
}
