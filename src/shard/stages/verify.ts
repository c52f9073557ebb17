/**
 * Stage 5, verify (as many tasks as shard groups): the distinct candidate pairs of a contiguous range
 * of first documents, about a V-th of the job's candidates (route cuts the ranges, and a range may
 * span groups or be part of one: src/shard/stages/route.ts), checked by exact Jaccard of their
 * fingerprint sets, made here from the texts: a plain line-format shard's lines are read again
 * where sign found them (as `neardup dedup` reads them again for its verification), other shards'
 * texts come from the gather outputs.
 * Pairs are taken a batch of documents at a time (cut between first documents), so a task holds the
 * sets of one batch, never the corpus; a partner document in several batches has its set made in each.
 *
 * Outputs in `verify/NNNNN/`:
 * - `pairs.bin` (kind `verified`): columns shardA, docA, shardB, docB (uint32), similarity
 *   (float64), bytes (uint32: the pair's line length in `pairs.txt`), sorted by (shardA, docA,
 *   shardB, docB), with `astart` (float64, S + 1) giving shard A's rows (link reads a group's rows
 *   of the tasks whose marker's `firstGroups` span it). A document's pairs are all in one task, so
 *   the job's pairs in global order are each shard's rows of every task merged by first document
 *   (`verified.ts`).
 * - `pairs.txt`: the same pairs as output lines (ids, in the job's pair format), in the same order.
 * @module
 */
import path from 'node:path';
import { formatPair } from '../../io/write/write.js';
import { closeRangeFiles } from '../../parallel/rangeJobs.js';
import { ProbeTable, probeJaccardAtLeast } from '../../similarity/probeSet.js';
import { withSigner } from './reuse.js';
import { ColumnFile, writeColumns } from '../files/columns.js';
import { commitTask, requireMarker, taskDir, writeSynced } from '../files/commit.js';
import { taskCount, taskOfShard, type JobSpec } from '../files/job.js';
import { gatheredShards } from '../files/gathered.js';
import { jobDocs, type JobDocs } from '../files/docs.js';
import { numbering } from '../files/shardInput.js';
import { U32Buf } from '../files/u32buf.js';
import { radixOrder } from '../../lsh/radixOrder.js';
import { BatchSets, makeSets, scratchPool, SetMaker } from './setMaker.js';

/** The verify task's marker. */
export interface VerifyMarker {
  /** Distinct candidate pairs. */
  candidates: number;
  /** Pairs at or above the threshold. */
  pairs: number;
  /** Fingerprint sets made (a document in more than one batch is counted in each). */
  sets: number;
  /** First documents of the candidate pairs. */
  components: number;
  /**
   * The shard groups of its first documents, first and last ([] without candidates): link reads a
   * group's verified pairs from the tasks whose range holds it.
   */
  firstGroups?: number[];
}

/** Documents whose sets one batch makes: a batch ends at the first component boundary past this. */
export const BATCH_DOCS = 8192;
/** A component too big for a batch is cut between first documents once a batch holds this many sets. */
const BATCH_MAX = 4 * BATCH_DOCS;

/** Runs verify task `t` (idempotent; every route task and every gather task must have completed). */
export function runVerify(workDir: string, job: JobSpec, t: number): Promise<object> {
  for (let g = 0; g < taskCount(job, 'gather'); g++) requireMarker(workDir, job, 'gather', g);
  const num = numbering(workDir, job);
  const docs = jobDocs(workDir, job, num);
  const gathered = gatheredShards(workDir, job);
  return commitTask<VerifyMarker>({ workDir, job, stage: 'verify', task: t }, (dir) =>
    withSigner(job, (signer) =>
      scratchPool.with(async (scratch) => {
        const maker = new SetMaker({ workDir, job, docs, gathered }, signer, scratch.setTable);
        const rows = routedRows(workDir, job, t, num.docOffset);
        const out = await verifyRows(job, rows, { maker, docOffset: num.docOffset, sets: scratch.sets, table: scratch.table });
        maker.checkRead();
        await writeVerified(dir, job, docs, out);
        const n = rows.sa.length;
        const firstGroups = n === 0 ? [] : [taskOfShard(job, rows.sa[0]!), taskOfShard(job, rows.sa[n - 1]!)];
        return { candidates: n, pairs: out.sims.length, sets: out.sets, components: out.components, firstGroups };
      }))).finally(() => {
      docs.close();
      gathered.close();
      closeRangeFiles();
    });
}

