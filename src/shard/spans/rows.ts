/**
 * The spans stages' row files: uint32 columns stored one after the other (column c of n rows at
 * bytes [4·c·n, 4·(c+1)·n)), rows grouped by the task that reads them, so a reader reads only its
 * group's range of each column. Named `.u32`, not `.bin`: the commit then records their SHA-256
 * (src/shard/files/commit.ts), and a reader checks each file's size against its marker's rows.
 * @module
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { DamagedFileError } from '../files/columns.js';
import { requireMarker, taskDir } from '../files/commit.js';
import { taskCount, type JobSpec, type StageName } from '../files/job.js';

/** The partition of a unit's hash (its high lane, well mixed), or of a window's anchor hash. */
export const partitionOf = (hi: number, partitions: number): number => hi % partitions;

/** Columns of `n` rows as one buffer, ready to write. */
export function columnsBuffer(columns: readonly Uint32Array[], n: number): Buffer {
  const file = new Uint32Array(columns.length * n);
  columns.forEach((c, i) => file.set(c.subarray(0, n), i * n));
  return Buffer.from(file.buffer, file.byteOffset, file.byteLength);
}

/** Rows [from, to) of each of the `width` columns of `file`, which holds `n` rows. */
export function readRows(file: string, shape: { width: number; n: number }, from: number, to: number): Uint32Array[] {
  const { width, n } = shape;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size !== 4 * width * n)
      throw new DamagedFileError(
        `${file}: ${size} bytes, not the ${4 * width * n} of its marker's ${n} rows: the work dir is damaged; delete the task's directory to run it again`,
      );
    return Array.from({ length: width }, (_, c) => {
      const out = new Uint32Array(to - from);
      if (to > from) readSync(fd, new Uint8Array(out.buffer), 0, 4 * (to - from), 4 * (c * n + from));
      return out;
    });
  } finally {
    closeSync(fd);
  }
}

/** Rows of several readers' shares (each `width` columns), concatenated and sorted by (column 0, column 1): a group's documents and unit indices. */
export function mergeByDoc(parts: readonly Uint32Array[][], width: number): Uint32Array[] {
  const n = parts.reduce((a, x) => a + x[0]!.length, 0);
  const all = Array.from({ length: width }, () => new Uint32Array(n));
  let at = 0;
  for (const x of parts) {
    x.forEach((c, i) => all[i]!.set(c, at));
    at += x[0]!.length;
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => all[0]![a]! - all[0]![b]! || all[1]![a]! - all[1]![b]!);
  return all.map((c) => Uint32Array.from(order, (i) => c[i]!));
}

/** Where a stage's tasks keep the rows they group for the next stage's tasks. */
export interface GroupedRows<M> {
  stage: StageName;
  file: string;
  width: number;
  /** The rows a task's file holds, from its marker. */
  rows: (marker: M) => number;
}

/**
 * Group `t`'s rows from every task of `from.stage` (each marker's `gstart` gives each group's
 * range), sorted by (document, unit index).
 */
export function groupRows<M extends { gstart: number[] }>(workDir: string, job: JobSpec, from: GroupedRows<M>, t: number): Uint32Array[] {
  const parts: Uint32Array[][] = [];
  for (let p = 0; p < taskCount(job, from.stage); p++) {
    const m = requireMarker<M>(workDir, job, from.stage, p);
    parts.push(readRows(path.join(taskDir(workDir, from.stage, p), from.file), { width: from.width, n: from.rows(m) }, m.gstart[t]!, m.gstart[t + 1]!));
  }
  return mergeByDoc(parts, from.width);
}

/** Code units [from, to) of a file of `n` UTF-16 code units stored two to a uint32 (the last one padded). */
export function readCodeUnits(file: string, n: number, from: number, to: number): Uint16Array {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const want = 4 * Math.ceil(n / 2);
    if (size !== want)
      throw new DamagedFileError(
        `${file}: ${size} bytes, not the ${want} of its marker's ${n} code units: the work dir is damaged; delete the task's directory to run it again`,
      );
    const out = new Uint16Array(to - from);
    if (to > from) readSync(fd, new Uint8Array(out.buffer), 0, 2 * (to - from), 2 * from);
    return out;
  } finally {
    closeSync(fd);
  }
}
