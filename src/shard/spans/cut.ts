/**
 * Stage spans-cut of a spans job (one task per shard group): reads its group's removed occurrences
 * from every spans-decide task, then its shards' records again, and cuts each document exactly as
 * `neardup spans`' pass 2 does (the same {@link UnitWalker}, {@link cutDocument} and
 * {@link RecordWriter}, or Parquet as Parquet): the output shard (atomically, in the job's output directory under the
 * shard's relative name), the group's `--removed` audit rows (`audit.txt`, in input order, without
 * a header) and its counts. It also takes the text of the partitions' most repeated units whose
 * first occurrence is in its group, for the summary.
 * @module
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { auditRow } from '../../spans/dedupSpans.js';
import { cutDocument } from '../../spans/cutDocument.js';
import { topText, type DocVerdict, type UnitFacts } from '../../spans/deduper.js';
import type { AnchorRuns } from '../../spans/anchors.js';
import { UnitWalker } from '../../spans/walker.js';
import { auditLine } from '../../spans/file/audit.js';
import { RecordWriter } from '../../spans/file/records.js';
import { atomicFileSink, type OutputSink } from '../../io/write/output.js';
import { commitTask, requireMarker, taskDir, writeSynced } from '../files/commit.js';
import { rangeOf, shardsOfTask, taskCount, type JobSpec } from '../files/job.js';
import { openShard } from '../files/shardInput.js';
import { rewriteSpansParquet } from '../../spans/file/parquet.js';
import type { InputRecord } from '../../io/read/record.js';
import { cutLayout, NONE, type SpansDecideMarker } from './decide.js';
import { groupRuns, walkedAll, walkerAt } from './anchorFind.js';
import { docBases } from './find.js';
import type { SpansHashMarker } from './hash.js';
import { groupRows } from './rows.js';

/** The spans-cut task's counts (summed over the groups by the job's summary). */
export interface SpansCutMarker {
  textBytes: number;
  bytesRemoved: number;
  unitsRemoved: number;
  documentsChanged: number;
  documentsEmptied: number;
  documentsDropped: number;
  /** Records written to the output shards. */
  written: number;
  /** Rows of audit.txt. */
  auditRows: number;
  /** The output shards written (relative names), for `_SUCCESS`. */
  outputs: string[];
  /** Texts of top candidates whose first occurrence is in the group: global document, unit index, text. */
  top: { doc: number; k: number; text: string }[];
}

/** Documents' ids as the audit names them (the record's id, else its global row number), group by group, loaded when first asked. */
export class SpansIds {
  private readonly base: number[];
  private readonly rowBase: number[] = [0];
  private readonly explicit: boolean;
  private readonly loaded = new Map<number, { ids: (string | null)[]; rows: number[]; shardOf: number[] }>();

  constructor(private readonly workDir: string, private readonly job: JobSpec) {
    this.base = docBases(workDir, job);
    let explicit = false;
    for (let g = 0; g < taskCount(job, 'spans-hash'); g++) {
      const m = requireMarker<SpansHashMarker>(workDir, job, 'spans-hash', g);
      explicit ||= m.explicit;
      for (const s of m.shards) this.rowBase.push(this.rowBase.at(-1)! + s.rows);
    }
    this.explicit = explicit;
  }

  /** The first global document of group `g`. */
  first(g: number): number {
    return this.base[g]!;
  }

  /** The id of global document `d`. */
  of(d: number): string {
    const g = rangeOf(this.base, d);
    const x = this.group(g);
    const i = d - this.base[g]!;
    const row = this.rowBase[x.shardOf[i]!]! + x.rows[i]!;
    return this.explicit ? (x.ids[i] ?? String(row)) : String(row);
  }

  private group(g: number): { ids: (string | null)[]; rows: number[]; shardOf: number[] } {
    let x = this.loaded.get(g);
    if (x) return x;
    const m = requireMarker<SpansHashMarker>(this.workDir, this.job, 'spans-hash', g);
    const parsed = JSON.parse(readFileSync(path.join(taskDir(this.workDir, 'spans-hash', g), 'docs.json'), 'utf8')) as {
      ids: (string | null)[];
      rows: number[];
    };
    const shardOf: number[] = [];
    m.shards.forEach((s, j) => shardOf.push(...new Array<number>(s.docs).fill(this.job.groups[g]! + j)));
    this.loaded.set(g, x = { ...parsed, shardOf });
    return x;
  }
}

/** A removed unit's facts where nothing reads them (no audit). */
const NO_FACTS: UnitFacts = { keptDoc: -1, keptStart: -1, keptByteStart: -1, count: 0, docs: 0 };

/** The group's removed occurrences from every decide task, sorted by (document, unit index). */
function groupCuts(workDir: string, job: JobSpec, t: number): Uint32Array[] {
  return groupRows<SpansDecideMarker>(workDir, job, { stage: 'spans-decide', file: 'cuts.u32', layout: cutLayout(job) }, t);
}

