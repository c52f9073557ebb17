/**
 * A decide task's verified pairs, read from every link task's bylabel.bin and held as positions
 * among the task's clustered documents: 16 bytes a pair (two int32 positions and the similarity)
 * instead of the 24 of global numbers, and every later step (clusters, the verified walk, the
 * similarities to the kept member, the copies' pairs) works on those positions. The task of a
 * giant component (the 10^6 chain at 10M documents: 19M verified pairs) is the one whose memory
 * this sets, unless it spills: past the spill limit (src/shard/spill/limits.ts) the pairs go to a
 * file in the task's directory, in the same order, and every step reads them a chunk at a time
 * (src/shard/spill/sortedPairs.ts, and the out-of-core walk src/shard/spill/walk.ts).
 * @module
 */
import path from 'node:path';
import { forEachGroupChunk, groupRowCount, groupRows } from '../files/columns.js';
import { requireMarker, taskDir } from '../files/commit.js';
import { taskCount, type JobSpec } from '../files/job.js';
import { spillLimits } from '../spill/limits.js';
import { distinctEnds, positionIn, spillSortedPairs, type RawPairs, type SpilledPairs } from '../spill/sortedPairs.js';
import type { PairChunks } from '../spill/walk.js';
import type { GroupCopies } from './copyUnits.js';

/** A decide task's verified pairs and copies as positions among its clustered documents. */
export interface PositionPairs extends PairChunks {
  /** The clustered documents (every end of a pair, every copy and its representative), ascending global numbers. */
  members: Float64Array;
  /**
   * Pair i joins members[a[i]] < members[b[i]] at similarity sims[i]; pairs in global (a, b) order.
   * Empty when the pairs are spilled: {@link PairChunks.forEach} reads them in either case.
   */
  a: Int32Array;
  b: Int32Array;
  sims: Float64Array;
  /** Copy j: position copyMember[j] is an exact copy of position copyRep[j]. */
  copyRep: Int32Array;
  copyMember: Int32Array;
  /** Set when the pairs are in a file (see the module comment), with the bucket size the task's out-of-core steps use. */
  spilled?: { pairs: SpilledPairs; dir: string; rows: number };
}

/** Raw rows a spilling task reads at a time. */
const RAW_CHUNK = 1 << 18;

/** The link tasks' bylabel.bin files, each committed. */
function linkFiles(workDir: string, job: JobSpec): string[] {
  return Array.from({ length: taskCount(job, 'link') }, (_, v) => {
    requireMarker(workDir, job, 'link', v);
    return path.join(taskDir(workDir, 'link', v), 'bylabel.bin');
  });
}

/** Group g's verified pairs of every link task (those whose component's smallest document is in the group), as stored: global numbers, unordered. */
export function groupVerifiedRows(workDir: string, job: JobSpec, g: number): { a: Float64Array; b: Float64Array; sim: Float64Array } {
  return groupRows({ files: linkFiles(workDir, job), kind: 'labelled-pairs', plan: job.id }, g, ['a', 'b', 'sim']);
}

/** Group g's verified pairs as {@link groupVerifiedRows} gives them, `chunk` rows at a time. */
export function groupVerifiedChunks(workDir: string, job: JobSpec, g: number, chunk: number): RawPairs {
  const files = linkFiles(workDir, job);
  return (each) => forEachGroupChunk({ files, kind: 'labelled-pairs', plan: job.id, g, columns: ['a', 'b', 'sim'], chunk }, (r, n) => each(r.a, r.b, r.sim, n));
}

/**
 * Group g's verified pairs and its `copies` as positions (see {@link PositionPairs}): in memory, or
 * past the job's spill limit spilled under `spillDir` (absent: never spilled).
 */
