/**
 * Stage 2, join (one task per band-key partition): reads partition p of every shard's band keys,
 * groups equal (band, key) and emits every pair of documents in a group as a candidate (for
 * `--against`, only pairs with one document on each side, oriented corpus → reference).
 *
 * Exact copies (documents of one text hash, `textHash2` from sign) are folded first, as `neardup
 * dedup` folds them: copies share every band key, so each bucket holding one holds the whole copy
 * group, and its smallest document (the same in every bucket) stands for it. Pairs are emitted
 * among those representatives only, so m copies cost one document, not m(m−1)/2 pair rows. Not
 * under `--against`, where `dedup` does not fold either.
 *
 * Outputs in `join/NNNNN/`:
 * - `pairs.bin` (kind `candidates`): columns docA, shardB, docB (uint32), grouped by the shard of
 *   document a; `astart` (float64, S + 1) gives shard A's rows. Pairs may repeat (across bands and
 *   partitions): verification removes repeats.
 * - `need.bin` (kind `needed-docs`): column doc (uint32, ascending per shard), grouped by shard with
 *   `nstart` (S + 1): the documents in candidate pairs, whose texts the gather stage collects.
 * - `copies.bin` (kind `copy-members`): columns docR, shardM, docM (uint32): each copy group's
 *   members but its representative (docR of shard R), once per job (from the partition of its band-0
 *   key), grouped by the shard of the representative with `astart` (S + 1).
 * - `weights.bin` (kind `copy-weights`): the candidate rows of `pairs.bin` whose representatives
 *   stand for more than one document pair: columns docA, shardB, docB (uint32) and w (float64: the
 *   two copy groups' sizes multiplied), grouped as pairs.bin. Route counts candidates with them.
 *
 * Why this file is long: it is one stage's task (the id check, the partition's rows, the pairs of
 * each bucket with copies folded, and its four outputs), and its folder holds the 20 files the
 * layout rule allows.
 * @module
 */
import path from 'node:path';
import { InputError, UsageError } from '../../common/errors.js';
import { ColumnFile, writeColumns, type ColumnFileHeader } from '../files/columns.js';
import { commitTask, requireMarker, taskDir } from '../files/commit.js';
import { taskCount, type JobSpec } from '../files/job.js';
import { U32Buf, groupBy } from '../files/u32buf.js';
import { forEachRowBucket, RowBucketScratch } from '../../lsh/rowBuckets.js';
import { Reusable } from './reuse.js';

/** The join task's marker. */
export interface JoinMarker {
  /** Band-key rows read. */
  keys: number;
  /** Candidate pair rows written (with repeats). */
  pairRows: number;
  /** Groups of ≥ 2 documents sharing a band key. */
  sharedBuckets: number;
  /** Documents in the largest group (copies folded: representatives). */
  largestBucket: number;
  /** Copies folded into their representative, over the copy groups whose band-0 key is in this partition. */
  copies?: number;
  /** Pairs among the members of those copy groups (Σ m(m−1)/2): candidates and verified pairs at similarity 1. */
  copyPairs?: number;
  /**
   * Candidate rows written per shard group of their first document (G entries, with repeats): every
   * route task sums them over the join tasks to cut the verify tasks alike (src/shard/stages/route.ts).
   */
  groupRows?: number[];
}

/** Thrown when a partition would produce more candidate pairs than the job allows. */
export class TooManyCandidatesError extends UsageError {}

/**
 * Refuses ids given twice within one input (the corpus, or the reference of --against), as
 * neardup dedup does: partition p of every shard's explicit ids, compared by their stored UTF-8 bytes
 * (as the strings decoded from them compare) in an open-addressing table, without decoding them (a
 * Map of a million decoded ids was a twelfth of this stage).
 */
