/**
 * Stage 4, verify (one task per shard A): the distinct candidate pairs whose first document is in
 * shard A, checked by exact Jaccard of their fingerprint sets. The sets come from the gather outputs
 * (only candidate documents, read one by one), so a task holds the sets of the documents in its own
 * pairs, never the corpus.
 *
 * Outputs in `verify/NNNNN/`:
 * - `pairs.bin` (kind `verified`): columns docA, shardB, docB (uint32), similarity (float64), sorted
 *   by (docA, shardB, docB): concatenated in shard order, the pairs of the job in global order.
 * - `pairs.txt`: the same pairs as output lines (ids, in the job's pair format).
 * @module
 */
import path from 'node:path';
import { jaccard } from '../similarity/jaccard.js';
import { formatPair } from '../io/write.js';
import { ColumnFile, writeColumns } from './columns.js';
import { requireMarker, taskDir, writeSynced } from './commit.js';
import { runPerShard, shardFileName } from './perShard.js';
import { taskCount, type JobSpec } from './job.js';
import { GatheredShards } from './gathered.js';
import { U32Buf } from './u32buf.js';

/** The verify task's marker. */
export interface VerifyMarker {
  /** Distinct candidate pairs. */
  candidates: number;
  /** Pairs at or above the threshold. */
  pairs: number;
}

/** The candidate pairs of shard A from every join output: (docA, shardB, docB), with repeats. */
function candidatesOf(workDir: string, job: JobSpec, A: number): { docA: Uint32Array; shardB: Uint32Array; docB: Uint32Array } {
  const docA = new U32Buf(1 << 12);
  const shardB = new U32Buf(1 << 12);
  const docB = new U32Buf(1 << 12);
  for (let p = 0; p < job.partitions; p++) {
    requireMarker(workDir, job, 'join', p);
    const f = ColumnFile.open(path.join(taskDir(workDir, 'join', p), 'pairs.bin'), 'candidates', job.id);
    try {
      const st = f.f64('astart');
      const a = st[A]!;
      const b = st[A + 1]!;
      if (b <= a) continue;
      const ca = f.u32('docA', a, b);
      const cs = f.u32('shardB', a, b);
      const cd = f.u32('docB', a, b);
      for (let i = 0; i < ca.length; i++) {
        docA.push(ca[i]!);
        shardB.push(cs[i]!);
        docB.push(cd[i]!);
      }
    } finally {
      f.close();
    }
  }
  return { docA: docA.view(), shardB: shardB.view(), docB: docB.view() };
}

/** Runs verify task `t` (idempotent; every gather task must have completed): the pairs of each shard A of its group. */
export function runVerify(workDir: string, job: JobSpec, t: number): Promise<object> {
  for (let g = 0; g < taskCount(job, 'gather'); g++) requireMarker(workDir, job, 'gather', g);
  return runPerShard<VerifyMarker>(workDir, job, 'verify', t, (dir, A) => verifyShard(workDir, job, dir, A));
}

async function verifyShard(workDir: string, job: JobSpec, dir: string, A: number): Promise<VerifyMarker> {
  {
    const { docA, shardB, docB } = candidatesOf(workDir, job, A);
    const n = docA.length;
    const order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((x, y) => docA[x]! - docA[y]! || shardB[x]! - shardB[y]! || docB[x]! - docB[y]!);
    const gathered = new GatheredShards(workDir, job);
    // Sets of the documents in this task's pairs, keyed by shard · 2^32 + doc.
    const sets = new Map<number, Uint32Array>();
    const setOf = (s: number, d: number): Uint32Array => {
      const key = s * 4294967296 + d;
      let set = sets.get(key);
      if (!set) {
        const g = gathered.get(s);
        const i = g.indexOf(d);
        if (i < 0) throw new Error(`gather output of shard ${s} lacks document ${d}: the job directory is inconsistent`);
        sets.set(key, (set = g.set(i)));
      }
      return set;
    };
    const oa = new U32Buf(1024);
    const os = new U32Buf(1024);
    const ob = new U32Buf(1024);
    const sims: number[] = [];
    const lines: string[] = [];
    let candidates = 0;
    try {
      for (let k = 0; k < n; k++) {
        const x = order[k]!;
        if (k > 0) {
          const y = order[k - 1]!;
          if (docA[x] === docA[y] && shardB[x] === shardB[y] && docB[x] === docB[y]) continue;
        }
        candidates++;
        const a = docA[x]!;
        const s = shardB[x]!;
        const b = docB[x]!;
        const sim = jaccard(setOf(A, a), setOf(s, b));
        if (sim < job.threshold) continue;
        oa.push(a);
        os.push(s);
        ob.push(b);
        sims.push(sim);
        const ga = gathered.get(A);
        const gb = gathered.get(s);
        lines.push(formatPair(job.output.pairFormat, ga.id(ga.indexOf(a)), gb.id(gb.indexOf(b)), sim));
      }
    } finally {
      gathered.close();
    }
    await writeColumns(path.join(dir, shardFileName(A, 'pairs.bin')), 'verified', job.id, { shard: A }, { docA: oa.view(), shardB: os.view(), docB: ob.view(), similarity: Float64Array.from(sims) });
    await writeSynced(path.join(dir, shardFileName(A, 'pairs.txt')), lines.join(''));
    return { candidates, pairs: sims.length };
  }
}
