/**
 * Stage 6, link: the connected components of the verified graph, over pairs partitioned by
 * document, in rounds. A document belongs to the partition of its shard group, and each round has
 * one task per group, so no task holds more than its partition's share of the edges (and a star's
 * centre its star). The rounds follow large-star/small-star (Kiveris et al., "Connected Components
 * in MapReduce and Beyond", SoCC 2014), after a first round that contracts locally:
 *
 * - round 0, contract: task q takes its group's verified pairs (those whose first document is in
 *   the group: its shards' rows of every verify task) and joins each document of them to the
 *   smallest document of its local component (union-find over those pairs only). Most links of a chain of near duplicates share
 *   bands, so a chain mostly folds here, in one task, instead of taking a round per doubling.
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
 * call `driveLink` (src/shard/stages/linkDriver.ts), which runs round after round (`link/r0000`, `link/r0001`, …, each through
 * the work dir like any task), and then each link task p commits a marker naming the last round,
 * with group p's verified pairs labelled by their component.
 *
 * Outputs in `link/rNNNN/qqqqq/`:
 * - `edges.bin` (kind `link-edges`): u, v (float64, global document numbers), each edge at the
 *   partition of u, grouped by partition with `pstart` (G + 1). Into a large-star round both
 *   orientations of an edge go; into a small-star round only (larger, smaller).
 * - `labels.bin` (kind `link-labels`; large-star rounds, from tasks that found only stars): node
 *   and label (float64, ascending node: every document of the partition in a verified pair and its
 *   component's smallest document).
 *
 * Outputs in `link/PPPPP/` (the link task, after the rounds):
 * - `bylabel.bin` (kind `labelled-pairs`): group p's verified pairs as comp (their component's
 *   smallest document), a, b (global numbers) and sim (float64), in (a, b) order within each shard
 *   group of comp, grouped by it with `pstart` (G + 1): what the decide stage reads (src/shard/stages/decide.ts).
 * - `copies.bin` (kind `labelled-copies`): the copies folded into representatives of group p (its
 *   rows of every join copies.bin) as comp (the representative's component; the representative
 *   itself when it is in no verified pair), rep and member (float64, global numbers), in (rep,
 *   member) order within each shard group of comp, grouped by it with `pstart` (G + 1): decide
 *   gets each component's copies with its pairs.
 * @module
 */
import path from 'node:path';
import { clustersOfPairs } from '../../cluster/clusters.js';
import { ColumnFile, groupRows, writeColumns } from '../files/columns.js';
import { commitTask, readMarker, requireMarker, taskDir, type MarkerBase } from '../files/commit.js';
import { rangeOf, roundStage, shardsOfTask, taskCount, type JobSpec } from '../files/job.js';
import { EdgeOut, largeStar, neighbours, smallStar } from './starGraph.js';
import { convergedRound } from './linkDriver.js';
import { numbering } from '../files/shardInput.js';
import type { VerifyMarker } from './verify.js';

/** A link task: its job and partition p. */
type LinkTask = { workDir: string; job: JobSpec; p: number };

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
  /** Verified pairs labelled (group p's). */
  pairs: number;
  /** Copies labelled (of the representatives in group p). */
  copies?: number;
  /**
   * What it sends each decide task, as triples (decide task, verified pairs, clustered documents)
   * for the tasks it sends any: its pairs by their component's group, and its partition's documents
   * in verified pairs and its copies by their component's group. Summed over the link tasks, each
   * decide task's whole input: its memory is forecast from it (src/shard/plan/decideForecast.ts).
   */
  decide?: number[];
}

/** The partitions of the documents: the global number of each shard group's first document (G + 1). */
export function groupStarts(job: JobSpec, docOffset: Float64Array): Float64Array {
  return Float64Array.from(job.groups, (s) => docOffset[s]!);
}

/** Partition q's edges from every task of round r. */
function roundEdges(workDir: string, job: JobSpec, r: number, q: number): { u: Float64Array; v: Float64Array } {
  const files = Array.from({ length: taskCount(job, 'link') }, (_, p) => {
    requireMarker(workDir, job, roundStage(r), p);
    return path.join(taskDir(workDir, roundStage(r), p), 'edges.bin');
  });
  return groupRows({ files, kind: 'link-edges', plan: job.id }, q, ['u', 'v']);
}

