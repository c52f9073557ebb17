/**
 * The spans stages' row files. Plain ones (`anchors.u32`, `repeated.u32`: hashes, which no
 * encoding shortens): uint32 columns stored one after the other (column c of n rows at bytes
 * [4·c·n, 4·(c+1)·n)). Packed ones (`units.u32`, `checks.u32`, `texts.u32`, `cuts.u32`,
 * `runs.u32`, the bulk of a job's disk): rows grouped by the task that
 * reads them, each group's rows one after the other, each row's columns as its {@link RowLayout}
 * says (a hash as 4 raw bytes; a sorted column as a varint of its difference from the row
 * before, which within a group is small: documents ascend, and a document's unit indices and
 * offsets ascend), the marker holding where each group starts in rows and in bytes, so a reader
 * reads only its group's bytes. Named `.u32`, not `.bin`: the commit then records their SHA-256
 * (src/shard/files/commit.ts); a reader checks each file's size against its marker, and that a
 * group's bytes decode to exactly its rows.
 * @module
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { DamagedFileError } from '../files/columns.js';
import { requireMarker, taskDir } from '../files/commit.js';
import { taskCount, type JobSpec, type StageName } from '../files/job.js';
import { grown, mapped } from '../../common/roomArrays.js';

/** The partition of a unit's hash (its high lane, well mixed), or of a window's anchor hash. */
export const partitionOf = (hi: number, partitions: number): number => hi % partitions;

/** Columns of `n` rows as one buffer, ready to write. */
export function columnsBuffer(columns: readonly Uint32Array[], n: number): Buffer {
  const file = new Uint32Array(columns.length * n);
  columns.forEach((c, i) => file.set(c.subarray(0, n), i * n));
  return Buffer.from(file.buffer, file.byteOffset, file.byteLength);
}

/** Rows [from, to) of each of the `width` columns of plain `file`, which holds `n` rows. */
export function readRows(file: string, shape: { width: number; n: number }, from: number, to: number): Uint32Array[] {
  const { width, n } = shape;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size !== 4 * width * n) throw damaged(file, `${size} bytes, not the ${4 * width * n} of its marker's ${n} rows`);
    return Array.from({ length: width }, (_, c) => {
      const out = new Uint32Array(to - from);
      if (to > from) readSync(fd, new Uint8Array(out.buffer), 0, 4 * (to - from), 4 * (c * n + from));
      return out;
    });
  } finally {
    closeSync(fd);
  }
}

const damaged = (file: string, what: string): Error =>
  new DamagedFileError(`${file}: ${what}: the work dir is damaged; delete the task's directory to run it again`);

/**
 * How a packed row file stores each column: `raw`, 4 bytes (hashes); `var`, a varint; `delta`, a
 * varint of the zigzagged difference from the row before in the group (0 before the first);
 * `inDoc`, the same but from 0 again at each new value of column `doc` (a document's offsets).
 */
export interface RowLayout {
  kinds: readonly ('raw' | 'var' | 'delta' | 'inDoc')[];
  /** The column of documents (for `inDoc`). */
  doc?: number;
}

/** A packed row file: its bytes, and where each group starts in them (groups + 1). */
export interface PackedRows {
  buf: Buffer;
  bytes: number[];
}

const zig = (d: number): number => (d >= 0 ? 2 * d : -2 * d - 1);

/** Packs rows of `columns` grouped as `start` gives (group g: rows [start[g], start[g + 1])). */
export function packRows(columns: readonly Uint32Array[], layout: RowLayout, start: ArrayLike<number>): PackedRows {
  const groups = Math.max(0, start.length - 1);
  const packer = new RowPacker(layout, groups);
  for (let g = 0; g < groups; g++) {
    for (let r = start[g]!; r < start[g + 1]!; r++) {
      for (let c = 0; c < columns.length; c++) packer.row[c] = columns[c]![r]!;
      packer.add(g);
    }
  }
  const { parts, bytes } = packer.finish();
  return { buf: parts.length === 1 ? parts[0]! : Buffer.concat(parts), bytes };
}

