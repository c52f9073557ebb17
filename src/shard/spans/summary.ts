/**
 * The last step of a spans job, on a view of its work dir with every marker: the summary of
 * `neardup spans` summed from the stages' markers (the top units merged from the partitions'
 * candidates, with the texts the cut tasks took), and the `--removed` audit, the cut tasks' rows
 * concatenated in group order, which is input order.
 * @module
 */
import { createReadStream } from 'node:fs';
import { emptySpansSummary, type SpansSummary } from '../../spans/deduper.js';
import type { SpansFileResult } from '../../spans/file/file.js';
import { SPANS_AUDIT_COLUMNS } from '../../spans/file/audit.js';
import { atomicFileSink, type OutputSink } from '../../io/write/output.js';
import { requireMarker, taskText } from '../files/commit.js';
import { shardsOfTask, taskCount, type JobSpec } from '../files/job.js';
import { SkippedRecords } from '../files/shardInput.js';
import type { SpansCutMarker } from './cut.js';
import type { SpansDecideMarker, TopCandidate } from './decide.js';
import type { SpansHashMarker } from './hash.js';

/** What `neardup spans` reports, from the markers of the finished job in `dir`. */
export function summarizeSpans(dir: string, job: JobSpec): SpansFileResult & { outputs: string[] } {
  const s: SpansSummary = emptySpansSummary();
  const skips = new SkippedRecords(job);
  let format = '';
  for (let g = 0; g < taskCount(job, 'spans-hash'); g++) {
    const m = requireMarker<SpansHashMarker>(dir, job, 'spans-hash', g);
    s.documents += m.docs;
    // Windows passed over by their anchors occur once: each is a unit, and a distinct one, as in one process.
    s.units += m.units + m.passed;
    s.distinctUnits += m.passed;
    const { first } = shardsOfTask(job, g);
    for (const [i, x] of m.shards.entries()) {
      skips.add(first + i, x.skipped, x.firstSkip);
      skips.addMultiline(x.multiline, x.firstMultiline);
    }
    if (g === 0) format = m.formats[0] ?? '';
  }
  const candidates: TopCandidate[] = [];
  for (let p = 0; p < taskCount(job, 'spans-decide'); p++) {
    const m = requireMarker<SpansDecideMarker>(dir, job, 'spans-decide', p);
    s.distinctUnits += m.distinct;
    s.repeatedUnits += m.repeated;
    candidates.push(...m.top);
  }
  const texts = new Map<string, string>();
  let written = 0;
  let auditRows = 0;
  const outputs: string[] = [];
  for (let t = 0; t < taskCount(job, 'spans-cut'); t++) {
    const m = requireMarker<SpansCutMarker>(dir, job, 'spans-cut', t);
    s.textBytes += m.textBytes;
    s.bytesRemoved += m.bytesRemoved;
    s.unitsRemoved += m.unitsRemoved;
    s.documentsChanged += m.documentsChanged;
    s.documentsEmptied += m.documentsEmptied;
    s.documentsDropped += m.documentsDropped;
    written += m.written;
    auditRows += m.auditRows;
    outputs.push(...m.outputs);
    for (const x of m.top) texts.set(`${x.doc}:${x.k}`, x.text);
  }
  candidates.sort((a, b) => b.count - a.count || a.doc - b.doc || a.k - b.k);
  s.top = candidates.slice(0, job.spans!.options.top).map((c) => ({ text: texts.get(`${c.doc}:${c.k}`) ?? '', count: c.count, docs: c.docs }));
  return { summary: s, written, auditRows, skipped: skips.count, skips: skips.report(), format, outputs };
}

/** Writes the `--removed` audit of the finished job in `dir` to `file` (atomically), in input order. */
export async function writeSpansAudit(dir: string, job: JobSpec, file: string): Promise<void> {
  let out: OutputSink | undefined = await atomicFileSink(file);
  try {
    if (job.spans!.audit === 'tsv') await out.write(SPANS_AUDIT_COLUMNS.join('\t') + '\n');
    for (let t = 0; t < taskCount(job, 'spans-cut'); t++) {
      const m = requireMarker<SpansCutMarker>(dir, job, 'spans-cut', t);
      const text = taskText({ workDir: dir, stage: 'spans-cut', task: t }, m, 'audit.txt');
      for await (const chunk of createReadStream(text.path, { encoding: 'utf8', highWaterMark: 1 << 20 })) await out.write(chunk as string);
    }
    await out.close();
    out = undefined;
  } finally {
    await out?.abort();
  }
}
