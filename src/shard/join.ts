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
import { forEachRowBucket } from '../lsh/rowBuckets.js';

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
 * neardup dedup does: partition p of every shard's explicit ids, compared as strings.
 */
function checkIds(workDir: string, job: JobSpec, p: number): void {
  const first = new Map<string, { shard: number; line: number }>();
  for (let t = 0; t < taskCount(job, 'sign'); t++) {
    const m = requireMarker(workDir, job, 'sign', t);
    if (!m.files['ids.bin']) continue;
    const f = ColumnFile.open(path.join(taskDir(workDir, 'sign', t), 'ids.bin'), 'id-keys', job.id);
    try {
      const ps = f.f64('pstart', p, p + 2);
      const a = ps[0]!;
      const b = ps[1]!;
      if (b <= a) continue;
      const ids = f.strings('id').range(a, b);
      const lines = f.u32('line', a, b);
      const shards = f.u32('shard', a, b);
      for (let i = 0; i < ids.length; i++) {
        const s = shards[i]!;
        const key = `${job.shards[s]!.side}\u0000${ids[i]!}`;
        const seen = first.get(key);
        if (seen) {
          const where = seen.shard === s ? `line ${seen.line}` : `${job.shards[seen.shard]!.path}:${seen.line}`;
          throw new InputError(job.shards[s]!.path, lines[i]!, `duplicate id "${ids[i]!}" (first on ${where}); ids must be unique`);
        }
        first.set(key, { shard: s, line: lines[i]! });
      }
    } finally {
      f.close();
    }
  }
}

/** Concatenates typed arrays. */
function concat(parts: readonly Uint32Array[], n: number): Uint32Array {
  const out = new Uint32Array(n);
  let at = 0;
  for (const x of parts) {
    out.set(x, at);
    at += x.length;
  }
  return out;
}

/** Runs join task `p` (idempotent). */
export function runJoin(workDir: string, job: JobSpec, p: number): Promise<JoinMarker> {
  return commitTask<JoinMarker>(workDir, job, 'join', p, async (dir) => {
    const S = job.shards.length;
    const cols: Record<'band' | 'hi' | 'lo' | 'shard' | 'doc', Uint32Array[]> = { band: [], hi: [], lo: [], shard: [], doc: [] };
    let n = 0;
    for (let t = 0; t < taskCount(job, 'sign'); t++) {
      requireMarker(workDir, job, 'sign', t);
      const f = ColumnFile.open(path.join(taskDir(workDir, 'sign', t), 'keys.bin'), 'band-keys', job.id);
      try {
        const ps = f.f64('pstart', p, p + 2);
        const a = ps[0]!;
        const b = ps[1]!;
        if (b > a) {
          for (const c of ['band', 'hi', 'lo', 'shard', 'doc'] as const) cols[c].push(f.u32(c, a, b));
          n += b - a;
        }
      } finally {
        f.close();
      }
    }
    checkIds(workDir, job, p);
    const B = concat(cols.band, n);
    const H = concat(cols.hi, n);
    const L = concat(cols.lo, n);
    const Sh = concat(cols.shard, n);
    const D = concat(cols.doc, n);
    const side = job.shards.map((sh) => sh.side);
    const pA = new U32Buf(1 << 12);
    const pDocA = new U32Buf(1 << 12);
    const pShardB = new U32Buf(1 << 12);
    const pDocB = new U32Buf(1 << 12);
    const nShard = new U32Buf(1 << 12);
    const nDoc = new U32Buf(1 << 12);
    const marker: JoinMarker = { keys: n, pairRows: 0, sharedBuckets: 0, largestBucket: 0 };
    const emit = (x: number, y: number): void => {
      pA.push(Sh[x]!);
      pDocA.push(D[x]!);
      pShardB.push(Sh[y]!);
      pDocB.push(D[y]!);
    };
    // Rows were appended in (shard, doc) order, and a group's rows come in that order: x before y.
    forEachRowBucket(B, H, L, job.bands, (members, m) => {
      marker.sharedBuckets++;
      if (m > marker.largestBucket) marker.largestBucket = m;
      const before = pA.length;
      for (let i = 0; i < m; i++) {
        const x = members[i]!;
        for (let j = i + 1; j < m; j++) {
          const y = members[j]!;
          if (!job.against) emit(x, y);
          else if (side[Sh[x]!] !== side[Sh[y]!]) {
            if (side[Sh[x]!] === 0) emit(x, y);
            else emit(y, x);
          }
        }
        if (pA.length > job.maxBucketPairs) {
          throw new TooManyCandidatesError(
            `partition ${p}: more than ${job.maxBucketPairs} candidate pair rows (largest group of documents sharing a band key: ${marker.largestBucket}); raise --max-pairs, or remove exact copies first`,
          );
        }
      }
      if (pA.length > before) {
        for (let i = 0; i < m; i++) {
          nShard.push(Sh[members[i]!]!);
          nDoc.push(D[members[i]!]!);
        }
      }
    });
    marker.pairRows = pA.length;
    const pairs = groupBy(pA.view(), S, [pDocA.view(), pShardB.view(), pDocB.view()]);
    const [docA, shardB, docB] = pairs.columns as [Uint32Array, Uint32Array, Uint32Array];
    await writeColumns(path.join(dir, 'pairs.bin'), 'candidates', job.id, { partition: p }, { docA, shardB, docB, astart: pairs.start });
    // Needed documents: ascending and unique within each shard.
    const need = groupBy(nShard.view(), S, [nDoc.view()]);
    const nd = need.columns[0]!;
    const outDoc = new U32Buf(nd.length);
    const nstart = new Float64Array(S + 1);
    for (let s = 0; s < S; s++) {
      const part = nd.subarray(need.start[s]!, need.start[s + 1]!).sort();
      for (let i = 0; i < part.length; i++) if (i === 0 || part[i] !== part[i - 1]) outDoc.push(part[i]!);
      nstart[s + 1] = outDoc.length;
    }
    await writeColumns(path.join(dir, 'need.bin'), 'needed-docs', job.id, { partition: p }, { doc: outDoc.view(), nstart });
    return marker;
  });
}
