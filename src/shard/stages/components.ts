/**
 * Stage 8, components (one task per shard group): numbers the clusters the decide tasks decided and
 * sends each member's verdict to its shard's group. Clusters are numbered in order of their smallest
 * document, as in `neardup dedup`: task g takes the clusters whose smallest document is in group g
 * from every decide task (each in that order), merges them, and numbers them on from the clusters of
 * the groups before (which each decide task's `pstart` counts). With `--against` there are no
 * clusters: each matched corpus document's best reference match is passed on.
 *
 * Outputs in `components/NNNNN/`:
 * - `clusters.jsonl`: the group's clusters as `neardup dedup --output clusters` writes them; the
 *   job's are the tasks' files one after another.
 * - `assign.bin` (kind `assignment`): columns shard, doc (uint32), cluster (int32; -1 with
 *   --against), rep (float64: global number of the kept document, -1 with `--keep none`, or of the
 *   best reference match), repId (string; '' with `--keep none`), size (int32; -1 with --against),
 *   sim (float64: exact Jaccard to rep, NaN for the kept member or where not known), id (string),
 *   ascending (shard, doc), grouped by the member's shard group with `pstart` (G + 1). Documents in
 *   no cluster are absent. A filter task merges its group's rows of every components task
 *   ({@link groupAssignment}).
 * @module
 */
import path from 'node:path';
import { atomicFileSink } from '../../io/write/output.js';
import { ColumnFile, writeColumns } from '../files/columns.js';
import { commitTask, requireMarker, taskDir } from '../files/commit.js';
import { rangeOf, taskCount, type JobSpec } from '../files/job.js';
import { numbering } from '../files/shardInput.js';
import { groupStarts } from './link.js';
import type { DecideMarker } from './decide.js';
import type { RemovalSummary } from '../../dedup/verifiedGraph.js';
import { recallFromParts, type RecallEstimate } from '../../lsh/recallEstimate.js';

/** The components task's marker. */
export interface ComponentsMarker {
  /** Clusters numbered here. */
  clusters: number;
  /** Assignment rows written. */
  rows: number;
}

/** One decide task's clusters and members of group g. */
interface Piece {
  min: Float64Array;
  size: Int32Array;
  line: string[];
  doc: Float64Array;
  rep: Float64Array;
  repId: string[];
  msize: Int32Array;
  sim: Float64Array;
  id: string[];
}

function readPiece(workDir: string, job: JobSpec, v: number, g: number): { piece: Piece; before: number } {
  const dir = taskDir(workDir, 'decide', v);
  const c = ColumnFile.open(path.join(dir, 'clusters.bin'), 'cluster-lines', job.id);
  const m = ColumnFile.open(path.join(dir, 'members.bin'), 'cluster-members', job.id);
  try {
    const cs = c.f64('pstart', g, g + 2);
    const ms = m.f64('pstart', g, g + 2);
    const [a, b] = [cs[0]!, cs[1]!];
    const [x, y] = [ms[0]!, ms[1]!];
    return {
      before: a,
      piece: {
        min: c.f64('min', a, b),
        size: c.i32('size', a, b),
        line: c.strings('line').range(a, b),
        doc: m.f64('doc', x, y),
        rep: m.f64('rep', x, y),
        repId: m.strings('repId').range(x, y),
        msize: m.i32('size', x, y),
        sim: m.f64('sim', x, y),
        id: m.strings('id').range(x, y),
      },
    };
  } finally {
    c.close();
    m.close();
  }
}

