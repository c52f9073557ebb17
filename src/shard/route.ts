/**
 * Stage 4, route (one task per shard group): the distinct candidate pairs of the group's documents,
 * each sent to the verify task of its connected component (from the link stage): a component goes
 * whole to one verify task, which then makes each candidate document's fingerprint set once, as
 * `neardup dedup` does. Components are shared out by their smallest document, in runs of about
 * equal numbers of documents (link task 0's cuts), so a verify task's documents lie near each
 * other in the corpus; the components of a label bin bigger than one and a half shares (a giant
 * component) are spread over several tasks by first document. Memory grows with the
 * group's candidate rows (with repeats), not with the corpus.
 *
 * Outputs in `route/NNNNN/`:
 * - `pairs.bin` (kind `routed`): columns shardA, docA, shardB, docB (uint32) and comp (float64: the
 *   component's smallest document), the distinct pairs whose first document is in this group,
 *   sorted by (verify task, component, global document a, global document b); `pstart` (float64,
 *   verify tasks + 1) gives verify task t's rows.
 * @module
 */
import path from 'node:path';
import { ColumnFile, writeColumns } from './columns.js';
import { commitTask, requireMarker, taskDir } from './commit.js';
import { checkShard, rangeOf, roundStage, shardsOfTask, taskCount, type JobSpec } from './job.js';
import { numbering } from './shardInput.js';
import { groupPairs, groupStarts, labelBin, labelBins, linkRound, verifyTaskOf, type LinkMarker, type LinkRoundMarker } from './link.js';
import { neighbours } from './starGraph.js';

/** The route task's marker. */
export interface RouteMarker {
  /** Distinct candidate pairs whose first document is in this group. */
  candidates: number;
  /** The group's documents in candidate pairs. */
  docs: number;
  /** Components whose smallest document is in this group. */
  components: number;
  /** Documents in the largest of those. */
  largestComponent: number;
}

/** The labels of the group's documents in candidate pairs (ascending node), from the converged link round. */
function groupLabels(workDir: string, job: JobSpec, round: number, q: number): { node: Float64Array; label: Float64Array } {
  const f = ColumnFile.open(path.join(taskDir(workDir, roundStage(round), q), 'labels.bin'), 'link-labels', job.id);
  try {
    return { node: f.f64('node'), label: f.f64('label') };
  } finally {
    f.close();
  }
}

/** Runs route task q (idempotent; every link task must have completed). */
export function runRoute(workDir: string, job: JobSpec, q: number): Promise<RouteMarker> {
  return commitTask<RouteMarker>(workDir, job, 'route', q, async (dir) => {
    const lm0 = requireMarker<LinkMarker>(workDir, job, 'link', 0);
    const cuts = lm0.cuts!;
    const spread = new Map((lm0.spread ?? []).map(([bin, first, count]) => [bin, [first, count] as const]));
    const round = linkRound(workDir, job);
    const { docOffset } = numbering(workDir, job);
    // Without gather, whose tasks checked every shard, route does: a shard changed since sign is
    // refused before verification reads lines of it by offset.
    const { first, end } = shardsOfTask(job, q);
    if (job.gather === false) for (let s = first; s < end; s++) checkShard(workDir, job, s);
    const starts = groupStarts(job, docOffset);
    const lo = starts[q]!;
    const { a, b } = groupPairs(workDir, job, q, docOffset);
    const g = neighbours(a, b, lo, starts[q + 1]! - lo);
    const { node, label } = groupLabels(workDir, job, round, q);
    const N = docOffset[docOffset.length - 1]!;
    const nbins = labelBins(job);
    const m = g.nbr.length;
    // Rows in (a, b) order, each with its component and verify task; then a stable sort by (task, component).
    const ga = new Float64Array(m);
    const comp = new Float64Array(m);
    const task = new Int32Array(m);
    let k = 0;
    for (let d = 0, i = 0; d + 1 < g.start.length; d++) {
      const e = g.start[d + 1]!;
      if (e === i) continue;
      while (node[k]! < lo + d) k++;
      if (node[k] !== lo + d) throw new Error(`route task ${q}: document ${lo + d} has no component (the link stage's labels are damaged)`);
      const c = label[k]!;
      const bin = labelBin(c, N, nbins);
      const wide = spread.get(bin);
      // A bin too big for one task: its pairs go by first document, in runs (the decide stage joins them again).
      const t = wide ? wide[0] + Math.min(wide[1] - 1, Math.floor(((lo + d) * wide[1]) / Math.max(1, N))) : verifyTaskOf(cuts, bin);
      for (; i < e; i++) {
        ga[i] = lo + d;
        comp[i] = c;
        task[i] = t;
      }
    }
    const order = Int32Array.from({ length: m }, (_, i) => i).sort((x, y) => task[x]! - task[y]! || comp[x]! - comp[y]! || x - y);
    const V = taskCount(job, 'verify');
    const pstart = new Float64Array(V + 1);
    for (let i = 0; i < m; i++) pstart[task[i]! + 1]!++;
    for (let t = 0; t < V; t++) pstart[t + 1]! += pstart[t]!;
    const shardA = new Uint32Array(m);
    const docA = new Uint32Array(m);
    const shardB = new Uint32Array(m);
    const docB = new Uint32Array(m);
    const compOut = new Float64Array(m);
    for (let i = 0; i < m; i++) {
      const r = order[i]!;
      const x = rangeOf(docOffset, ga[r]!);
      const y = rangeOf(docOffset, g.nbr[r]!);
      shardA[i] = x;
      docA[i] = ga[r]! - docOffset[x]!;
      shardB[i] = y;
      docB[i] = g.nbr[r]! - docOffset[y]!;
      compOut[i] = comp[r]!;
    }
    await writeColumns(path.join(dir, 'pairs.bin'), 'routed', job.id, {}, { shardA, docA, shardB, docB, comp: compOut, pstart });
    const lm = requireMarker<LinkRoundMarker>(workDir, job, roundStage(round), q);
    return { candidates: m, docs: node.length, components: lm.centres ?? 0, largestComponent: lm.largest ?? 0 };
  });
}