function checkIds(workDir: string, job: JobSpec, p: number): void {
  const pieces: { bytes: Buffer; offs: Float64Array; lines: Uint32Array; shards: Uint32Array }[] = [];
  let total = 0;
  for (let t = 0; t < taskCount(job, 'sign'); t++) {
    const m = requireMarker(workDir, job, 'sign', t);
    if (!m.files['ids.bin']) continue;
    const f = ColumnFile.open(path.join(taskDir(workDir, 'sign', t), 'ids.bin'), 'id-keys', job.id);
    try {
      const ps = f.f64('pstart', p, p + 2);
      const a = ps[0]!;
      const b = ps[1]!;
      if (b <= a) continue;
      pieces.push({ ...f.strings('id').raw(a, b), lines: f.u32('line', a, b), shards: f.u32('shard', a, b) });
      total += b - a;
    } finally {
      f.close();
    }
  }
  let size = 16;
  while (size < 2 * total) size *= 2;
  const mask = size - 1;
  const slotPiece = new Int32Array(size).fill(-1);
  const slotRow = new Int32Array(size);
  const slotHash = new Int32Array(size);
  for (let k = 0; k < pieces.length; k++) {
    const { bytes, offs, lines, shards } = pieces[k]!;
    for (let i = 0; i < lines.length; i++) {
      const s = shards[i]!;
      const side = job.shards[s]!.side;
      const from = offs[i]!;
      const to = offs[i + 1]!;
      let h = 0x811c9dc5 ^ side;
      for (let j = from; j < to; j++) h = Math.imul(h ^ bytes[j]!, 0x01000193);
      h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
      h ^= h >>> 13;
      let at = h & mask;
      for (; slotPiece[at]! >= 0; at = (at + 1) & mask) {
        if (slotHash[at] !== h) continue;
        const q = pieces[slotPiece[at]!]!;
        const r = slotRow[at]!;
        const fs = q.shards[r]!;
        if (job.shards[fs]!.side !== side || bytes.compare(q.bytes, q.offs[r]!, q.offs[r + 1]!, from, to) !== 0) continue;
        const fl = q.lines[r]!;
        const where = fs === s ? `line ${fl}` : `${job.shards[fs]!.path}:${fl}`;
        const id = bytes.toString('utf8', from, to);
        throw new InputError(job.shards[s]!.path, lines[i]!, `duplicate id "${id}" (first on ${where}); ids must be unique`);
      }
      slotPiece[at] = k;
      slotRow[at] = i;
      slotHash[at] = h;
    }
  }
}

/**
 * A join task's big arrays, kept between the tasks of a process: made afresh in each task, their
 * page faults and collections cost a worker process with a larger heap up to a third more.
 */
const scratchPool = new Reusable(() => ({
  rows: new RowBucketScratch(),
  pairs: [0, 1, 2, 3].map(() => new U32Buf(1 << 12)),
  reps: new Int32Array(64),
  sizes: new Float64Array(64),
}));

/** The header of a column file of join task `p`. */
function partitionFile(job: JobSpec, p: number, kind: string): ColumnFileHeader {
  return { kind, plan: job.id, meta: { partition: p } };
}

/** Runs join task `p` (idempotent). */
export function runJoin(workDir: string, job: JobSpec, p: number): Promise<JoinMarker> {
  return commitTask<JoinMarker>({ workDir, job, stage: 'join', task: p }, (dir) =>
    scratchPool.with(async (scratch) => {
      const S = job.shards.length;
      const ranges = partitionRanges(workDir, job, p);
      checkIds(workDir, job, p);
      const rows = readRows({ workDir, job, ranges }, scratch);
      const pairs = new PartitionPairs(job, p, rows, scratch);
      // Rows were appended in (shard, doc) order, and a group's rows come in that order: x before y.
      forEachRowBucket({ band: rows.B, hi: rows.H, lo: rows.L, bands: job.bands }, (all, size) => pairs.bucket(all, size), scratch.rows);
      const { marker, pA, pDocA, pShardB, pDocB } = pairs;
      marker.pairRows = pA.length;
      const grouped = groupBy(pA.view(), S, [pDocA.view(), pShardB.view(), pDocB.view()]);
      const [docA, shardB, docB] = grouped.columns as [Uint32Array, Uint32Array, Uint32Array];
      await writeColumns(path.join(dir, 'pairs.bin'), partitionFile(job, p, 'candidates'), { docA, shardB, docB, astart: grouped.start });
      marker.groupRows = job.groups.slice(1).map((end, q) => grouped.start[end]! - grouped.start[job.groups[q]!]!);
      await writeNeeded(dir, job, { p, rows, needed: pairs.needed });
      await writeCopies(dir, job, { p, Sh: rows.Sh, D: rows.D, copyRows: pairs.copyRows, weighted: pairs.weighted });
      // A partition of exceptionally many pairs does not leave its buffers to the process's next tasks.
      if (pA.capacity > 1 << 24) scratch.pairs = scratch.pairs.map(() => new U32Buf(1 << 12));
      return marker;
    }));
}