/** Opens route task q's pairs.bin. */
function openRouted(workDir: string, job: JobSpec, q: number): ColumnFile {
  requireMarker(workDir, job, 'route', q);
  return ColumnFile.open(path.join(taskDir(workDir, 'route', q), 'pairs.bin'), 'routed', job.id);
}

/**
 * Verify task t's rows of every route task, merged into (component, a, b) order (each route task's
 * rows are in that order): a heap of the route tasks' next rows.
 */
function routedRows(workDir: string, job: JobSpec, t: number, docOffset: Float64Array): RoutedRows {
  const parts: { sa: Uint32Array; a: Uint32Array; sb: Uint32Array; b: Uint32Array; comp: Float64Array }[] = [];
  for (let q = 0; q < taskCount(job, 'route'); q++) {
    const f = openRouted(workDir, job, q);
    try {
      const ps = f.f64('pstart', t, t + 2);
      const [lo, hi] = [ps[0]!, ps[1]!];
      if (hi > lo)
        parts.push({
          sa: f.u32('shardA', lo, hi),
          a: f.u32('docA', lo, hi),
          sb: f.u32('shardB', lo, hi),
          b: f.u32('docB', lo, hi),
          comp: f.f64('comp', lo, hi),
        });
    } finally {
      f.close();
    }
  }
  const n = parts.reduce((x, p) => x + p.a.length, 0);
  const r: RoutedRows = {
    sa: new Uint32Array(n),
    a: new Uint32Array(n),
    sb: new Uint32Array(n),
    b: new Uint32Array(n),
    comp: new Float64Array(n),
    ga: new Float64Array(n),
    gb: new Float64Array(n),
  };
  const at = new Int32Array(parts.length);
  const ga = (k: number): number => docOffset[parts[k]!.sa[at[k]!]!]! + parts[k]!.a[at[k]!]!;
  const gb = (k: number): number => docOffset[parts[k]!.sb[at[k]!]!]! + parts[k]!.b[at[k]!]!;
  const less = (x: number, y: number): boolean => {
    const cx = parts[x]!.comp[at[x]!]!;
    const cy = parts[y]!.comp[at[y]!]!;
    if (cx !== cy) return cx < cy;
    const ax = ga(x);
    const ay = ga(y);
    return ax !== ay ? ax < ay : gb(x) < gb(y);
  };
  const heap: number[] = [];
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) return;
      const c = l + 1 < heap.length && less(heap[l + 1]!, heap[l]!) ? l + 1 : l;
      if (!less(heap[c]!, heap[i]!)) return;
      [heap[c], heap[i]] = [heap[i]!, heap[c]!];
      i = c;
    }
  };
  for (let k = 0; k < parts.length; k++) heap.push(k);
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  for (let i = 0; i < n; i++) {
    const k = heap[0]!;
    const p = parts[k]!;
    const j = at[k]!;
    r.sa[i] = p.sa[j]!;
    r.a[i] = p.a[j]!;
    r.sb[i] = p.sb[j]!;
    r.b[i] = p.b[j]!;
    r.comp[i] = p.comp[j]!;
    r.ga[i] = docOffset[p.sa[j]!]! + p.a[j]!;
    r.gb[i] = docOffset[p.sb[j]!]! + p.b[j]!;
    if (++at[k]! === p.a.length) {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    down(0);
  }
  return r;
}

/**
 * The shards whose documents the routed candidate pairs of verify task `t` touch, in order: what
 * the task reads (their lines or gathered texts, and their ids). Every route task must have completed.
 */
export function verifyReads(workDir: string, job: JobSpec, t: number): number[] {
  const seen = new Set<number>();
  for (let q = 0; q < taskCount(job, 'route'); q++) {
    const f = openRouted(workDir, job, q);
    try {
      const ps = f.f64('pstart', t, t + 2);
      for (const column of ['shardA', 'shardB']) for (const s of f.u32(column, ps[0]!, ps[1]!)) seen.add(s);
    } finally {
      f.close();
    }
  }
  return [...seen].sort((a, b) => a - b);
}

/** A verify task's share of the routed candidate pairs, with their global document numbers. */
interface RoutedRows {
  sa: Uint32Array;
  a: Uint32Array;
  sb: Uint32Array;
  b: Uint32Array;
  comp: Float64Array;
  ga: Float64Array;
  gb: Float64Array;
}

/** The verified pairs of a verify task, in the order found. */
class VerifyOutput {
  /** Global number of each pair's first document (unused when `wide`). */
  readonly ga = new U32Buf(1024);
  /** The corpus has 2^32 documents or more: global numbers do not fit the radix sort's uint32 keys. */
  wide = false;
  readonly sa = new U32Buf(1024);
  readonly oa = new U32Buf(1024);
  readonly os = new U32Buf(1024);
  readonly ob = new U32Buf(1024);
  readonly sims: number[] = [];
  sets = 0;
  components = 0;
}

