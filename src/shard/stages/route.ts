/**
 * Stage 3, route (one task per shard group): the distinct candidate pairs of the group's documents
 * (those whose first document is in the group, from every join output), spread over the verify
 * tasks so that each verifies about as many candidates. Memory grows with the group's candidate
 * rows (with repeats), not with the corpus.
 *
 * Why spread: a pair's first document is its smaller global number, so candidates crowd into the
 * early groups (at 10M documents the first group's verify task had 14 times the median's work).
 * The verify tasks cut the global order of first documents into V contiguous ranges of about equal
 * candidate rows: the join markers' rows per group (`groupRows`, with repeats) place each cut in a
 * group, the same in every route task, and the group's route task places it between two of its
 * first documents, by its distinct rows ({@link verifyCuts}). A first document's pairs stay in one
 * verify task, so every pair and its similarity are as before (only where batches are cut, and so
 * the `sets` a verify task counts, change).
 *
 * Outputs in `route/NNNNN/`:
 * - `pairs.bin` (kind `routed`): columns shardA, docA, shardB, docB (uint32) and comp (float64: the
 *   first document's global number, between which verify cuts its batches), the distinct pairs
 *   whose first document is in this group, sorted by (global document a, global document b);
 *   `pstart` (float64, verify tasks + 1) gives verify task t's rows: a run of consecutive verify
 *   tasks shares them (before job format 9, all were task q's).
 *
 * The candidate pairs are between copy groups' representatives (join folds exact copies); the
 * marker counts the document pairs they stand for too, from the group's rows of every join
 * `weights.bin`, as `neardup dedup` counts its candidates.
 * @module
 */
import path from 'node:path';
import { ColumnFile, DamagedFileError, writeColumns } from '../files/columns.js';
import { commitTask, requireMarker, taskDir } from '../files/commit.js';
import { rangeOf, shardsOfTask, taskCount, type JobSpec } from '../files/job.js';
import { checkShard } from '../files/shardIdentity.js';
import { numbering } from '../files/shardInput.js';
import { groupStarts } from './link.js';
import { neighbours } from './starGraph.js';
import type { JoinMarker } from './join.js';

/** The route task's marker. */
export interface RouteMarker {
  /** Distinct candidate pairs whose first document is in this group. */
  candidates: number;
  /** The group's documents that are the first of a candidate pair. */
  docs: number;
  /** Candidate rows read (with repeats, from every join output). */
  rows: number;
  /** Document pairs the distinct candidate pairs stand for beyond one each (copies folded into representatives). */
  copyCandidates?: number;
}

/** Σ (w − 1) over the distinct pairs of group q's rows of every join weights.bin: what copies add to its candidates. */
function copyCandidates(workDir: string, job: JobSpec, q: number, docOffset: Float64Array): number {
  const { a, b, w } = joinRowsOfGroup({ workDir, job, docOffset }, q, { file: 'weights.bin', kind: 'copy-weights', weights: true });
  const n = a.length;
  // A pair's rows repeat across bands and partitions, each with the same weight.
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((x, y) => a[x]! - a[y]! || b[x]! - b[y]!);
  let extra = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    const j = k > 0 ? order[k - 1]! : -1;
    if (j < 0 || a[i] !== a[j] || b[i] !== b[j]) extra += w![i]! - 1;
  }
  return extra;
}

/** The candidate pairs of the documents of shard group q, from every join output (global numbers, with repeats). */
function groupPairs(workDir: string, job: JobSpec, q: number, docOffset: Float64Array): { a: Float64Array; b: Float64Array } {
  return joinRowsOfGroup({ workDir, job, docOffset }, q, { file: 'pairs.bin', kind: 'candidates', weights: false });
}

/**
 * Group q's rows of one file of every join task (grouped by first shard with `astart`), as global
 * document numbers a and b, in join task order; with `weights`, the rows' `w` column too.
 */
function joinRowsOfGroup(
  at: { workDir: string; job: JobSpec; docOffset: Float64Array },
  q: number,
  of: { file: string; kind: string; weights: boolean },
): { a: Float64Array; b: Float64Array; w?: Float64Array } {
  const { workDir, job, docOffset } = at;
  const first = job.groups[q]!;
  const end = job.groups[q + 1]!;
  const parts: { a: Float64Array; b: Float64Array; w?: Float64Array }[] = [];
  let n = 0;
  for (let p = 0; p < job.partitions; p++) {
    requireMarker(workDir, job, 'join', p);
    const f = ColumnFile.open(path.join(taskDir(workDir, 'join', p), of.file), of.kind, job.id);
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
      parts.push({ a, b, ...(of.weights ? { w: f.f64('w', lo, hi) } : {}) });
      n += hi - lo;
    } finally {
      f.close();
    }
  }
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  const w = of.weights ? new Float64Array(n) : undefined;
  for (let k = 0, at = 0; k < parts.length; at += parts[k]!.a.length, k++) {
    a.set(parts[k]!.a, at);
    b.set(parts[k]!.b, at);
    w?.set(parts[k]!.w!, at);
  }
  return { a, b, ...(w ? { w } : {}) };
}