/** The scratch arrays of one join process (see `scratchPool`). */
type JoinScratch = typeof scratchPool extends Reusable<infer T> ? T : never;

/** Rows [a, b) of sign task t's band keys: partition p's part of that task's output. */
interface RowRange {
  t: number;
  a: number;
  b: number;
}

/** Partition p's row ranges in every sign task's band keys. */
function partitionRanges(workDir: string, job: JobSpec, p: number): RowRange[] {
  const ranges: RowRange[] = [];
  for (let t = 0; t < taskCount(job, 'sign'); t++) {
    requireMarker(workDir, job, 'sign', t);
    const f = ColumnFile.open(path.join(taskDir(workDir, 'sign', t), 'keys.bin'), 'band-keys', job.id);
    try {
      const ps = f.f64('pstart', p, p + 2);
      if (ps[1]! > ps[0]!) ranges.push({ t, a: ps[0]!, b: ps[1]! });
    } finally {
      f.close();
    }
  }
  return ranges;
}

/** A partition's band-key rows, one column each (views of the process's kept arrays). */
interface PartitionRows {
  n: number;
  B: Uint32Array;
  H: Uint32Array;
  L: Uint32Array;
  Sh: Uint32Array;
  D: Uint32Array;
  T0: Uint32Array;
  T1: Uint32Array;
}

/** Reads the rows of `ranges` straight into the kept arrays, each column into its place. */
function readRows(from: { workDir: string; job: JobSpec; ranges: RowRange[] }, scratch: JoinScratch): PartitionRows {
  const { workDir, job, ranges } = from;
  let n = 0;
  for (const { a, b } of ranges) n += b - a;
  const names = ['B', 'H', 'L', 'Sh', 'D', 'T0', 'T1'] as const;
  const columns = ['band', 'hi', 'lo', 'shard', 'doc', 'th0', 'th1'] as const;
  const rows = { n } as PartitionRows;
  for (const name of names) rows[name] = scratch.rows.u32(name, n);
  let at = 0;
  for (const { t, a, b } of ranges) {
    const f = ColumnFile.open(path.join(taskDir(workDir, 'sign', t), 'keys.bin'), 'band-keys', job.id);
    try {
      for (let c = 0; c < names.length; c++) f.u32Into(columns[c]!, a, b, rows[names[c]!].subarray(at));
    } finally {
      f.close();
    }
    at += b - a;
  }
  return rows;
}

/**
 * The candidate pairs of one partition, made bucket by bucket: copies folded into their
 * representative (see the module comment), then every pair of representatives (under `--against`,
 * every pair across the sides, oriented corpus → reference).
 */
class PartitionPairs {
  readonly pA: U32Buf;
  readonly pDocA: U32Buf;
  readonly pShardB: U32Buf;
  readonly pDocB: U32Buf;
  /**
   * Needed documents marked by row, one byte per row of this partition (a sort of every group's
   * members, with repeats, was a sixth of this stage; a byte per corpus document would grow with
   * the corpus, not the partition).
   */
  readonly needed: Uint8Array;
  readonly marker: JoinMarker;
  /** Copy members (rep row, member row): few, in a plain array of numbers. */
  readonly copyRows: number[] = [];
  /** Weighted candidate rows (row x, row y, weight): few, in a plain array of numbers. */
  readonly weighted: number[] = [];
  private readonly side: number[];
  /** Whether the last bucket {@link PartitionPairs.fold} saw had copies folded. */
  private folded = false;

  constructor(private readonly job: JobSpec, private readonly p: number, private readonly rows: PartitionRows, private readonly scratch: JoinScratch) {
    [this.pA, this.pDocA, this.pShardB, this.pDocB] = scratch.pairs as [U32Buf, U32Buf, U32Buf, U32Buf];
    this.pA.length =
      this.pDocA.length =
      this.pShardB.length =
      this.pDocB.length =
        0;
    this.needed = new Uint8Array(rows.n);
    this.marker = { keys: rows.n, pairRows: 0, sharedBuckets: 0, largestBucket: 0, copies: 0, copyPairs: 0 };
    this.side = job.shards.map((sh) => sh.side);
  }