export function groupVerified(workDir: string, job: JobSpec, g: number, o: { copies: GroupCopies; spillDir?: string }): PositionPairs {
  const { copies, spillDir } = o;
  const limits = spillLimits(job.taskMemoryBudget);
  if (spillDir === undefined || groupRowCount({ files: linkFiles(workDir, job), kind: 'labelled-pairs', plan: job.id }, g) <= limits.pairs) {
    const { a, b, sim } = groupVerifiedRows(workDir, job, g);
    return positionPairs(a, b, sim, copies);
  }
  // Raw rows are read in chunks of 2^18 whatever the limit (24 B each, and 16 B more while their ends
  // are merged): a chunk's read costs whole checked blocks, and each chunk merges into the ends so far.
  return spilledPositionPairs({ raw: groupVerifiedChunks(workDir, job, g, RAW_CHUNK), copies, dir: spillDir, rows: limits.rows });
}

/** The raw pairs and copies as {@link positionPairs} makes them, the pairs spilled to `dir` in buckets of `rows`. */
export function spilledPositionPairs(o: { raw: RawPairs; copies: GroupCopies; dir: string; rows: number }): PositionPairs {
  const members = distinctEnds(o.raw, [o.copies.rep, o.copies.member]);
  const pairs = spillSortedPairs({ raw: o.raw, members, dir: o.dir, rows: o.rows });
  const none = new Int32Array(0);
  return {
    members,
    a: none,
    b: none,
    sims: new Float64Array(0),
    copyRep: Int32Array.from(o.copies.rep, (x) => positionIn(members, x)),
    copyMember: Int32Array.from(o.copies.member, (x) => positionIn(members, x)),
    count: pairs.count,
    forEach: pairs.forEach,
    spilled: { pairs, dir: o.dir, rows: o.rows },
  };
}

/** The pairs in memory, spilled or not (for the pairs output of a job with copies, which --max-pairs bounds). */
export function pairsInMemory(p: PositionPairs): { a: Int32Array; b: Int32Array; sims: Float64Array } {
  if (!p.spilled) return p;
  const a = new Int32Array(p.count);
  const b = new Int32Array(p.count);
  const sims = new Float64Array(p.count);
  let at = 0;
  p.forEach((x, y, s, n) => {
    a.set(x.subarray(0, n), at);
    b.set(y.subarray(0, n), at);
    sims.set(s.subarray(0, n), at);
    at += n;
  });
  return { a, b, sims };
}

/** The pairs (a[i], b[i]) at sim[i], in any order, and the copies, as positions in global (a, b) order. */
export function positionPairs(a: Float64Array, b: Float64Array, sim: Float64Array, copies: GroupCopies): PositionPairs {
  const n = a.length;
  // A component's pairs come from the link tasks of their first documents: one order.
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((x, y) => a[x]! - a[y]! || b[x]! - b[y]!);
  const members = distinctOf([a, b, copies.rep, copies.member]);
  const pa = new Int32Array(n);
  const pb = new Int32Array(n);
  const sims = new Float64Array(n);
  // First ends ascend in this order: one walk finds their positions.
  for (let k = 0, p = 0; k < n; k++) {
    const i = order[k]!;
    while (members[p]! < a[i]!) p++;
    pa[k] = p;
    pb[k] = positionIn(members, b[i]!);
    sims[k] = sim[i]!;
  }
  const copyRep = Int32Array.from(copies.rep, (x) => positionIn(members, x));
  const copyMember = Int32Array.from(copies.member, (x) => positionIn(members, x));
  return { members, a: pa, b: pb, sims, copyRep, copyMember, count: n, forEach: (each) => each(pa, pb, sims, n) };
}

/** The distinct values of the arrays, ascending: a native sort of 32-bit keys when every value fits (the usual case), else of float64. */
function distinctOf(xs: readonly Float64Array[]): Float64Array {
  let m = 0;
  let small = true;
  for (const x of xs) {
    m += x.length;
    for (let i = 0; i < x.length && small; i++) small = x[i]! < 4294967296;
  }
  const all = small ? new Uint32Array(m) : new Float64Array(m);
  let at = 0;
  for (const x of xs) {
    all.set(x, at);
    at += x.length;
  }
  all.sort();
  let P = 0;
  for (let i = 0; i < m; i++) if (P === 0 || all[i] !== all[P - 1]) all[P++] = all[i]!;
  return Float64Array.from(all.subarray(0, P));
}