/** Runs components task g (idempotent; every decide task must have completed). */
export function runComponents(workDir: string, job: JobSpec, g: number): Promise<ComponentsMarker> {
  return commitTask<ComponentsMarker>({ workDir, job, stage: 'components', task: g }, async (dir) => {
    const V = taskCount(job, 'decide');
    const { docOffset } = numbering(workDir, job);
    const starts = groupStarts(job, docOffset);
    const pieces: Piece[] = [];
    let first = 0;
    for (let v = 0; v < V; v++) {
      requireMarker(workDir, job, 'decide', v);
      const { piece, before } = readPiece(workDir, job, v, g);
      pieces.push(piece);
      first += before;
    }
    // Member rows, in cluster order, then sorted by document.
    const rows: { doc: number; cluster: number; piece: number; at: number }[] = [];
    const out = await atomicFileSink(path.join(dir, 'clusters.jsonl'));
    let clusters = 0;
    try {
      if (job.against) {
        for (let v = 0; v < V; v++) for (let i = 0; i < pieces[v]!.doc.length; i++) rows.push({ doc: pieces[v]!.doc[i]!, cluster: -1, piece: v, at: i });
      } else {
        // Merge the decide tasks' clusters by smallest document (each task's are in that order).
        const next = new Int32Array(V);
        const memberAt = new Int32Array(V);
        for (;;) {
          let best = -1;
          for (let v = 0; v < V; v++)
            if (next[v]! < pieces[v]!.min.length && (best < 0 || pieces[v]!.min[next[v]!]! < pieces[best]!.min[next[best]!]!)) best = v;
          if (best < 0) break;
          const p = pieces[best]!;
          const k = next[best]!++;
          const number = first + clusters++;
          await out.write(`{"cluster":${number}${p.line[k]!}`);
          for (let j = 0; j < p.size[k]!; j++) {
            const at = memberAt[best]!++;
            rows.push({ doc: p.doc[at]!, cluster: number, piece: best, at });
          }
        }
      }
      await out.close();
    } catch (e) {
      await out.abort();
      throw e;
    }
    rows.sort((x, y) => x.doc - y.doc);
    const n = rows.length;
    const G = starts.length - 1;
    const cols = {
      shard: new Uint32Array(n),
      doc: new Uint32Array(n),
      cluster: new Int32Array(n),
      rep: new Float64Array(n),
      repId: new Array<string>(n),
      size: new Int32Array(n),
      sim: new Float64Array(n),
      id: new Array<string>(n),
      pstart: new Float64Array(G + 1),
    };
    for (let i = 0; i < n; i++) {
      const r = rows[i]!;
      const p = pieces[r.piece]!;
      const s = rangeOf(docOffset, r.doc);
      cols.shard[i] = s;
      cols.doc[i] = r.doc - docOffset[s]!;
      cols.cluster[i] = r.cluster;
      cols.rep[i] = p.rep[r.at]!;
      cols.repId[i] = p.repId[r.at]!;
      cols.size[i] = p.msize[r.at]!;
      cols.sim[i] = p.sim[r.at]!;
      cols.id[i] = p.id[r.at]!;
      cols.pstart[rangeOf(starts, r.doc) + 1]!++;
    }
    for (let x = 0; x < G; x++) cols.pstart[x + 1]! += cols.pstart[x]!;
    await writeColumns(path.join(dir, 'assign.bin'), { kind: 'assignment', plan: job.id, meta: {} }, cols);
    return { clusters, rows: n };
  });
}

/** The verdicts of the clustered documents of shard group f, from every components task: columns by row, ascending (shard, doc). */
export interface GroupAssignment {
  shard: Uint32Array;
  doc: Uint32Array;
  cluster: Int32Array;
  rep: Float64Array;
  repId: string[];
  size: Int32Array;
  sim: Float64Array;
  id: string[];
}

