/**
 * The spans stages' row files: uint32 columns stored one after the other (column c of n rows at
 * bytes [4·c·n, 4·(c+1)·n)), rows grouped by the task that reads them, so a reader reads only its
 * group's range of each column. Named `.u32`, not `.bin`: the commit then records their SHA-256
 * (src/shard/files/commit.ts), and a reader checks each file's size against its marker's rows.
 * @module
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { DamagedFileError } from '../files/columns.js';

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
