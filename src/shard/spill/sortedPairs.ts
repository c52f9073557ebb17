/**
 * A decide task's verified pairs out of core: read a chunk at a time from the link tasks' files,
 * made positions among the task's clustered documents, and written to one file in the order the
 * in-memory route sorts them (global (a, b): src/shard/stages/decidePairs.ts), so that every later
 * pass reads them in that order (the recall estimate's sums are the same floats). The sort is by
 * first end through bucket files (src/shard/spill/buckets.ts), then by second end within a first end.
 * Memory: the clustered documents (8 bytes each), a count per document, one chunk and one bucket.
 * @module
 */
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { KeyBuckets, ROW_BYTES } from './buckets.js';
import type { PairChunks } from './walk.js';

/** Raw pairs (global document numbers, any order) a chunk at a time. */
export type RawPairs = (each: (a: Float64Array, b: Float64Array, sim: Float64Array, n: number) => void) => void;

/** Pairs written in order to a file of 16-byte rows (first end, second end as int32 positions; similarity as float64). */
export interface SpilledPairs extends PairChunks {
  /** Deletes the file. */
  remove(): void;
}

/** Rows a read of the spilled file takes at a time. */
const READ_ROWS = 65536;

/** The position of document g among ascending `members` (g is one of them). */
export function positionIn(members: Float64Array, g: number): number {
  let lo = 0;
  let hi = members.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (members[mid]! < g) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The distinct values of the sorted `acc` and of xs[0..n) (any order), ascending. */
function mergeDistinct(acc: Float64Array, xs: Float64Array): Float64Array<ArrayBuffer> {
  xs.sort();
  const out = new Float64Array(acc.length + xs.length);
  let i = 0;
  let j = 0;
  let m = 0;
  while (i < acc.length || j < xs.length) {
    const x = j >= xs.length || (i < acc.length && acc[i]! <= xs[j]!) ? acc[i++]! : xs[j++]!;
    if (m === 0 || out[m - 1] !== x) out[m++] = x;
  }
  return out.slice(0, m);
}

/** The distinct ends of the raw pairs and of `extra` (the copies), ascending: merged a chunk at a time. */
export function distinctEnds(raw: RawPairs, extra: readonly Float64Array[]): Float64Array {
  let acc: Float64Array<ArrayBuffer> = new Float64Array(0);
  raw((a, b, _s, n) => {
    const xs = new Float64Array(2 * n);
    xs.set(a.subarray(0, n));
    xs.set(b.subarray(0, n), n);
    acc = mergeDistinct(acc, xs);
  });
  for (const x of extra) acc = mergeDistinct(acc, Float64Array.from(x));
  return acc;
}

/** Sorts rows lo..hi−1 of (y, v) by y, keeping each v with its y. */
function sortSegment(y: Int32Array, v: Float64Array, lo: number, hi: number): void {
  if (hi - lo <= 32) {
    for (let i = lo + 1; i < hi; i++) {
      const yi = y[i]!;
      const vi = v[i]!;
      let j = i - 1;
      for (; j >= lo && y[j]! > yi; j--) {
        y[j + 1] = y[j]!;
        v[j + 1] = v[j]!;
      }
      y[j + 1] = yi;
      v[j + 1] = vi;
    }
    return;
  }
  const idx = new Int32Array(hi - lo);
  for (let i = 0; i < idx.length; i++) idx[i] = lo + i;
  idx.sort((p, q) => y[p]! - y[q]! || p - q);
  const ys = Int32Array.from(idx, (p) => y[p]!);
  const vs = Float64Array.from(idx, (p) => v[p]!);
  y.set(ys, lo);
  v.set(vs, lo);
}

/**
 * The raw pairs as positions among `members`, sorted by (first, second) position (ties: the order
 * read), written to `file` (`dir` holds the buckets meanwhile); `rows` bounds a bucket.
 */
export function spillSortedPairs(o: { raw: RawPairs; members: Float64Array; dir: string; rows: number }): SpilledPairs {
  const { members } = o;
  const counts = new Int32Array(members.length);
  let count = 0;
  o.raw((a, _b, _s, n) => {
    for (let i = 0; i < n; i++) counts[positionIn(members, a[i]!)]!++;
    count += n;
  });
  const bdir = path.join(o.dir, 'by-first');
  mkdirSync(bdir, { recursive: true });
  const file = path.join(o.dir, 'pairs.bin');
  const buckets = new KeyBuckets({ dir: bdir, counts, rows: o.rows });
  try {
    o.raw((a, b, sim, n) => {
      for (let i = 0; i < n; i++) buckets.add(positionIn(members, a[i]!), positionIn(members, b[i]!), sim[i]!);
    });
    buckets.finish();
    const fd = openSync(file, 'w');
    try {
      buckets.forEach(({ from, to, start, x, y, v }) => {
        for (let k = 0; k < to - from; k++) if (start[k + 1]! - start[k]! > 1) sortSegment(y, v, start[k]!, start[k + 1]!);
        const buf = Buffer.allocUnsafe(Math.min(x.length, READ_ROWS) * ROW_BYTES);
        for (let i = 0; i < x.length;) {
          let at = 0;
          for (; i < x.length && at < buf.length; i++, at += ROW_BYTES) {
            buf.writeInt32LE(x[i]!, at);
            buf.writeInt32LE(y[i]!, at + 4);
            buf.writeDoubleLE(v[i]!, at + 8);
          }
          for (let w = 0; w < at;) w += writeSync(fd, buf, w, at - w);
        }
      });
    } finally {
      closeSync(fd);
    }
  } finally {
    buckets.remove();
    rmSync(bdir, { recursive: true, force: true });
  }
  return { count, forEach: (each) => readSpilled(file, count, each), remove: () => rmSync(file, { force: true }) };
}

/** Reads a spilled pairs file's `count` rows a chunk at a time. */
function readSpilled(file: string, count: number, each: (a: Int32Array, b: Int32Array, sims: Float64Array, n: number) => void): void {
  const rows = Math.min(READ_ROWS, Math.max(1, count));
  const buf = Buffer.allocUnsafe(rows * ROW_BYTES);
  const a = new Int32Array(rows);
  const b = new Int32Array(rows);
  const sims = new Float64Array(rows);
  const fd = openSync(file, 'r');
  try {
    for (let done = 0; done < count;) {
      const n = Math.min(rows, count - done);
      for (let got = 0; got < n * ROW_BYTES;) {
        const r = readSync(fd, buf, got, n * ROW_BYTES - got, done * ROW_BYTES + got);
        if (r === 0) throw new Error(`${file}: shorter than its ${count} pairs`);
        got += r;
      }
      for (let i = 0, at = 0; i < n; i++, at += ROW_BYTES) {
        a[i] = buf.readInt32LE(at);
        b[i] = buf.readInt32LE(at + 4);
        sims[i] = buf.readDoubleLE(at + 8);
      }
      each(a, b, sims, n);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
}