/**
 * Packs rows as they come, each into its group's bytes ({@link packRows}' encoding): a stage that
 * makes millions of rows keeps them packed (a few bytes a row), not as a uint32 column each, then
 * grouped by a copy, then packed (28 bytes a row and more, spans-hash's peak).
 */
export class RowPacker {
  /** The next row's columns: set them, then {@link add}. */
  readonly row: Float64Array;
  private readonly bufs: Uint8Array[];
  private readonly at: Float64Array;
  private readonly prev: Float64Array[];
  /** Rows added to each group. */
  readonly rows: Float64Array;

  constructor(
    private readonly layout: RowLayout,
    groups: number,
  ) {
    const w = layout.kinds.length;
    this.row = new Float64Array(w);
    this.bufs = Array.from({ length: groups }, () => mapped(Uint8Array, 64, 1 << 26));
    this.at = new Float64Array(groups);
    this.prev = Array.from({ length: groups }, () => new Float64Array(w));
    this.rows = new Float64Array(groups);
  }

  /** Adds {@link row} to group `g`. */
  add(g: number): void {
    const { kinds } = this.layout;
    const dc = this.layout.doc ?? 0;
    const row = this.row;
    const prev = this.prev[g]!;
    let at = this.at[g]!;
    let out = this.bufs[g]!;
    if (at + 5 * kinds.length > out.length) out = this.bufs[g] = grown(out, at + 5 * kinds.length);
    // Each value as a uint32 column holds it (packRows' columns).
    for (let c = 0; c < kinds.length; c++) row[c] = row[c]! >>> 0;
    const newDoc = row[dc]! !== prev[dc];
    for (let c = 0; c < kinds.length; c++) {
      const v = row[c]!;
      const k = kinds[c];
      if (k === 'raw') {
        out[at++] = v & 0xff;
        out[at++] = (v >>> 8) & 0xff;
        out[at++] = (v >>> 16) & 0xff;
        out[at++] = v >>> 24;
        continue;
      }
      let x = k === 'var' ? v : zig(v - (k === 'inDoc' && newDoc ? 0 : prev[c]!));
      while (x >= 128) {
        out[at++] = (x % 128) + 128;
        x = Math.floor(x / 128);
      }
      out[at++] = x;
    }
    prev.set(row);
    this.at[g] = at;
    this.rows[g]!++;
  }

  /**
   * Each group's bytes (to be written one after the other, not copied into one buffer: a stage's
   * rows are its largest array), where each group starts in them (groups + 1), and where each
   * group's rows start (groups + 1).
   */
  finish(): { parts: Buffer[]; bytes: number[]; start: number[] } {
    const bytes = [0];
    const start = [0];
    const parts: Buffer[] = [];
    for (let g = 0; g < this.bufs.length; g++) {
      bytes.push(bytes[g]! + this.at[g]!);
      start.push(start[g]! + this.rows[g]!);
      const b = this.bufs[g]!;
      parts.push(Buffer.from(b.buffer, b.byteOffset, this.at[g]!));
    }
    return { parts, bytes, start };
  }
}