/** Group f's rows of every components task's assign.bin, merged (every components task must have completed). */
export function groupAssignment(workDir: string, job: JobSpec, f: number): GroupAssignment {
  const parts: GroupAssignment[] = [];
  for (let g = 0; g < taskCount(job, 'components'); g++) {
    requireMarker(workDir, job, 'components', g);
    const file = ColumnFile.open(path.join(taskDir(workDir, 'components', g), 'assign.bin'), 'assignment', job.id);
    try {
      const ps = file.f64('pstart', f, f + 2);
      const [a, b] = [ps[0]!, ps[1]!];
      if (b > a)
        parts.push({
          shard: file.u32('shard', a, b),
          doc: file.u32('doc', a, b),
          cluster: file.i32('cluster', a, b),
          rep: file.f64('rep', a, b),
          repId: file.strings('repId').range(a, b),
          size: file.i32('size', a, b),
          sim: file.f64('sim', a, b),
          id: file.strings('id').range(a, b),
        });
    } finally {
      file.close();
    }
  }
  if (parts.length === 1) return parts[0]!;
  const n = parts.reduce((x, p) => x + p.doc.length, 0);
  const out: GroupAssignment = {
    shard: new Uint32Array(n),
    doc: new Uint32Array(n),
    cluster: new Int32Array(n),
    rep: new Float64Array(n),
    repId: new Array<string>(n),
    size: new Int32Array(n),
    sim: new Float64Array(n),
    id: new Array<string>(n),
  };
  const at = new Int32Array(parts.length);
  for (let i = 0; i < n; i++) {
    let best = -1;
    for (let k = 0; k < parts.length; k++) {
      const j = at[k]!;
      if (j >= parts[k]!.doc.length) continue;
      if (best < 0) best = k;
      else {
        const b = parts[best]!;
        const p = parts[k]!;
        const bj = at[best]!;
        if (p.shard[j]! < b.shard[bj]! || (p.shard[j] === b.shard[bj] && p.doc[j]! < b.doc[bj]!)) best = k;
      }
    }
    const p = parts[best]!;
    const j = at[best]!++;
    out.shard[i] = p.shard[j]!;
    out.doc[i] = p.doc[j]!;
    out.cluster[i] = p.cluster[j]!;
    out.rep[i] = p.rep[j]!;
    out.repId[i] = p.repId[j]!;
    out.size[i] = p.size[j]!;
    out.sim[i] = p.sim[j]!;
    out.id[i] = p.id[j]!;
  }
  return out;
}

/** The job's clustering counters, summed over the decide tasks (every one must have completed). */
export interface ClusterTotals {
  clusters: number;
  docsInClusters: number;
  duplicates: number;
  referenceMatched?: number;
  removal?: RemovalSummary;
  recall: RecallEstimate;
}

/** Sums the decide markers: counts add up, the largest cluster and lowest similarity are the extremes. */
export function clusterTotals(workDir: string, job: JobSpec): ClusterTotals {
  const t: ClusterTotals = { clusters: 0, docsInClusters: 0, duplicates: 0, recall: recallFromParts([]) };
  const recall = [];
  let removal: RemovalSummary | undefined;
  for (let v = 0; v < taskCount(job, 'decide'); v++) {
    const m = requireMarker<DecideMarker>(workDir, job, 'decide', v);
    t.clusters += m.clusters;
    t.docsInClusters += m.docsInClusters;
    t.duplicates += m.duplicates;
    if (m.referenceMatched !== undefined) t.referenceMatched = (t.referenceMatched ?? 0) + m.referenceMatched;
    recall.push(m.recall);
    if (m.removal) removal = mergeRemoval(removal, m.removal);
  }
  t.recall = recallFromParts(recall);
  if (job.against) t.referenceMatched ??= 0;
  else if (removal) t.removal = removal;
  else t.removal = { rule: job.removal ?? 'cluster', clusterDrops: 0, verifiedDrops: 0, ...(job.removal === 'verified' ? {} : { largestCluster: 0 }) };
  return t;
}

function mergeRemoval(a: RemovalSummary | undefined, b: RemovalSummary): RemovalSummary {
  if (!a) return { ...b };
  // The fields in the order one process writes them (the --json summary prints this object).
  const out: RemovalSummary = {
    rule: b.rule,
    ...(a.verifiedDrops !== undefined || b.verifiedDrops !== undefined ? { verifiedDrops: (a.verifiedDrops ?? 0) + (b.verifiedDrops ?? 0) } : {}),
    clusterDrops: a.clusterDrops + b.clusterDrops,
  };
  if (a.largestCluster !== undefined || b.largestCluster !== undefined) out.largestCluster = Math.max(a.largestCluster ?? 0, b.largestCluster ?? 0);
  const low = Math.min(a.lowestSimilarity ?? Infinity, b.lowestSimilarity ?? Infinity);
  if (low !== Infinity) out.lowestSimilarity = low;
  return out;
}