/** How the job's candidate rows spread over the shard groups of their first documents, as every route task sees it. */
export interface VerifySpread {
  /** Candidate rows (with repeats) whose first document is in a group before group q (G + 1). */
  before: Float64Array;
}

/** The join markers' candidate rows per group, summed ({@link VerifySpread}). */
export function verifySpread(workDir: string, job: JobSpec): VerifySpread {
  const G = job.groups.length - 1;
  const before = new Float64Array(G + 1);
  for (let p = 0; p < job.partitions; p++) {
    const rows = requireMarker<JoinMarker>(workDir, job, 'join', p).groupRows;
    if (rows?.length !== G) throw new DamagedFileError(`join task ${p}: its marker has no candidate rows for each of the ${G} shard groups`);
    for (let q = 0; q < G; q++) before[q + 1]! += rows[q]!;
  }
  for (let q = 0; q < G; q++) before[q + 1]! += before[q]!;
  return { before };
}

/**
 * Route task q's `pstart`: verify task t's share begins at the t/V-th of the job's candidate rows.
 * A share that begins in group q begins at the first of its first documents at or past the same
 * fraction of its distinct rows (`start`: the group's documents' first rows, ascending, the last
 * one the row count), so a first document's pairs stay in one task; each task then holds at most
 * ⌈rows/V⌉ plus one first document's rows of the group. `rows` (the group's candidate rows read,
 * with repeats) must be what the join markers say.
 */
export function verifyCuts(o: { spread: VerifySpread; tasks: number; q: number; rows: number; start: Float64Array }): Float64Array {
  const { spread, tasks: V, q, start } = o;
  const m = start[start.length - 1]!;
  const pstart = new Float64Array(V + 1);
  const lo = spread.before[q]!;
  const R = spread.before[q + 1]! - lo;
  if (R !== o.rows) throw new DamagedFileError(`route task ${q}: the join outputs hold ${o.rows} candidate rows of its group, their markers ${R}`);
  const total = spread.before[spread.before.length - 1]!;
  for (let t = 1; t <= V; t++) {
    const target = (total * t) / V;
    if (target <= lo) continue;
    if (target >= lo + R) {
      pstart[t] = m;
      continue;
    }
    // The first document boundary at or past the same fraction of the distinct rows.
    const x = ((target - lo) / R) * m;
    let a = 0;
    let b = start.length - 1;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (start[mid]! < x) a = mid + 1;
      else b = mid;
    }
    pstart[t] = start[a]!;
  }
  return pstart;
}

/** Runs route task q (idempotent; every join task must have completed). */
export function runRoute(workDir: string, job: JobSpec, q: number): Promise<RouteMarker> {
  return commitTask<RouteMarker>({ workDir, job, stage: 'route', task: q }, async (dir) => {
    const { docOffset } = numbering(workDir, job);
    // Without gather, whose tasks checked every shard, route does: a shard changed since sign is
    // refused before verification reads lines of it by offset.
    const { first, end } = shardsOfTask(job, q);
    if (job.gather === false) { for (let s = first; s < end; s++) checkShard(workDir, job, s); }
    const starts = groupStarts(job, docOffset);
    const lo = starts[q]!;
    const { a, b } = groupPairs(workDir, job, q, docOffset);
    const g = neighbours(a, b, lo, starts[q + 1]! - lo);
    const m = g.nbr.length;
    const pstart = verifyCuts({ spread: verifySpread(workDir, job), tasks: taskCount(job, 'verify'), q, rows: a.length, start: g.start });
    const shardA = new Uint32Array(m);
    const docA = new Uint32Array(m);
    const shardB = new Uint32Array(m);
    const docB = new Uint32Array(m);
    const comp = new Float64Array(m);
    let docs = 0;
    for (let d = 0, i = 0; d + 1 < g.start.length; d++) {
      const e = g.start[d + 1]!;
      if (e === i) continue;
      docs++;
      const ga = lo + d;
      const x = rangeOf(docOffset, ga);
      for (; i < e; i++) {
        const y = rangeOf(docOffset, g.nbr[i]!);
        shardA[i] = x;
        docA[i] = ga - docOffset[x]!;
        shardB[i] = y;
        docB[i] = g.nbr[i]! - docOffset[y]!;
        comp[i] = ga;
      }
    }
    await writeColumns(path.join(dir, 'pairs.bin'), { kind: 'routed', plan: job.id, meta: {} }, { shardA, docA, shardB, docB, comp, pstart });
    return { candidates: m, docs, rows: a.length, copyCandidates: copyCandidates(workDir, job, q, docOffset) };
  });
}