/** What a verify task checks its rows with: the set maker, the documents' global offsets, and its scratch sets and probe table. */
interface VerifyTools {
  maker: SetMaker;
  docOffset: Float64Array;
  sets: BatchSets;
  table: ProbeTable;
}

/** Checks the task's rows a batch of whole components at a time. */
async function verifyRows(job: JobSpec, r: RoutedRows, tools: VerifyTools): Promise<VerifyOutput> {
  const { maker, docOffset, sets, table } = tools;
  const out = new VerifyOutput();
  out.wide = docOffset[docOffset.length - 1]! >= 2 ** 32;
  const n = r.a.length;
  // Documents by their global number (small integers: a Set or Map of them is several times faster
  // than one keyed by shard · 2^32 + doc, which are heap numbers).
  const { ga, gb } = r;
  const seen = new Set<number>();
  for (let i = 0; i < n; i++) if (i === 0 || r.comp[i] !== r.comp[i - 1]) out.components++;
  for (let i0 = 0; i0 < n;) {
    // A batch: whole components until it holds BATCH_DOCS documents, or a big component cut between first documents.
    seen.clear();
    let i1 = i0;
    while (i1 < n) {
      const ka = ga[i1]!;
      seen.add(ka);
      seen.add(gb[i1]!);
      i1++;
      if (i1 === n) break;
      if (seen.size >= BATCH_DOCS && r.comp[i1] !== r.comp[i1 - 1]) break;
      if (seen.size >= BATCH_MAX && ga[i1]! !== ka) break;
    }
    const keys = Float64Array.from(seen).sort();
    await makeSets(maker, keys, docOffset, sets);
    out.sets += keys.length;
    let loaded = -1;
    for (let i = i0; i < i1; i++) {
      const ka = ga[i]!;
      if (ka !== loaded) table.load(sets.get(loaded = ka));
      const sim = probeJaccardAtLeast(table, sets.get(gb[i]!), job.threshold);
      if (sim < 0) continue;
      out.ga.push(ga[i]!);
      out.sa.push(r.sa[i]!);
      out.oa.push(r.a[i]!);
      out.os.push(r.sb[i]!);
      out.ob.push(r.b[i]!);
      out.sims.push(sim);
    }
    i0 = i1;
  }
  return out;
}

/** Writes the task's verified pairs in (shardA, docA, shardB, docB) order: pairs.bin and pairs.txt. */
async function writeVerified(dir: string, job: JobSpec, docs: JobDocs, out: VerifyOutput): Promise<void> {
  const S = job.shards.length;
  const sa = out.sa.view();
  const oa = out.oa.view();
  const os = out.os.view();
  const ob = out.ob.view();
  const n = sa.length;
  // Routed rows are sorted by (component, a, b), and a document lies in one component: a stable
  // sort by first document alone gives (a, b) order, i.e. (shardA, docA, shardB, docB).
  const order = out.wide
    ? Int32Array.from({ length: n }, (_, i) => i).sort((x, y) => sa[x]! - sa[y]! || oa[x]! - oa[y]! || os[x]! - os[y]! || ob[x]! - ob[y]!)
    : radixOrder(out.ga.view());
  const col = (c: Uint32Array): Uint32Array => {
    const o = new Uint32Array(n);
    for (let i = 0; i < n; i++) o[i] = c[order[i]!]!;
    return o;
  };
  const similarity = new Float64Array(n);
  for (let i = 0; i < n; i++) similarity[i] = out.sims[order[i]!]!;
  const cols = { shardA: col(sa), docA: col(oa), shardB: col(os), docB: col(ob) };
  const astart = new Float64Array(S + 1);
  for (let i = 0; i < n; i++) astart[cols.shardA[i]! + 1]!++;
  for (let s = 0; s < S; s++) astart[s + 1]! += astart[s]!;
  const bytes = new Uint32Array(n);
  const lines: string[] = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const line = formatPair(job.output.pairFormat, docs.get(cols.shardA[i]!).id(cols.docA[i]!), docs.get(cols.shardB[i]!).id(cols.docB[i]!), similarity[i]!);
    lines[i] = line;
    bytes[i] = Buffer.byteLength(line);
  }
  await writeColumns(path.join(dir, 'pairs.bin'), { kind: 'verified', plan: job.id, meta: {} }, { ...cols, similarity, bytes, astart });
  await writeSynced(path.join(dir, 'pairs.txt'), lines.join(''));
}
