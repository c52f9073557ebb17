/**
 * Stage 4, verify (one task per group of shards): for each shard A of the group, the distinct
 * candidate pairs whose first document is in A, checked by exact Jaccard of their fingerprint sets,
 * made here from the texts: a plain line-format shard's lines are read again where sign found them
 * (as `neardup dedup` reads them again for its verification), other shards' texts come from the
 * gather outputs. The pairs are taken a batch of first documents at a time, so a task holds the sets
 * of one batch's documents, never the corpus.
 *
 * Outputs in `verify/NNNNN/`:
 * - `pairs.bin` (kind `verified`): columns shardA, docA, shardB, docB (uint32), similarity (float64),
 *   sorted by (shardA, docA, shardB, docB): concatenated in task order, the pairs of the job in
 *   global order.
 * - `pairs.txt`: the same pairs as output lines (ids, in the job's pair format).
 * @module
 */
import path from 'node:path';
import { formatPair } from '../io/write.js';
import { textsAt, closeRangeFiles, type ReadScratch } from '../parallel/rangeJobs.js';
import type { LineParseSpec } from '../io/lineRanges.js';
import { ProbeTable, probeJaccardAtLeast } from '../similarity/probeSet.js';
import { createTextSigner, type TextSigner } from '../sketch/textSigner.js';
import { ColumnFile, writeColumns } from './columns.js';
import { requireMarker, writeSynced } from './commit.js';
import { openJoinFiles, runPerShard, type ShardFiles } from './perShard.js';
import { checkShard, shardsOfTask, taskCount, type JobSpec } from './job.js';
import { gatheredShards, type GatheredShard } from './gathered.js';
import { jobDocs, type ShardDocs } from './docs.js';
import { numbering, shardLineSpec } from './shardInput.js';
import { U32Buf } from './u32buf.js';

/** The verify task's marker. */
export interface VerifyMarker {
  /** Distinct candidate pairs. */
  candidates: number;
  /** Pairs at or above the threshold. */
  pairs: number;
  /** Fingerprint sets made (a document in pairs of several batches or tasks is counted in each). */
  sets: number;
}

/** First documents of pairs whose sets one batch makes (with their partners'). */
const BATCH_DOCS = 8192;
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
    const seg = all.subarray(start[d]!, start[d + 1]!).sort();
    start[d] = m;
    for (let i = 0; i < seg.length; i++) if (i === 0 || seg[i] !== seg[i - 1]) partner[m++] = seg[i]!;
  }
  start[docs] = m;
  return { start, partner: partner.subarray(0, m) };
}

/**
 * The sets of one batch, end to end in one growing buffer: a typed array per set (thousands of a few
 * KB each) cost more in allocation and collection than making the set.
 */
class BatchSets {
  private data = new Uint32Array(1 << 20);
  private used = 0;
  private readonly at = new Map<number, number>();
  private starts: number[] = [];
  private ends: number[] = [];

  clear(): void {
    this.used = 0;
    this.at.clear();
    this.starts = [];
    this.ends = [];
  }

  /** Keeps a copy of `set` under `key`. */
  add(key: number, set: Uint32Array): void {
    if (this.used + set.length > this.data.length) {
      const d = new Uint32Array(Math.max(this.used + set.length, this.data.length * 2));
      d.set(this.data.subarray(0, this.used));
      this.data = d;
    }
    this.data.set(set, this.used);
    this.at.set(key, this.starts.length);
    this.starts.push(this.used);
    this.used += set.length;
    this.ends.push(this.used);
  }

  /** The set under `key` (a view, valid until the next add). */
  get(key: number): Uint32Array {
    const i = this.at.get(key)!;
    return this.data.subarray(this.starts[i]!, this.ends[i]!);
  }
}

/** Makes the fingerprint sets of documents from their texts, shard by shard. */
class SetMaker {
  private readonly signer: TextSigner;
  private readonly specs = new Map<number, LineParseSpec>();
  private readonly table = new ProbeTable();
  private readonly scratch: ReadScratch = {};
  constructor(
    private readonly workDir: string,
    private readonly job: JobSpec,
    private readonly docs: ShardFiles<ShardDocs>,
    private readonly gathered: ShardFiles<GatheredShard>,
  ) {
    this.signer = createTextSigner({ shingle: job.shingle, minhash: job.minhash });
  }

  /** The distinct sets of documents `want` (ascending, unique) of shard `s`, into `sets` by s · 2^32 + doc. */
  async make(s: number, want: Uint32Array, sets: BatchSets): Promise<void> {
    const sd = this.docs.get(s);
    if (!sd.ranged) {
      const texts = this.gathered.get(s).texts(want);
      for (let i = 0; i < want.length; i++) sets.add(s * TWO32 + want[i]!, this.signer.distinctView(texts[i]!, this.table));
      return;
    }
    let spec = this.specs.get(s);
    if (!spec) {
      checkShard(this.workDir, this.job, s);
      this.specs.set(s, (spec = shardLineSpec(this.job, s, true)!));
    }
    const starts = new Float64Array(want.length);
    const lengths = new Int32Array(want.length);
    for (let i = 0; i < want.length; i++) {
      starts[i] = sd.start(want[i]!);
      lengths[i] = sd.length(want[i]!);
    }
    const got = await textsAt({ spec, starts, lengths, firstLine: 1 }, this.scratch);
    const raw = got.bytes as Buffer | undefined;
    // Texts left as bytes are made into sets from their bytes in the signer's memory (never decoded), as dedup's verification does.
    const block = raw && this.signer.blockSigner ? (this.signer.blockSigner.load(raw), this.signer.blockSigner) : undefined;
    for (let i = 0; i < want.length; i++) {
      const text = got.texts[i];
      let set: Uint32Array | undefined;
      if (text === null) {
        const a = got.spans![2 * i]!;
        const b = got.spans![2 * i + 1]!;
        const fps = block?.fingerprintSpan(a, b);
        set = fps ? this.table.distinctView(fps) : this.signer.distinctView(raw!.toString('utf8', a, b), this.table);
      } else set = this.signer.distinctView(text!, this.table);
      sets.add(s * TWO32 + want[i]!, set);
    }
  }

