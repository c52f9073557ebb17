/**
 * Stage 3, link: the connected components of the candidate graph, over pairs partitioned by
 * document, in rounds. A document belongs to the partition of its shard group, and each round has
 * one task per group, so no task holds more than its partition's share of the edges (and a star's
 * centre its star). The rounds follow large-star/small-star (Kiveris et al., "Connected Components
 * in MapReduce and Beyond", SoCC 2014), after a first round that contracts locally:
 *
 * - round 0, contract: task q takes the candidate pairs of its shards' documents from every join
 *   output and joins each document of them to the smallest document of its local component
 *   (union-find over those pairs only). Most links of a chain of near duplicates share bands, so
 *   a chain mostly folds here, in one task, instead of taking a round per doubling.
 * - odd rounds, large-star: each document links its larger neighbours to the smallest of itself and
 *   its neighbours;
 * - even rounds from 2, small-star: each document links itself and its smaller neighbours to the
 *   smallest of them.
 *
 * A large-star round whose every task found only stars (each document is a centre whose
 * neighbours are all larger, or has one neighbour, smaller) ends the stage: each document's
 * component is then its star's centre, the component's smallest document.
 *
 * How many rounds that takes is known only as they run, so rounds are not stages: the runners
 * call `driveLink` (src/shard/linkDriver.ts), which runs round after round (`link/r0000`, `link/r0001`, …, each through
 * the work dir like any task), and then each link task commits a marker naming the last round.
 *
 * Outputs in `link/rNNNN/qqqqq/`:
 * - `edges.bin` (kind `link-edges`): u, v (float64, global document numbers), each edge at the
 *   partition of u, grouped by partition with `pstart` (G + 1). Into a large-star round both
 *   orientations of an edge go; into a small-star round only (larger, smaller).
 * - `labels.bin` (kind `link-labels`; large-star rounds, from tasks that found only stars): node
 *   and label (float64, ascending node: every document of the partition in a candidate pair and its
 *   component), and `bins` (float64, {@link labelBins}): the partition's documents counted by their
 *   label's bin of the corpus, from which link task 0 cuts the components into verify tasks.
 * @module
 */
import path from 'node:path';
import { clustersOfPairs } from '../dedup/clusters.js';
import { ColumnFile, writeColumns } from './columns.js';
import { commitTask, readMarker, requireMarker, taskDir, type MarkerBase } from './commit.js';
import { roundStage, taskCount, type JobSpec } from './job.js';
import { EdgeOut, largeStar, neighbours, smallStar } from './starGraph.js';
import { convergedRound } from './linkDriver.js';
import { numbering } from './shardInput.js';

/** Bins of the label histogram (route cuts the components into verify tasks at their edges): 4096, or 4 per verify task. */
export function labelBins(job: JobSpec): number {
  return Math.max(4096, 4 * taskCount(job, 'verify'));
}

/** A link round task's marker. */
export interface LinkRoundMarker {
  /** Edge rows read (with repeats) and written. */
  edgesIn: number;
  edgesOut: number;
  /** Documents grouped (with edges at this partition). */
  nodes: number;
  /** Large-star rounds: every document of the partition was a star's centre or leaf. */
  star?: boolean;
  /** Large-star rounds: stars centred in this partition, and the most documents in one. */
  centres?: number;
  largest?: number;
}

/** A link task's marker: the round the components were read from. */
export interface LinkMarker {
  /** The converged large-star round. */
  round: number;
  /** Of this partition's round tasks: wall and CPU time summed, and the highest peak memory. */
  roundsWallMs: number;
  roundsCpuMs: number;
  roundsPeakRss: number;
  /**
   * Task 0 only: where the verify tasks' shares of the components begin, as label bins (verify
   * tasks + 1; the last is the bin count): about equal numbers of candidate documents each.
   */
  cuts?: number[];
  /**
   * Task 0 only: the bins of components too big for one verify task, as [bin, first task, tasks]:
   * their pairs are spread over those tasks by first document (the decide stage gathers them again).
   */
  spread?: [number, number, number][];
}

/** The partitions of the documents: the global number of each shard group's first document (G + 1). */
export function groupStarts(job: JobSpec, docOffset: Float64Array): Float64Array {
  return Float64Array.from(job.groups, (s) => docOffset[s]!);
}

