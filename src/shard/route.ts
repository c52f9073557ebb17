/**
 * Stage 3, route (one task): the connected components of the candidate graph (every join output's
 * pairs), each given whole to one verify task. A verify task then makes each candidate document's
 * fingerprint set once, as `neardup dedup` does, where routing pairs by the shard of their first
 * document made a document's set again in every task that held one of its partners (~1.9 sets per
 * candidate document on the 1M bench). Components are numbered by their smallest member and handed
 * out as consecutive runs of about equal work (3 per document + 1 per pair), so a task's documents lie near
 * each other in the corpus. Memory grows with the candidate pairs, not with the corpus: ~16 B per
 * candidate row read (with repeats) on both planner bench corpora, in a task process of its own.
 *
 * Outputs in `route/00000/`:
 * - `pairs.bin` (kind `routed`): columns shardA, docA, shardB, docB, comp (uint32), the distinct
 *   candidate pairs sorted by (verify task, component, global document a, global document b); `tstart`
 *   (float64, verify tasks + 1) gives task t's rows.
 * @module
 */
import path from 'node:path';
import { clustersOfPairs } from '../dedup/clusters.js';
import { writeColumns } from './columns.js';
import { commitTask } from './commit.js';
import { openJoinFiles } from './perShard.js';
import { checkShard, rangeOf, taskCount, type JobSpec } from './job.js';
import { numbering } from './shardInput.js';
import type { ColumnFile } from './columns.js';

const TWO32 = 4294967296;

/**
 * The distinct candidate pairs of shard A from every join output, grouped by first document:
 * document a's partners (shardB · 2^32 + docB, ascending, unique) are `partner[start[a] .. start[a+1])`.
 */
function candidatesOf(joins: readonly ColumnFile[], A: number, docs: number): { start: Float64Array; partner: Float64Array } {
  const parts: { a: Uint32Array; s: Uint32Array; b: Uint32Array }[] = [];
  const start = new Float64Array(docs + 1);
  let n = 0;
  for (const f of joins) {
    const st = f.f64('astart', A, A + 2);
    if (st[1]! <= st[0]!) continue;
    const part = { a: f.u32('docA', st[0]!, st[1]!), s: f.u32('shardB', st[0]!, st[1]!), b: f.u32('docB', st[0]!, st[1]!) };
    for (let i = 0; i < part.a.length; i++) start[part.a[i]! + 1]!++;
    n += part.a.length;
    parts.push(part);
  }
  // A counting sort by first document, then each document's few partners sorted and made unique.
  for (let d = 0; d < docs; d++) start[d + 1]! += start[d]!;
  const fill = start.slice(0, docs);
  const all = new Float64Array(n);
  for (const { a, s, b } of parts) for (let i = 0; i < a.length; i++) all[fill[a[i]!]!++] = s[i]! * TWO32 + b[i]!;
  const partner = new Float64Array(n);
  let m = 0;
  for (let d = 0; d < docs; d++) {
    const a = start[d]!;
    const e = start[d + 1]!;
    start[d] = m;
    if (e - a > 16) all.subarray(a, e).sort();
    else {
      // Most documents have a few partners (or none): an insertion sort in place, without a subarray
      // object and a sort call per document (those were most of this stage).
      for (let i = a + 1; i < e; i++) {
        const v = all[i]!;
        let j = i - 1;
        while (j >= a && all[j]! > v) {
          all[j + 1] = all[j]!;
          j--;
        }
        all[j + 1] = v;
      }
    }
    for (let i = a; i < e; i++) if (i === a || all[i] !== all[i - 1]) partner[m++] = all[i]!;
  }
  start[docs] = m;
  return { start, partner: partner.subarray(0, m) };
}

/** The route task's marker. */
export interface RouteMarker {
  /** Distinct candidate pairs. */
  candidates: number;
  /** Documents in candidate pairs. */
  docs: number;
  /** Connected components of the candidate graph. */
  components: number;
  /** Documents in the largest component. */
  largestComponent: number;
}