/** Decodes `out.n` rows of one group from `b` into `out.cols` from row `out.into`; false when its bytes are not exactly those rows. */
function unpack(b: Uint8Array, layout: RowLayout, out: { cols: Uint32Array[]; n: number; into: number }): boolean {
  const { kinds } = layout;
  const { cols, n, into } = out;
  const dc = layout.doc ?? 0;
  const prev = new Float64Array(kinds.length);
  let at = 0;
  for (let r = into; r < into + n; r++) {
    for (let c = 0; c < kinds.length; c++) {
      const k = kinds[c];
      let v: number;
      if (k === 'raw') {
        if (at + 4 > b.length) return false;
        v = (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
        at += 4;
      } else {
        let x = 0;
        let m = 1;
        for (let i = 0;; i++) {
          if (at >= b.length || i === 5) return false;
          const y = b[at++]!;
          x += (y & 127) * m;
          m *= 128;
          if (y < 128) break;
        }
        if (k === 'var') v = x;
        else {
          // The document column comes before the columns counted within a document.
          const base = k === 'inDoc' && cols[dc]![r] !== prev[dc] ? 0 : prev[c]!;
          v = base + (x % 2 === 0 ? x / 2 : -(x + 1) / 2);
        }
      }
      if (v < 0 || v > 0xffffffff) return false;
      cols[c]![r] = v;
    }
    for (let c = 0; c < kinds.length; c++) prev[c] = cols[c]![r]!;
  }
  return at === b.length;
}

/** Groups [a, b) of a packed row file, whose marker gives each group's row and byte starts. */
export function readPacked(
  file: string,
  layout: RowLayout,
  shape: { rows: ArrayLike<number>; bytes: readonly number[] },
  [a, b]: readonly [number, number],
): Uint32Array[] {
  const { rows, bytes } = shape;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size !== bytes[bytes.length - 1]) throw damaged(file, `${size} bytes, not the ${bytes[bytes.length - 1]} of its marker`);
    const n = rows[b]! - rows[a]!;
    const cols = Array.from({ length: layout.kinds.length }, () => new Uint32Array(n));
    const buf = new Uint8Array(bytes[b]! - bytes[a]!);
    if (buf.length > 0) readSync(fd, buf, 0, buf.length, bytes[a]!);
    for (let g = a; g < b; g++) {
      const x = buf.subarray(bytes[g]! - bytes[a]!, bytes[g + 1]! - bytes[a]!);
      if (!unpack(x, layout, { cols, n: rows[g + 1]! - rows[g]!, into: rows[g]! - rows[a]! }))
        throw damaged(file, `group ${g}'s bytes are not its marker's ${rows[g + 1]! - rows[g]!} rows`);
    }
    return cols;
  } finally {
    closeSync(fd);
  }
}

/**
 * Rows of several readers' shares (each `width` columns, each sorted by (column 0, column 1): a
 * group's documents and unit indices), merged in that order. A heap of the shares' next rows, not
 * a sort of all: an array of every row's index, sorted, was 250 MB of heap for 4.9M rows.
 */
export function mergeByDoc(parts: readonly Uint32Array[][], width: number): Uint32Array[] {
  if (parts.length === 1) return [...parts[0]!];
  const n = parts.reduce((a, x) => a + x[0]!.length, 0);
  const out = Array.from({ length: width }, () => new Uint32Array(n));
  const next = new Float64Array(parts.length);
  const before = (a: number, b: number): boolean => {
    const da = parts[a]![0]![next[a]!]!;
    const db = parts[b]![0]![next[b]!]!;
    if (da !== db) return da < db;
    const ka = parts[a]![1]![next[a]!]!;
    const kb = parts[b]![1]![next[b]!]!;
    return ka !== kb ? ka < kb : a < b;
  };
  const heap = parts.map((_, j) => j).filter((j) => parts[j]![0]!.length > 0);
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      let m = i;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (l + 1 < heap.length && before(heap[l + 1]!, heap[m]!)) m = l + 1;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  for (let o = 0; o < n; o++) {
    const j = heap[0]!;
    const x = parts[j]!;
    const r = next[j]!++;
    for (let c = 0; c < width; c++) out[c]![o] = x[c]![r]!;
    if (next[j]! === x[0]!.length) {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    if (heap.length > 0) down(0);
  }
  return out;
}

/** Where a stage's tasks keep the rows they group for the next stage's tasks. */
export interface GroupedRows {
  stage: StageName;
  file: string;
  layout: RowLayout;
}

/**
 * Group `t`'s rows from every task of `from.stage` (each marker's `gstart` and `gbytes` give each
 * group's rows and bytes), sorted by (document, unit index).
 */
export function groupRows<M extends { gstart: number[]; gbytes: number[] }>(workDir: string, job: JobSpec, from: GroupedRows, t: number): Uint32Array[] {
  const parts: Uint32Array[][] = [];
  for (let p = 0; p < taskCount(job, from.stage); p++) {
    const m = requireMarker<M>(workDir, job, from.stage, p);
    parts.push(readPacked(path.join(taskDir(workDir, from.stage, p), from.file), from.layout, { rows: m.gstart, bytes: m.gbytes }, [t, t + 1]));
  }
  return mergeByDoc(parts, from.layout.kinds.length);
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