  /** Adds the pairs of one group of rows sharing a band key (`all[0 .. size)`, ascending). */
  bucket(all: Int32Array, size: number): void {
    const { marker, pA } = this;
    const m = this.fold(all, size);
    const folded = this.folded;
    if (m < 2) return;
    marker.sharedBuckets++;
    if (m > marker.largestBucket) marker.largestBucket = m;
    const before = pA.length;
    if (!this.job.against) this.allPairs(m, folded);
    else this.acrossPairs(m);
    if (pA.length > before) {
      const members = this.scratch.reps;
      for (let i = 0; i < m; i++) this.needed[members[i]!] = 1;
    }
  }

  /**
   * The bucket's representatives (its members with copies folded, in `scratch.reps`) and how many
   * documents each stands for (`scratch.sizes`); each copy group's members are recorded once, in
   * the bucket of its band-0 key. Returns how many representatives; `folded` says whether any copy
   * was folded (a field, not a returned object: this runs once per bucket).
   */
  private fold(all: Int32Array, size: number): number {
    const { scratch, marker } = this;
    const { B, T0, T1 } = this.rows;
    const fold = !this.job.against;
    if (scratch.reps.length < size) {
      scratch.reps = new Int32Array(size * 2);
      scratch.sizes = new Float64Array(size * 2);
    }
    const members = scratch.reps;
    const sizes = scratch.sizes;
    let m = 0;
    let folded = false;
    for (let i = 0; i < size; i++) {
      const x = all[i]!;
      let j = m;
      if (fold) { for (j = 0; j < m; j++) if (T0[members[j]!] === T0[x] && T1[members[j]!] === T1[x]) break; }
      if (j < m) {
        sizes[j]!++;
        folded = true;
        if (B[x] === 0) this.copyRows.push(members[j]!, x);
      } else {
        members[m] = x;
        sizes[m++] = 1;
      }
    }
    if (folded && B[members[0]!] === 0) {
      for (let j = 0; j < m; j++) {
        marker.copies! += sizes[j]! - 1;
        marker.copyPairs! += (sizes[j]! * (sizes[j]! - 1)) / 2;
      }
    }
    this.folded = folded;
    return m;
  }

  /** Every pair of the m representatives: room for all at once, then plain stores. */
  private allPairs(m: number, folded: boolean): void {
    const { pA, pDocA, pShardB, pDocB } = this;
    const { Sh, D } = this.rows;
    const members = this.scratch.reps;
    const sizes = this.scratch.sizes;
    const before = pA.length;
    const k = (m * (m - 1)) / 2;
    if (before + k > this.job.maxBucketPairs) throw this.tooMany();
    const a = pA.room(k);
    const da = pDocA.room(k);
    const sb = pShardB.room(k);
    const db = pDocB.room(k);
    let w = before;
    for (let i = 0; i < m; i++) {
      const x = members[i]!;
      const sx = Sh[x]!;
      const dx = D[x]!;
      for (let j = i + 1; j < m; j++) {
        const y = members[j]!;
        a[w] = sx;
        da[w] = dx;
        sb[w] = Sh[y]!;
        db[w] = D[y]!;
        w++;
      }
    }
    pA.length =
      pDocA.length =
      pShardB.length =
      pDocB.length =
        w;
    if (!folded) return;
    for (let i = 0; i < m; i++) {
      for (let j = i + 1; j < m; j++) if (sizes[i]! * sizes[j]! > 1) this.weighted.push(members[i]!, members[j]!, sizes[i]! * sizes[j]!);
    }
  }

  /** Under `--against`: the pairs of the m members that cross the sides, corpus first. */
  private acrossPairs(m: number): void {
    const { side, pA } = this;
    const { Sh } = this.rows;
    const members = this.scratch.reps;
    for (let i = 0; i < m; i++) {
      const x = members[i]!;
      for (let j = i + 1; j < m; j++) {
        const y = members[j]!;
        if (side[Sh[x]!] !== side[Sh[y]!]) {
          if (side[Sh[x]!] === 0) this.emit(x, y);
          else this.emit(y, x);
        }
      }
      if (pA.length > this.job.maxBucketPairs) throw this.tooMany();
    }
  }

