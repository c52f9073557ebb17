/**
 * Stage 2, join (one task per band-key partition): reads partition p of every shard's band keys,
 * groups equal (band, key) and emits every pair of documents in a group as a candidate (for
 * `--against`, only pairs with one document on each side, oriented corpus → reference).
 *
 * Outputs in `join/NNNNN/`:
 * - `pairs.bin` (kind `candidates`): columns docA, shardB, docB (uint32), grouped by the shard of
 *   document a; `astart` (float64, S + 1) gives shard A's rows. Pairs may repeat (across bands and
 *   partitions): verification removes repeats.
 * - `need.bin` (kind `needed-docs`): column doc (uint32, ascending per shard), grouped by shard with
 *   `nstart` (S + 1): the documents in candidate pairs, whose texts the gather stage collects.
 * @module
 */
import path from 'node:path';
import { InputError, UsageError } from '../io/errors.js';
import { ColumnFile, writeColumns } from './columns.js';
import { commitTask, requireMarker, taskDir } from './commit.js';
import { taskCount, type JobSpec } from './job.js';
import { U32Buf, groupBy } from './u32buf.js';
import { forEachRowBucket, RowBucketScratch } from '../lsh/rowBuckets.js';
import { Reusable } from './reuse.js';

/** The join task's marker. */
export interface JoinMarker {
  /** Band-key rows read. */
  keys: number;
  /** Candidate pair rows written (with repeats). */
  pairRows: number;
  /** Groups of ≥ 2 documents sharing a band key. */
  sharedBuckets: number;
  /** Documents in the largest group. */
  largestBucket: number;
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
const scratchPool = new Reusable(() => ({ rows: new RowBucketScratch(), pairs: [0, 1, 2, 3].map(() => new U32Buf(1 << 12)) }));

/** Runs join task `p` (idempotent). */
export function runJoin(workDir: string, job: JobSpec, p: number): Promise<JoinMarker> {
  return commitTask<JoinMarker>(workDir, job, 'join', p, (dir) => scratchPool.with(async (scratch) => {
    const S = job.shards.length;
    // Partition p's rows of every sign output, read straight into the kept arrays: first the row
    // ranges (and so n), then each column into its place.
    const ranges: { t: number; a: number; b: number }[] = [];
    let n = 0;
    for (let t = 0; t < taskCount(job, 'sign'); t++) {
      requireMarker(workDir, job, 'sign', t);
      const f = ColumnFile.open(path.join(taskDir(workDir, 'sign', t), 'keys.bin'), 'band-keys', job.id);
      try {
        const ps = f.f64('pstart', p, p + 2);
        if (ps[1]! > ps[0]!) ranges.push({ t, a: ps[0]!, b: ps[1]! });
        n += Math.max(0, ps[1]! - ps[0]!);
      } finally {
        f.close();
      }
    }
    checkIds(workDir, job, p);
    const B = scratch.rows.u32('B', n);
    const H = scratch.rows.u32('H', n);
    const L = scratch.rows.u32('L', n);
    const Sh = scratch.rows.u32('Sh', n);
    const D = scratch.rows.u32('D', n);
    let at = 0;
    for (const { t, a, b } of ranges) {
      const f = ColumnFile.open(path.join(taskDir(workDir, 'sign', t), 'keys.bin'), 'band-keys', job.id);
      try {
        f.u32Into('band', a, b, B.subarray(at));
        f.u32Into('hi', a, b, H.subarray(at));
        f.u32Into('lo', a, b, L.subarray(at));
        f.u32Into('shard', a, b, Sh.subarray(at));
        f.u32Into('doc', a, b, D.subarray(at));
      } finally {
        f.close();
      }
      at += b - a;
    }
    const side = job.shards.map((sh) => sh.side);
    const [pA, pDocA, pShardB, pDocB] = scratch.pairs as [U32Buf, U32Buf, U32Buf, U32Buf];
    pA.length = pDocA.length = pShardB.length = pDocB.length = 0;
    // Needed documents marked by row, one byte per row of this partition (a sort of every group's
    // members, with repeats, was a sixth of this stage; a byte per corpus document would grow with
    // the corpus, not the partition).
    const needed = new Uint8Array(n);
    const marker: JoinMarker = { keys: n, pairRows: 0, sharedBuckets: 0, largestBucket: 0 };
    const emit = (x: number, y: number): void => {
      pA.push(Sh[x]!);
      pDocA.push(D[x]!);
      pShardB.push(Sh[y]!);
      pDocB.push(D[y]!);
    };
    const tooMany = (): TooManyCandidatesError =>
      new TooManyCandidatesError(
        `partition ${p}: more than ${job.maxBucketPairs} candidate pair rows (largest group of documents sharing a band key: ${marker.largestBucket}); raise --max-pairs, or remove exact copies first`,
      );
    // Rows were appended in (shard, doc) order, and a group's rows come in that order: x before y.
    forEachRowBucket(B, H, L, job.bands, (members, m) => {
      marker.sharedBuckets++;
      if (m > marker.largestBucket) marker.largestBucket = m;
      const before = pA.length;
      if (!job.against) {
        // Every pair of the group: room for all at once, then plain stores.
        const k = (m * (m - 1)) / 2;
        if (before + k > job.maxBucketPairs) throw tooMany();
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
        pA.length = pDocA.length = pShardB.length = pDocB.length = w;
      } else {
        for (let i = 0; i < m; i++) {
          const x = members[i]!;
          for (let j = i + 1; j < m; j++) {
            const y = members[j]!;
            if (side[Sh[x]!] !== side[Sh[y]!]) {
              if (side[Sh[x]!] === 0) emit(x, y);
              else emit(y, x);
            }
          }
          if (pA.length > job.maxBucketPairs) throw tooMany();
        }
      }
      if (pA.length > before) for (let i = 0; i < m; i++) needed[members[i]!] = 1;
    }, scratch.rows);
    marker.pairRows = pA.length;
    const pairs = groupBy(pA.view(), S, [pDocA.view(), pShardB.view(), pDocB.view()]);
    const [docA, shardB, docB] = pairs.columns as [Uint32Array, Uint32Array, Uint32Array];
    await writeColumns(path.join(dir, 'pairs.bin'), 'candidates', job.id, { partition: p }, { docA, shardB, docB, astart: pairs.start });
    // Needed documents, ascending and unique within each shard: rows are in (shard, doc) order, so
    // a document's marked rows are next to each other.
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
    await writeColumns(path.join(dir, 'need.bin'), 'needed-docs', job.id, { partition: p }, { doc: outDoc.view(), nstart });
    // A partition of exceptionally many pairs does not leave its buffers to the process's next tasks.
    if (pA.capacity > 1 << 24) scratch.pairs = scratch.pairs.map(() => new U32Buf(1 << 12));
    return marker;
  }));
}
