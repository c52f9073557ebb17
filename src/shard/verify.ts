/**
 * Stage 4, verify (one task per group of shards): for each shard A of the group, the distinct
 * candidate pairs whose first document is in A, checked by exact Jaccard of their fingerprint sets. The sets come from the gather outputs
 * (only candidate documents, read one by one), so a task holds the sets of the documents in its own
 * pairs, never the corpus.
 *
 * Outputs in `verify/NNNNN/`:
 * - `pairs.bin` (kind `verified`): columns shardA, docA, shardB, docB (uint32), similarity (float64),
 *   sorted by (shardA, docA, shardB, docB): concatenated in task order, the pairs of the job in
 *   global order.
 * - `pairs.txt`: the same pairs as output lines (ids, in the job's pair format).
 * @module
 */
import path from 'node:path';
import { jaccard } from '../similarity/jaccard.js';
import { formatPair } from '../io/write.js';
import { ColumnFile, writeColumns } from './columns.js';
import { requireMarker, writeSynced } from './commit.js';
import { openJoinFiles, runPerShard } from './perShard.js';
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
function candidatesOf(joins: readonly ColumnFile[], A: number): { docA: Uint32Array; shardB: Uint32Array; docB: Uint32Array } {
  const docA = new U32Buf(1 << 10);
  const shardB = new U32Buf(1 << 10);
  const docB = new U32Buf(1 << 10);
  for (const f of joins) {
    const st = f.f64('astart', A, A + 2);
    const a = st[0]!;
    const b = st[1]!;
    if (b <= a) continue;
    const ca = f.u32('docA', a, b);
    const cs = f.u32('shardB', a, b);
    const cd = f.u32('docB', a, b);
    for (let i = 0; i < ca.length; i++) {
      docA.push(ca[i]!);
      shardB.push(cs[i]!);
      docB.push(cd[i]!);
    }
  }
  return { docA: docA.view(), shardB: shardB.view(), docB: docB.view() };
}

/** Runs verify task `t` (idempotent; every gather task must have completed): the pairs of each shard A of its group. */
export function runVerify(workDir: string, job: JobSpec, t: number): Promise<object> {
  for (let g = 0; g < taskCount(job, 'gather'); g++) requireMarker(workDir, job, 'gather', g);
  // The join outputs and the gathered sets are opened once for the task's shards.
  const joins = openJoinFiles(workDir, job, 'pairs.bin', 'candidates');
  const gathered = new GatheredShards(workDir, job);
  const out = new VerifyOutput();
  return runPerShard<VerifyMarker>(
    workDir,
    job,
    'verify',
    t,
    (A) => verifyShard(job, joins, gathered, out, A),
    async (dir) => {
      await writeColumns(path.join(dir, 'pairs.bin'), 'verified', job.id, {}, { shardA: out.sa.view(), docA: out.oa.view(), shardB: out.os.view(), docB: out.ob.view(), similarity: Float64Array.from(out.sims) });
      await writeSynced(path.join(dir, 'pairs.txt'), out.lines.join(''));
    },
  ).finally(() => {
    for (const f of joins) f.close();
    gathered.close();
  });
}

/** The verified pairs of a verify task, all its shards, in order. */
class VerifyOutput {
  readonly sa = new U32Buf(1024);
  readonly oa = new U32Buf(1024);
  readonly os = new U32Buf(1024);
  readonly ob = new U32Buf(1024);
  readonly sims: number[] = [];
  readonly lines: string[] = [];
}

async function verifyShard(job: JobSpec, joins: readonly ColumnFile[], gathered: GatheredShards, out: VerifyOutput, A: number): Promise<VerifyMarker> {
  {
    const { docA, shardB, docB } = candidatesOf(joins, A);
    const n = docA.length;
    const order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((x, y) => docA[x]! - docA[y]! || shardB[x]! - shardB[y]! || docB[x]! - docB[y]!);
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
    const { sa, oa, os, ob, sims, lines } = out;
    const before = sims.length;
    let candidates = 0;
    {
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
        sa.push(A);
        oa.push(a);
        os.push(s);
        ob.push(b);
        sims.push(sim);
        const ga = gathered.get(A);
        const gb = gathered.get(s);
        lines.push(formatPair(job.output.pairFormat, ga.id(ga.indexOf(a)), gb.id(gb.indexOf(b)), sim));
      }
    }
    return { candidates, pairs: sims.length - before };
  }
}