/** The candidate pairs of the documents of shard group q, from every join output (global numbers, with repeats). */
export function groupPairs(workDir: string, job: JobSpec, q: number, docOffset: Float64Array): { a: Float64Array; b: Float64Array } {
  const first = job.groups[q]!;
  const end = job.groups[q + 1]!;
  const parts: { a: Float64Array; b: Float64Array }[] = [];
  let n = 0;
  for (let p = 0; p < job.partitions; p++) {
    requireMarker(workDir, job, 'join', p);
    const f = ColumnFile.open(path.join(taskDir(workDir, 'join', p), 'pairs.bin'), 'candidates', job.id);
    try {
      const st = f.f64('astart', first, end + 1);
      const lo = st[0]!;
      const hi = st[end - first]!;
      if (hi <= lo) continue;
      const docA = f.u32('docA', lo, hi);
      const shardB = f.u32('shardB', lo, hi);
      const docB = f.u32('docB', lo, hi);
      const a = new Float64Array(hi - lo);
      const b = new Float64Array(hi - lo);
      for (let s = first, i = 0; s < end; s++) {
        for (const e = st[s - first + 1]! - lo; i < e; i++) {
          a[i] = docOffset[s]! + docA[i]!;
          b[i] = docOffset[shardB[i]!]! + docB[i]!;
        }
      }
      parts.push({ a, b });
      n += a.length;
    } finally {
      f.close();
    }
  }
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  for (let k = 0, at = 0; k < parts.length; at += parts[k]!.a.length, k++) {
    a.set(parts[k]!.a, at);
    b.set(parts[k]!.b, at);
  }
  return { a, b };
}

/** Partition q's edges from every task of round r. */
function roundEdges(workDir: string, job: JobSpec, r: number, q: number): { u: Float64Array; v: Float64Array } {
  const G = taskCount(job, 'link');
  const us: Float64Array[] = [];
  const vs: Float64Array[] = [];
  let n = 0;
  for (let p = 0; p < G; p++) {
    requireMarker(workDir, job, roundStage(r), p);
    const f = ColumnFile.open(path.join(taskDir(workDir, roundStage(r), p), 'edges.bin'), 'link-edges', job.id);
    try {
      const ps = f.f64('pstart', q, q + 2);
      if (ps[1]! <= ps[0]!) continue;
      us.push(f.f64('u', ps[0]!, ps[1]!));
      vs.push(f.f64('v', ps[0]!, ps[1]!));
      n += ps[1]! - ps[0]!;
    } finally {
      f.close();
    }
  }
  const u = new Float64Array(n);
  const v = new Float64Array(n);
  for (let k = 0, at = 0; k < us.length; at += us[k]!.length, k++) {
    u.set(us[k]!, at);
    v.set(vs[k]!, at);
  }
  return { u, v };
}

/** Runs task q of link round r (idempotent; round r − 1, or for round 0 every join task, must have completed). */
export function runLinkRound(workDir: string, job: JobSpec, r: number, q: number): Promise<LinkRoundMarker & MarkerBase> {
  const G = taskCount(job, 'link');
  if (!(Number.isInteger(q) && q >= 0 && q < G)) throw new Error(`link rounds have tasks 0 to ${G - 1}, not ${q}`);
  if (r > 0) requireMarker(workDir, job, roundStage(r - 1), q);
  return commitTask<LinkRoundMarker>(workDir, job, roundStage(r), q, async (dir) => {
    const { docOffset } = numbering(workDir, job);
    const starts = groupStarts(job, docOffset);
    const out = new EdgeOut(starts);
    const marker: LinkRoundMarker = { edgesIn: 0, edgesOut: 0, nodes: 0 };
    if (r === 0) {
      const { a, b } = groupPairs(workDir, job, q, docOffset);
      marker.edgesIn = a.length;
      const { docs, order, start } = clustersOfPairs(a, b, a.length);
      marker.nodes = docs.length;
      for (let k = 0; k + 1 < start.length; k++) {
        const m = docs[order[start[k]!]!]!;
        for (let j = start[k]! + 1; j < start[k + 1]!; j++) out.both(docs[order[j]!]!, m);
      }
    } else {
      const { u, v } = roundEdges(workDir, job, r - 1, q);
      marker.edgesIn = u.length;
      const lo = starts[q]!;
      const g = neighbours(u, v, lo, starts[q + 1]! - lo);
      if (r % 2 === 1) {
        const s = largeStar(g, lo, out);
        Object.assign(marker, s);
        if (s.star) await writeLabels(path.join(dir, 'labels.bin'), job.id, g, lo, docOffset[docOffset.length - 1]!, labelBins(job));
      } else marker.nodes = smallStar(g, lo, out);
    }
    marker.edgesOut = out.n;
    await out.write(path.join(dir, 'edges.bin'), job.id);
    return marker;
  });
}