/**
 * Group q's verified pairs (those whose first document is in it), global numbers in (a, b) order,
 * with their similarities: its shards' rows (`astart`) of the verify tasks that hold some. Route
 * spreads a group's first documents over a run of verify tasks, each holding a contiguous range of
 * them, so in task order the rows are already in (a, b) order (checked, and sorted otherwise).
 */
export function verifiedOfGroup(workDir: string, job: JobSpec, q: number, docOffset: Float64Array): { a: Float64Array; b: Float64Array; sim: Float64Array } {
  const { first, end } = shardsOfTask(job, q);
  const parts: { a: Float64Array; b: Float64Array; sim: Float64Array }[] = [];
  for (const t of verifyTasksOfGroup(workDir, job, q)) {
    const f = ColumnFile.open(path.join(taskDir(workDir, 'verify', t), 'pairs.bin'), 'verified', job.id);
    try {
      const st = f.f64('astart', first, end + 1);
      const [lo, hi] = [st[0]!, st[end - first]!];
      if (hi <= lo) continue;
      const sa = f.u32('shardA', lo, hi);
      const da = f.u32('docA', lo, hi);
      const sb = f.u32('shardB', lo, hi);
      const db = f.u32('docB', lo, hi);
      const a = new Float64Array(hi - lo);
      const b = new Float64Array(hi - lo);
      for (let i = 0; i < a.length; i++) {
        a[i] = docOffset[sa[i]!]! + da[i]!;
        b[i] = docOffset[sb[i]!]! + db[i]!;
      }
      parts.push({ a, b, sim: f.f64('similarity', lo, hi) });
    } finally {
      f.close();
    }
  }
  if (parts.length === 1) return parts[0]!;
  const n = parts.reduce((x, p) => x + p.a.length, 0);
  const out = { a: new Float64Array(n), b: new Float64Array(n), sim: new Float64Array(n) };
  for (let k = 0, at = 0; k < parts.length; at += parts[k]!.a.length, k++) {
    out.a.set(parts[k]!.a, at);
    out.b.set(parts[k]!.b, at);
    out.sim.set(parts[k]!.sim, at);
  }
  return inPairOrder(out);
}

/**
 * The verify tasks that may hold group q's verified pairs: those whose marker's `firstGroups` span
 * it (a marker without them, read whole). Every verify task must have completed.
 */
export function verifyTasksOfGroup(workDir: string, job: JobSpec, q: number): number[] {
  const tasks: number[] = [];
  for (let t = 0; t < taskCount(job, 'verify'); t++) {
    const g = requireMarker<VerifyMarker>(workDir, job, 'verify', t).firstGroups;
    if (!g || (g.length === 2 && g[0]! <= q && q <= g[1]!)) tasks.push(t);
  }
  return tasks;
}

/** The pairs in (a, b) order: as they are when each task's rows follow the last's (a stable sort otherwise). */
function inPairOrder(p: { a: Float64Array; b: Float64Array; sim: Float64Array }): { a: Float64Array; b: Float64Array; sim: Float64Array } {
  const { a, b, sim } = p;
  const n = a.length;
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) sorted = a[i - 1]! < a[i]! || (a[i - 1] === a[i] && b[i - 1]! < b[i]!);
  if (sorted) return p;
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((x, y) => a[x]! - a[y]! || b[x]! - b[y]!);
  return { a: Float64Array.from(order, (i) => a[i]!), b: Float64Array.from(order, (i) => b[i]!), sim: Float64Array.from(order, (i) => sim[i]!) };
}

/** Runs task q of link round r (idempotent; round r − 1, or for round 0 every verify task, must have completed). */
export function runLinkRound(workDir: string, job: JobSpec, r: number, q: number): Promise<LinkRoundMarker & MarkerBase> {
  const G = taskCount(job, 'link');
  if (!(Number.isInteger(q) && q >= 0 && q < G)) throw new Error(`link rounds have tasks 0 to ${G - 1}, not ${q}`);
  if (r > 0) requireMarker(workDir, job, roundStage(r - 1), q);
  return commitTask<LinkRoundMarker>({ workDir, job, stage: roundStage(r), task: q }, async (dir) => {
    const { docOffset } = numbering(workDir, job);
    const starts = groupStarts(job, docOffset);
    const out = new EdgeOut(starts);
    const marker: LinkRoundMarker = { edgesIn: 0, edgesOut: 0, nodes: 0 };
    if (r === 0) {
      const { a, b } = verifiedOfGroup(workDir, job, q, docOffset);
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
        if (s.star) await writeLabels(path.join(dir, 'labels.bin'), job.id, g, lo);
      } else marker.nodes = smallStar(g, lo, out);
    }
    marker.edgesOut = out.n;
    await out.write(path.join(dir, 'edges.bin'), job.id);
    return marker;
  });
}