/** Runs spans-cut task `t` (idempotent; every spans-decide task must have completed). */
export function runSpansCut(workDir: string, job: JobSpec, t: number): Promise<SpansCutMarker> {
  return commitTask<SpansCutMarker>({ workDir, job, stage: 'spans-cut', task: t }, async (dir) => {
    const ids = new SpansIds(workDir, job);
    const cuts = groupCuts(workDir, job, t);
    const first = ids.first(t);
    const runs = groupRuns(workDir, job, t);
    const tops = new Map<number, Set<number>>();
    for (let p = 0; p < taskCount(job, 'spans-decide'); p++) {
      for (const c of requireMarker<SpansDecideMarker>(workDir, job, 'spans-decide', p).top) {
        if (!tops.has(c.doc)) tops.set(c.doc, new Set());
        tops.get(c.doc)!.add(c.k);
      }
    }
    const m: SpansCutMarker = {
      textBytes: 0,
      bytesRemoved: 0,
      unitsRemoved: 0,
      documentsChanged: 0,
      documentsEmptied: 0,
      documentsDropped: 0,
      written: 0,
      auditRows: 0,
      outputs: [],
      top: [],
    };
    const audit: string[] = [];
    const state = { doc: 0, row: 0 };
    const { first: s0, end } = shardsOfTask(job, t);
    for (let s = s0; s < end; s++) await cutShard({ workDir, job, s, ids, cuts, first, tops, runs, m, audit, state });
    walkedAll(runs, state.doc);
    await writeSynced(path.join(dir, 'audit.txt'), audit.join(''));
    return m;
  });
}

/** What {@link cutShard} shares across a group's shards. */
interface CutContext {
  workDir: string;
  job: JobSpec;
  s: number;
  ids: SpansIds;
  cuts: Uint32Array[];
  /** The group's first global document. */
  first: number;
  /** Top candidates' first occurrences: global document → unit indices. */
  tops: Map<number, Set<number>>;
  /** The group's windows' runs, walked or passed over (with anchors: ./anchorFind.ts). */
  runs: AnchorRuns | undefined;
  m: SpansCutMarker;
  audit: string[];
  /** The next document of the group, and the next row of `cuts`. */
  state: { doc: number; row: number };
}

/** Cuts shard `x.s`: its records read again, each cut as the decide tasks say, written in its own format (Parquet as Parquet). */
async function cutShard(x: CutContext): Promise<void> {
  const { job, m } = x;
  const spans = job.spans!;
  const walker = new UnitWalker(spans.options);
  walker.runs = x.runs;
  const shard = job.shards[x.s]!;
  const target = spans.mode !== 'none' && job.output.dir ? path.join(job.output.dir, shard.out) : undefined;
  if (target) await fsp.mkdir(path.dirname(target), { recursive: true });
  const input = await openShard(x.workDir, job, x.s, true);
  if (target && spans.mode !== 'none' && input.format === 'parquet') {
    await input.records.return(undefined);
    const decide = async (r: InputRecord): Promise<DocVerdict> => cutRecord(x, walker, r);
    const { written } = await rewriteSpansParquet(shard.path, target, { read: job.read, name: shard.path, mode: spans.mode, decide });
    m.outputs.push(shard.out);
    m.written += written;
    return;
  }
  let sink: OutputSink | undefined;
  try {
    if (target) sink = await atomicFileSink(target);
    const writer = new RecordWriter(input, job.read, spans.mode, sink);
    for await (const r of input.records) await writer.write(r, cutRecord(x, walker, r));
    await writer.header();
    if (sink) {
      await sink.close();
      sink = undefined;
      m.outputs.push(shard.out);
    }
    m.written += writer.written;
  } finally {
    await input.records.return(undefined);
    await sink?.abort();
  }
}

/** The next document of the group, record `r`, cut as the decide tasks say; its counts and audit rows kept. */
function cutRecord(x: CutContext, walker: UnitWalker, r: InputRecord): DocVerdict {
  const { m, cuts, state } = x;
  const spans = x.job.spans!;
  const o = spans.options;
  const d = state.doc++;
  const g = x.first + d;
  m.textBytes += Buffer.byteLength(r.text);
  const a = state.row;
  while (state.row < cuts[0]!.length && cuts[0]![state.row] === d) state.row++;
  const removed = Array.from(cuts[1]!.subarray(a, state.row));
  const facts = (j: number): UnitFacts => {
    // Without the audit, which alone reads them, cuts.u32 has no kept occurrence nor counts.
    if (cuts.length === 2) return NO_FACTS;
    const kept = cuts[2]![a + j]!;
    return kept === NONE
      ? { keptDoc: -1, keptStart: -1, keptByteStart: -1, count: cuts[5]![a + j]!, docs: cuts[6]![a + j]! }
      : { keptDoc: kept, keptStart: cuts[3]![a + j]!, keptByteStart: cuts[4]![a + j]!, count: cuts[5]![a + j]!, docs: cuts[6]![a + j]! };
  };
  // The units are split again only where something is cut or a top unit's text is taken.
  const top = x.tops.get(g);
  walkerAt(walker, d);
  if (removed.length > 0 || top) walker.each(r.text, (k) => void (top?.has(k) && m.top.push({ doc: g, k, text: topText(r.text, walker.units, k) })));
  const v = cutDocument(r.text, { units: walker.units, removed, facts, substring: o.unit === 'substring', minDocWords: o.minDocWords });
  if (v.changed) {
    m.bytesRemoved += v.bytesRemoved;
    m.unitsRemoved += v.units.length;
    m.documentsChanged++;
    if (v.emptied) m.documentsEmptied++;
    if (v.dropped) m.documentsDropped++;
    if (spans.audit) {
      const id = x.ids.of(g);
      for (const u of v.units) x.audit.push(auditLine(spans.audit, auditRow(id, u, (k) => x.ids.of(k))));
      m.auditRows += v.units.length;
    }
  }
  return v;
}