  /** Checks that every shard read in place is still as planned. */
  checkRead(): void {
    for (const s of this.specs.keys()) checkShard(this.workDir, this.job, s);
  }
}

/** Runs verify task `t` (idempotent; every gather task must have completed): the pairs of each shard A of its group. */
export function runVerify(workDir: string, job: JobSpec, t: number): Promise<object> {
  for (let g = 0; g < taskCount(job, 'gather'); g++) requireMarker(workDir, job, 'gather', g);
  const num = numbering(workDir, job);
  // The join outputs, ids and gathered texts are opened once for the task's shards.
  const joins = openJoinFiles(workDir, job, 'pairs.bin', 'candidates');
  const docs = jobDocs(workDir, job, num);
  const gathered = gatheredShards(workDir, job);
  const maker = new SetMaker(workDir, job, docs, gathered);
  const out = new VerifyOutput();
  return runPerShard<VerifyMarker>(
    workDir,
    job,
    'verify',
    t,
    (A) => verifyShard(job, joins, docs, maker, out, A, num.markers[A]!.docs),
    async (dir) => {
      maker.checkRead();
      await writeColumns(path.join(dir, 'pairs.bin'), 'verified', job.id, {}, { shardA: out.sa.view(), docA: out.oa.view(), shardB: out.os.view(), docB: out.ob.view(), similarity: Float64Array.from(out.sims) });
      await writeSynced(path.join(dir, 'pairs.txt'), out.lines.join(''));
    },
  ).finally(() => {
    for (const f of joins) f.close();
    docs.close();
    gathered.close();
    closeRangeFiles();
  });
}

/**
 * The shards whose documents the candidate pairs of verify task `t` touch, its own included, in
 * order: what the task reads (their lines or gathered texts, and their ids). Every join task must
 * have completed.
 */
export function verifyReads(workDir: string, job: JobSpec, t: number): number[] {
  const joins = openJoinFiles(workDir, job, 'pairs.bin', 'candidates');
  const seen = new Set<number>();
  try {
    const { first, end } = shardsOfTask(job, t);
    for (let A = first; A < end; A++) {
      seen.add(A);
      for (const f of joins) {
        const st = f.f64('astart', A, A + 2);
        if (st[1]! > st[0]!) for (const s of f.u32('shardB', st[0]!, st[1]!)) seen.add(s);
      }
    }
  } finally {
    for (const f of joins) f.close();
  }
  return [...seen].sort((a, b) => a - b);
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

async function verifyShard(job: JobSpec, joins: readonly ColumnFile[], docs: ShardFiles<ShardDocs>, maker: SetMaker, out: VerifyOutput, A: number, count: number): Promise<VerifyMarker> {
  const { start, partner } = candidatesOf(joins, A, count);
  const { sa, oa, os, ob, sims, lines } = out;
  const before = sims.length;
  const table = new ProbeTable();
  const sets = new BatchSets();
  const da = docs.get(A);
  let made = 0;
  for (let a0 = 0; a0 < count; ) {
    // A batch: up to BATCH_DOCS first documents with pairs, and their partners, shard by shard.
    const want = new Map<number, number[]>([[A, []]]);
    let a1 = a0;
    for (let k = 0; a1 < count && k < BATCH_DOCS; a1++) {
      if (start[a1 + 1] === start[a1]) continue;
      k++;
      want.get(A)!.push(a1);
      for (let i = start[a1]!; i < start[a1 + 1]!; i++) {
        const s = Math.floor(partner[i]! / TWO32);
        let l = want.get(s);
        if (!l) want.set(s, (l = []));
        l.push(partner[i]! - s * TWO32);
      }
    }
    sets.clear();
    for (const [s, l] of want) {
      const u = Uint32Array.from(l).sort();
      let m = 0;
      for (let i = 0; i < u.length; i++) if (i === 0 || u[i] !== u[i - 1]) u[m++] = u[i]!;
      if (m > 0) await maker.make(s, u.subarray(0, m), sets);
      made += m;
    }
    for (let a = a0; a < a1; a++) {
      if (start[a + 1] === start[a]) continue;
      table.load(sets.get(A * TWO32 + a));
      for (let i = start[a]!; i < start[a + 1]!; i++) {
        const key = partner[i]!;
        const sim = probeJaccardAtLeast(table, sets.get(key), job.threshold);
        if (sim < 0) continue;
        const s = Math.floor(key / TWO32);
        const b = key - s * TWO32;
        sa.push(A);
        oa.push(a);
        os.push(s);
        ob.push(b);
        sims.push(sim);
        lines.push(formatPair(job.output.pairFormat, da.id(a), docs.get(s).id(b), sim));
      }
    }
    a0 = a1;
  }
  return { candidates: partner.length, pairs: sims.length - before, sets: made };
}