/** The bin of label `x` among `bins` over a corpus of `docs` documents. */
export function labelBin(x: number, docs: number, bins: number): number {
  return Math.min(bins - 1, Math.floor((x * bins) / Math.max(1, docs)));
}

/** labels.bin of a partition whose documents are all stars: each one's centre, and the label histogram. */
async function writeLabels(file: string, plan: string, g: { start: Float64Array; nbr: Float64Array }, lo: number, docs: number, nbins: number): Promise<void> {
  const size = g.start.length - 1;
  const node: number[] = [];
  const label: number[] = [];
  const bins = new Float64Array(nbins);
  for (let d = 0; d < size; d++) {
    if (g.start[d + 1] === g.start[d]) continue;
    const m = Math.min(lo + d, g.nbr[g.start[d]!]!);
    node.push(lo + d);
    label.push(m);
    bins[labelBin(m, docs, nbins)]!++;
  }
  await writeColumns(file, 'link-labels', plan, {}, { node: Float64Array.from(node), label: Float64Array.from(label), bins });
}

/**
 * Runs link task p (idempotent): the rounds must have converged ({@link driveLink}); its marker names
 * the round and sums what partition p's round tasks cost.
 */
export function runLink(workDir: string, job: JobSpec, p: number): Promise<LinkMarker & MarkerBase> {
  return commitTask<LinkMarker>(workDir, job, 'link', p, async () => {
    const round = await convergedRound(job, (stage, t) => Promise.resolve(readMarker<LinkRoundMarker>(workDir, job, stage, t)));
    if (round === undefined) throw new Error(`link task ${p}: its rounds have not converged (run the job, or "neardup stage link", which runs them)`);
    const m: LinkMarker = { round, roundsWallMs: 0, roundsCpuMs: 0, roundsPeakRss: 0 };
    if (p === 0) Object.assign(m, verifyCuts(workDir, job, round));
    for (let r = 0; r <= round; r++) {
      const s = requireMarker(workDir, job, roundStage(r), p).stats;
      if (!s) continue;
      m.roundsWallMs += s.wallMs;
      m.roundsCpuMs += s.cpuMs;
      m.roundsPeakRss = Math.max(m.roundsPeakRss, s.peakRss);
    }
    return m;
  });
}

/**
 * The verify tasks' first label bins: the label histograms of round `round` summed, cut into about
 * equal shares of documents; and the bins holding more than one and a half shares, spread over the
 * tasks their documents would fill (a giant component would otherwise be one task's work and memory).
 */
function verifyCuts(workDir: string, job: JobSpec, round: number): { cuts: number[]; spread: [number, number, number][] } {
  const nbins = labelBins(job);
  const total = new Float64Array(nbins);
  for (let q = 0; q < taskCount(job, 'link'); q++) {
    const f = ColumnFile.open(path.join(taskDir(workDir, roundStage(round), q), 'labels.bin'), 'link-labels', job.id);
    try {
      const b = f.f64('bins');
      for (let i = 0; i < nbins; i++) total[i]! += b[i]!;
    } finally {
      f.close();
    }
  }
  const V = taskCount(job, 'verify');
  let all = 0;
  for (const x of total) all += x;
  const share = all / V;
  const cuts = [0];
  const spread: [number, number, number][] = [];
  let done = 0;
  for (let i = 0; i < nbins; i++) {
    const before = done;
    done += total[i]!;
    while (cuts.length < V && done >= share * cuts.length) cuts.push(i + 1);
    if (V > 1 && total[i]! > 1.5 * share) {
      const first = Math.min(V - 1, Math.floor(before / share));
      const last = Math.min(V - 1, Math.ceil(done / share) - 1);
      if (last > first) spread.push([i, first, last - first + 1]);
    }
  }
  while (cuts.length < V) cuts.push(nbins);
  cuts.push(nbins);
  return { cuts, spread };
}

/** The verify task of label `x`: the last whose first bin is at or below x's. */
export function verifyTaskOf(cuts: readonly number[], bin: number): number {
  let lo = 0;
  let hi = cuts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (cuts[mid]! <= bin) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The converged round of a job whose link tasks have committed. */
export function linkRound(workDir: string, job: JobSpec): number {
  return requireMarker<LinkMarker>(workDir, job, 'link', 0).round;
}