  private emit(x: number, y: number): void {
    const { Sh, D } = this.rows;
    this.pA.push(Sh[x]!);
    this.pDocA.push(D[x]!);
    this.pShardB.push(Sh[y]!);
    this.pDocB.push(D[y]!);
  }

  private tooMany(): TooManyCandidatesError {
    return new TooManyCandidatesError(
      `partition ${this.p}: more than ${this.job.maxBucketPairs} candidate pair rows (largest group of documents sharing a band key: ${this.marker.largestBucket}); raise --max-pairs, or remove exact copies first`,
    );
  }
}

/**
 * Writes need.bin: the needed documents, ascending and unique within each shard. Rows are in
 * (shard, doc) order, so a document's marked rows are next to each other.
 */
async function writeNeeded(dir: string, job: JobSpec, from: { p: number; rows: PartitionRows; needed: Uint8Array }): Promise<void> {
  const { p, rows, needed } = from;
  const { Sh, D, n } = rows;
  const S = job.shards.length;
  const outDoc = new U32Buf(1 << 12);
  const nstart = new Float64Array(S + 1);
  let lastShard = -1;
  let lastDoc = -1;
  for (let x = 0; x < n; x++) {
    if (needed[x] !== 1 || (Sh[x] === lastShard && D[x] === lastDoc)) continue;
    lastShard = Sh[x]!;
    lastDoc = D[x]!;
    outDoc.push(lastDoc);
    nstart[lastShard + 1]!++;
  }
  for (let s = 0; s < S; s++) nstart[s + 1]! += nstart[s]!;
  await writeColumns(path.join(dir, 'need.bin'), partitionFile(job, p, 'needed-docs'), { doc: outDoc.view(), nstart });
}

/** A join partition's exact copies: its number, its rows' shards and documents, the rows of copies and of weighted documents. */
interface PartitionCopies {
  p: number;
  Sh: Uint32Array;
  D: Uint32Array;
  copyRows: number[];
  weighted: number[];
}

/** Writes copies.bin and weights.bin (see the module comment) from rows of this partition. */
async function writeCopies(dir: string, job: JobSpec, from: PartitionCopies): Promise<void> {
  const { p, Sh, D, copyRows, weighted } = from;
  const S = job.shards.length;
  const c = copyRows.length / 2;
  const [cR, cDR, cSM, cDM] = [new Uint32Array(c), new Uint32Array(c), new Uint32Array(c), new Uint32Array(c)];
  for (let i = 0; i < c; i++) {
    const r = copyRows[2 * i]!;
    const x = copyRows[2 * i + 1]!;
    cR[i] = Sh[r]!;
    cDR[i] = D[r]!;
    cSM[i] = Sh[x]!;
    cDM[i] = D[x]!;
  }
  const copies = groupBy(cR, S, [cDR, cSM, cDM]);
  const [docR, shardM, docM] = copies.columns as [Uint32Array, Uint32Array, Uint32Array];
  await writeColumns(path.join(dir, 'copies.bin'), partitionFile(job, p, 'copy-members'), { docR, shardM, docM, astart: copies.start });
  const k = weighted.length / 3;
  const [wA, wDA, wSB, wDB, idx] = [new Uint32Array(k), new Uint32Array(k), new Uint32Array(k), new Uint32Array(k), new Uint32Array(k)];
  for (let i = 0; i < k; i++) {
    const x = weighted[3 * i]!;
    const y = weighted[3 * i + 1]!;
    wA[i] = Sh[x]!;
    wDA[i] = D[x]!;
    wSB[i] = Sh[y]!;
    wDB[i] = D[y]!;
    idx[i] = i;
  }
  const g = groupBy(wA, S, [wDA, wSB, wDB, idx]);
  const [docA, shardB, docB, order] = g.columns as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  const w = new Float64Array(k);
  for (let i = 0; i < k; i++) w[i] = weighted[3 * order[i]! + 2]!;
  await writeColumns(path.join(dir, 'weights.bin'), partitionFile(job, p, 'copy-weights'), { docA, shardB, docB, w, astart: g.start });
}