/** labels.bin of a partition whose documents are all stars: each one's centre. */
async function writeLabels(file: string, plan: string, g: { start: Float64Array; nbr: Float64Array }, lo: number): Promise<void> {
  const size = g.start.length - 1;
  const node: number[] = [];
  const label: number[] = [];
  for (let d = 0; d < size; d++) {
    if (g.start[d + 1] === g.start[d]) continue;
    node.push(lo + d);
    label.push(Math.min(lo + d, g.nbr[g.start[d]!]!));
  }
  await writeColumns(file, { kind: 'link-labels', plan: plan, meta: {} }, { node: Float64Array.from(node), label: Float64Array.from(label) });
}

/**
 * Runs link task p (idempotent): the rounds must have converged ({@link driveLink}); its marker names
 * the round and sums what partition p's round tasks cost. It writes bylabel.bin: group p's verified
 * pairs, each labelled with its first document's component (a node of partition p).
 */
export function runLink(workDir: string, job: JobSpec, p: number): Promise<LinkMarker & MarkerBase> {
  return commitTask<LinkMarker>({ workDir, job, stage: 'link', task: p }, async (dir) => {
    const round = await convergedRound(job, (stage, t) => Promise.resolve(readMarker<LinkRoundMarker>(workDir, job, stage, t)));
    if (round === undefined) throw new Error(`link task ${p}: its rounds have not converged (run the job, or "neardup stage link", which runs them)`);
    const m: LinkMarker = { round, roundsWallMs: 0, roundsCpuMs: 0, roundsPeakRss: 0, pairs: 0 };
    const labels = readLabels(workDir, job, round, p);
    const pairs = await writeByLabel({ workDir, job, p }, labels, path.join(dir, 'bylabel.bin'));
    const copies = await writeCopies({ workDir, job, p }, labels, path.join(dir, 'copies.bin'));
    m.pairs = pairs[pairs.length - 1]!;
    m.copies = copies.pstart[copies.pstart.length - 1]!;
    m.decide = toDecide(workDir, job, { labels, pairs, copies });
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

/** The link marker's `decide` triples: from the rows per group (`pstart`) of bylabel.bin and copies.bin, the lone representatives and the partition's labels. */
function toDecide(
  workDir: string,
  job: JobSpec,
  rows: { labels: { node: Float64Array; label: Float64Array }; pairs: Float64Array; copies: { pstart: Float64Array; lone: Float64Array } },
): number[] {
  const { labels, pairs, copies } = rows;
  const starts = groupStarts(job, numbering(workDir, job).docOffset);
  const G = starts.length - 1;
  const docs = new Float64Array(G);
  for (let g = 0; g < G; g++) docs[g] = copies.pstart[g + 1]! - copies.pstart[g]! + copies.lone[g]!;
  // A document of the partition in a verified pair is a node of its labels, once.
  for (const l of labels.label) docs[rangeOf(starts, l)]!++;
  const out: number[] = [];
  for (let g = 0; g < G; g++) {
    const n = pairs[g + 1]! - pairs[g]!;
    if (n > 0 || docs[g]! > 0) out.push(g, n, docs[g]!);
  }
  return out;
}

/** Partition p's labels of the converged round: node ascending, and its component. */
function readLabels(workDir: string, job: JobSpec, round: number, p: number): { node: Float64Array; label: Float64Array } {
  const f = ColumnFile.open(path.join(taskDir(workDir, roundStage(round), p), 'labels.bin'), 'link-labels', job.id);
  try {
    return { node: f.f64('node'), label: f.f64('label') };
  } finally {
    f.close();
  }
}

/**
 * Writes link task p's copies.bin (see the module comment); returns its rows per group (`pstart`)
 * and, per group, the representatives in no verified pair (each clustered with its copies).
 */
async function writeCopies(
  at: LinkTask,
  labels: { node: Float64Array; label: Float64Array },
  file: string,
): Promise<{ pstart: Float64Array; lone: Float64Array }> {
  const { workDir, job, p } = at;
  const { docOffset } = numbering(workDir, job);
  const starts = groupStarts(job, docOffset);
  const first = job.groups[p]!;
  const end = job.groups[p + 1]!;
  const reps: Float64Array[] = [];
  const mems: Float64Array[] = [];
  let n = 0;
  for (let t = 0; t < job.partitions; t++) {
    const f = ColumnFile.open(path.join(taskDir(workDir, 'join', t), 'copies.bin'), 'copy-members', job.id);
    try {
      const st = f.f64('astart', first, end + 1);
      const lo = st[0]!;
      const hi = st[end - first]!;
      if (hi <= lo) continue;
      const docR = f.u32('docR', lo, hi);
      const shardM = f.u32('shardM', lo, hi);
      const docM = f.u32('docM', lo, hi);
      const r = new Float64Array(hi - lo);
      const m = new Float64Array(hi - lo);
      for (let s = first, i = 0; s < end; s++) {
        for (const e = st[s - first + 1]! - lo; i < e; i++) {
          r[i] = docOffset[s]! + docR[i]!;
          m[i] = docOffset[shardM[i]!]! + docM[i]!;
        }
      }
      reps.push(r);
      mems.push(m);
      n += r.length;
    } finally {
      f.close();
    }
  }
  const rep = new Float64Array(n);
  const member = new Float64Array(n);
  for (let k = 0, at = 0; k < reps.length; at += reps[k]!.length, k++) {
    rep.set(reps[k]!, at);
    member.set(mems[k]!, at);
  }
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((x, y) => rep[x]! - rep[y]! || member[x]! - member[y]!);
  const { node, label } = labels;
  const G = starts.length - 1;
  const comp = new Float64Array(n);
  const group = new Int32Array(n);
  const pstart = new Float64Array(G + 1);
  const lone = new Float64Array(G);
  for (let i = 0; i < n; i++) {
    const r = rep[order[i]!]!;
    // A representative in no verified pair is a component of its own.
    let lo = 0;
    let hi = node.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (node[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    const linked = lo < node.length && node[lo] === r;
    comp[i] = linked ? label[lo]! : r;
    pstart[(group[i] = rangeOf(starts, comp[i]!)) + 1]!++;
    if (!linked && (i === 0 || rep[order[i - 1]!] !== r)) lone[group[i]!]!++;
  }
  for (let g = 0; g < G; g++) pstart[g + 1]! += pstart[g]!;
  const fill = pstart.slice(0, G);
  const out = { comp: new Float64Array(n), rep: new Float64Array(n), member: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    const at = fill[group[i]!]!++;
    out.comp[at] = comp[i]!;
    out.rep[at] = rep[order[i]!]!;
    out.member[at] = member[order[i]!]!;
  }
  await writeColumns(file, { kind: 'labelled-copies', plan: job.id, meta: {} }, { ...out, pstart });
  return { pstart, lone };
}

/** Writes link task p's bylabel.bin (see the module comment); returns its rows per group (`pstart`). */
async function writeByLabel(at: LinkTask, labels: { node: Float64Array; label: Float64Array }, file: string): Promise<Float64Array> {
  const { workDir, job, p } = at;
  const { docOffset } = numbering(workDir, job);
  const starts = groupStarts(job, docOffset);
  const { a, b, sim } = verifiedOfGroup(workDir, job, p, docOffset);
  const { node, label } = labels;
  const n = a.length;
  const G = starts.length - 1;
  const comp = new Float64Array(n);
  const group = new Int32Array(n);
  const pstart = new Float64Array(G + 1);
  // Rows are in (a, b) order and nodes ascending: one walk labels them.
  for (let i = 0, k = 0; i < n; i++) {
    while (k < node.length && node[k]! < a[i]!) k++;
    if (node[k] !== a[i]) throw new Error(`link task ${p}: document ${a[i]} has no component (the link rounds' labels are damaged)`);
    comp[i] = label[k]!;
    pstart[(group[i] = rangeOf(starts, comp[i]!)) + 1]!++;
  }
  for (let g = 0; g < G; g++) pstart[g + 1]! += pstart[g]!;
  // A stable counting sort by the group of comp keeps (a, b) order within each.
  const fill = pstart.slice(0, G);
  const out = { comp: new Float64Array(n), a: new Float64Array(n), b: new Float64Array(n), sim: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    const at = fill[group[i]!]!++;
    out.comp[at] = comp[i]!;
    out.a[at] = a[i]!;
    out.b[at] = b[i]!;
    out.sim[at] = sim[i]!;
  }
  await writeColumns(file, { kind: 'labelled-pairs', plan: job.id, meta: {} }, { ...out, pstart });
  return pstart;
}