/** Runs the route task (idempotent; every join task must have completed). */
export function runRoute(workDir: string, job: JobSpec, task = 0): Promise<RouteMarker> {
  if (task !== 0) throw new Error(`route has one task (0), not ${task}`);
  return commitTask<RouteMarker>(workDir, job, 'route', 0, async (dir) => {
    const { docOffset, markers } = numbering(workDir, job);
    const S = job.shards.length;
    // Without gather, whose tasks checked every shard, route does: a shard changed since sign is
    // refused before verification reads lines of it by offset.
    if (job.gather === false) for (let s = 0; s < S; s++) if (!markers[s]!.skipped) checkShard(workDir, job, s);
    const joins = openJoinFiles(workDir, job, 'pairs.bin', 'candidates');
    // The distinct pairs in global order (global document numbers), shard A by shard A (the join rows
    // repeat a pair once per shared band): each shard's in arrays of its exact size, then joined, so
    // that the memory per pair does not jump where a doubled buffer would (the planner scales it).
    const piecesA: Float64Array[] = [];
    const piecesB: Float64Array[] = [];
    let m = 0;
    try {
      for (let A = 0; A < S; A++) {
        const { start, partner } = candidatesOf(joins, A, docOffset[A + 1]! - docOffset[A]!);
        const pa = new Float64Array(partner.length);
        const pb = new Float64Array(partner.length);
        for (let a = 0; a + 1 < start.length; a++) {
          const g = docOffset[A]! + a;
          for (let i = start[a]!; i < start[a + 1]!; i++) {
            const s = Math.floor(partner[i]! / TWO32);
            pa[i] = g;
            pb[i] = docOffset[s]! + (partner[i]! - s * TWO32);
          }
        }
        piecesA.push(pa);
        piecesB.push(pb);
        m += partner.length;
      }
    } finally {
      for (const f of joins) f.close();
    }
    const ga = new Float64Array(m);
    const gb = new Float64Array(m);
    for (let k = 0, at = 0; k < piecesA.length; at += piecesA[k]!.length, k++) {
      ga.set(piecesA[k]!, at);
      gb.set(piecesB[k]!, at);
    }
    piecesA.length = piecesB.length = 0;
    const comp = new Int32Array(m);
    const { docs, start } = clustersOfPairs(ga, gb, m, comp);
    const K = start.length - 1;
    // Rows grouped by component, in global order within each (a stable counting sort).
    const rowsOf = new Float64Array(K);
    for (let i = 0; i < m; i++) rowsOf[comp[i]!]!++;
    const cstart = new Float64Array(K + 1);
    for (let k = 0; k < K; k++) cstart[k + 1] = cstart[k]! + rowsOf[k]!;
    const fill = cstart.slice(0, K);
    const keep = new Int32Array(m);
    for (let i = 0; i < m; i++) keep[fill[comp[i]!]!++] = i;
    // Consecutive components to each verify task, about equal work each: a set to make per document,
    // a probe per pair. On the 1M bench a set cost ~24 µs and a probe ~9 µs, so a document weighs 3
    // pairs (weighed 1:1, the tasks of many small components took twice those of a few big ones).
    const V = taskCount(job, 'verify');
    const DOC_WEIGHT = 3;
    const sizes = new Float64Array(K);
    for (let k = 0; k < K; k++) sizes[k] = start[k + 1]! - start[k]!;
    const tstart = new Float64Array(V + 1);
    let work = 0;
    for (let k = 0; k < K; k++) work += DOC_WEIGHT * sizes[k]! + rowsOf[k]!;
    let t = 0;
    let done = 0;
    let row = 0;
    let largest = 0;
    for (let k = 0; k < K; k++) {
      largest = Math.max(largest, sizes[k]!);
      done += DOC_WEIGHT * sizes[k]! + rowsOf[k]!;
      row += rowsOf[k]!;
      while (t < V - 1 && done >= (work * (t + 1)) / V) tstart[++t] = row;
    }
    while (t < V) tstart[++t] = row;
    // Each row's shard and document back from its global document numbers, in component order.
    const shardA = new Uint32Array(m);
    const docA = new Uint32Array(m);
    const shardB = new Uint32Array(m);
    const docB = new Uint32Array(m);
    const compOut = new Uint32Array(m);
    for (let i = 0; i < m; i++) {
      const r = keep[i]!;
      const a = ga[r]!;
      const b = gb[r]!;
      const x = rangeOf(docOffset, a);
      const y = rangeOf(docOffset, b);
      shardA[i] = x;
      docA[i] = a - docOffset[x]!;
      shardB[i] = y;
      docB[i] = b - docOffset[y]!;
      compOut[i] = comp[r]!;
    }
    await writeColumns(path.join(dir, 'pairs.bin'), 'routed', job.id, {}, { shardA, docA, shardB, docB, comp: compOut, tstart });
    return { candidates: m, docs: docs.length, components: K, largestComponent: largest };
  });
}
