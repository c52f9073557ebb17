/**
 * `neardup spans` over a file, in two passes and a check: pass 1 reads every record and counts its units
 * (only hashes and first occurrences are kept), the check reads them again to compare the texts
 * of the hashes counted more than once (../verify.ts), pass 2 reads the input again and writes the
 * rewritten (`dedup`) or tagged (`annotate`) records and the `--removed` audit, each atomically
 * (temp file, then rename; nothing is left on an error).
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { openInput, rowCount, type OpenedInput, type ReadOptions } from '../../io/read/read.js';
import type { ShardList } from '../../io/read/shards.js';
import { writeSuccessMarker } from '../../io/write/outDir.js';
import { prepareOutputDirectory } from '../../io/write/rewrite.js';
import { refuseOutputInInputs } from '../../io/write/alias.js';
import { atomicFileSink, openOutput, PendingCommits, type OutputSink } from '../../io/write/output.js';
import { SpanDeduper, type DocVerdict, type SpansSummary } from '../deduper.js';
import { ByteRecords, recordKeys } from './byteRecord.js';
import { auditRow } from '../dedupSpans.js';
import { auditLine, SPANS_AUDIT_COLUMNS, spansAuditFormat } from './audit.js';
import type { SpansOptions } from '../options.js';
import { skipReport, type InputRecord, type SkipReport } from '../../io/read/record.js';
import { anchorPass, bytePass1, readAgain } from './bytePass1.js';
import { ByteBatch, rawJsonlPass, rawPassFits } from './rawPass.js';
import { checkEditable, RecordWriter, refuseOutputsRead } from './records.js';
import { readingInputs } from '../../io/read/inputStamps.js';
import { checkOutputFile, checkShardsWritable, rewriteSpansParquet } from './parquet.js';

/** Options of {@link dedupSpansFile}. */
export interface SpansFileOptions {
  /** How to read the input (format, text column or field, id…), as `openInput`. */
  read?: ReadOptions;
  /** The deduplication. */
  spans?: SpansOptions;
  /** What to write: `dedup` (default: the records, units cut), `annotate` (every record with its cuts), or `none` (audit and summary only). */
  mode?: 'dedup' | 'annotate' | 'none';
  /**
   * Where the records go: a file (.gz/.zst compress), or standard output when undefined or `-`; a
   * Parquet input's, a `.parquet` file. For a sharded input (a glob or directory of shards, or
   * `read.inputs`): the directory of output shards, one per input shard under its relative name,
   * each in its own format, then `_SUCCESS`.
   */
  out?: string;
  /** The audit of every removed unit: a `.tsv` or `.jsonl` file (may end in .gz/.zst). */
  removed?: string;
}

/** What {@link dedupSpansFile} did. */
export interface SpansFileResult {
  /** The counts and the most repeated units. */
  summary: SpansSummary;
  /** Records written (0 with mode `none`). */
  written: number;
  /** Audit rows written. */
  auditRows: number;
  /** Records skipped as invalid (with `read.skipInvalid`). */
  skipped: number;
  /** Those records for the warning about them: the first one's file, line and problem, the count per shard. */
  skips: SkipReport;
  /** The input's resolved format. */
  format: string;
}

/**
 * Deduplicates the units of `input` (a file, or `-`) and writes what `options.mode` says to
 * `options.out`, and the audit to `options.removed`: what `neardup spans` runs. An output that is
 * an input, or `out` and `removed` one file, is a `UsageError` before anything is written; an input
 * changed while it is read is an `InputChangedError`, and no output is put in place after it.
 */
export function dedupSpansFile(input: string, options: SpansFileOptions = {}): Promise<SpansFileResult> {
  return readingInputs(() => spansOfFile(input, options));
}

/** {@link dedupSpansFile} within its run. */
async function spansOfFile(input: string, options: SpansFileOptions): Promise<SpansFileResult> {
  const read = options.read ?? {};
  const mode = options.mode ?? 'dedup';
  const auditFormat = options.removed !== undefined ? spansAuditFormat(options.removed) : undefined;
  let d = new SpanDeduper(options.spans);
  // Pass 1: ids and rows per document, units into the table.
  const first = await openInput(input, read);
  if (first.size !== undefined) d.expectBytes(first.size);
  const ids: (string | undefined)[] = [];
  const rows: number[] = [];
  try {
    await refuseOutputsRead(input, first, { ...options, mode });
    if (mode !== 'none') checkEditable(first, read, mode, options.out);
    if (mode !== 'none' && !first.shards) await checkOutputFile(input, first, read, { mode, out: options.out });
    // Before the first pass: an output directory inside an input is refused without creating it.
    if (mode !== 'none' && first.shards)
      await refuseOutputInInputs({ what: 'output directory', path: options.out! }, first.shards.roots ?? [first.shards.base]);
    if (d.needsAnchors) await anchorPass(input, read, d);
    let bytes: boolean;
    try {
      bytes = await bytePass1(input, first, read, d, { ids, rows });
    } catch {
      // A problem in the bytes (invalid UTF-8, a record the reader refuses): pass 1 again from the records, for their error.
      bytes = false;
      d = new SpanDeduper(options.spans);
      if (first.size !== undefined) d.expectBytes(first.size);
      if (d.needsAnchors) await anchorPass(input, read, d);
      ids.length = 0;
      rows.length = 0;
    }
    if (!bytes) {
      for await (const r of first.records) {
        ids.push(r.id);
        rows.push(r.row);
        d.observe(r.text);
      }
    }
  } finally {
    await first.records.return(undefined);
    first.close?.();
  }
  const explicit = ids.some((id) => id !== undefined);
  // Every shard's format is known now: one that cannot be rewritten stops the run before any is written.
  if (mode !== 'none' && first.shards) await checkShardsWritable(first.shards, first.shardFormats ?? [], { read, mode });
  d.endObserving();
  // Outputs that can be discarded (files, written atomically): pass 2 checks the repeated units as it goes, and runs again in the rare case a hash collided.
  const speculate = mode === 'none' || first.shards !== undefined || (await retractable(options.out));
  if (d.needsVerifying && !speculate) await readAgain(input, read, (t) => d.verify(t));
  d.endVerifying(speculate);
  const idOf = (i: number): string => (explicit ? (ids[i] ?? String(rows[i])) : String(rows[i]));
  const p2 = { read, d, mode, auditFormat: auditFormat ?? 'tsv', idOf, rows, first };
  const done = (r: { written: number; auditRows: number }): SpansFileResult => ({
    summary: d.summary(),
    written: r.written,
    auditRows: r.auditRows,
    skipped: first.skips.count,
    skips: skipReport(first.skips, first.shards !== undefined),
    format: first.format,
  });
  for (;;) {
    const r = mode !== 'none' && first.shards ? await shardsAttempt(first.shards, options, p2) : await fileAttempt(input, options, p2);
    if (r) return done(r);
    d.restart();
  }
}

/** The options of pass 2 but its audit sink. */
type Pass2Options = Omit<Pass2, 'audit'>;

/** One pass 2 over shards into `options.out`; undefined when a hash collided in it (its outputs are then void: run it again). */
async function shardsAttempt(list: ShardList, options: SpansFileOptions, p: Pass2Options): Promise<{ written: number; auditRows: number } | undefined> {
  let audit: OutputSink | undefined = options.removed !== undefined ? await atomicFileSink(options.removed) : undefined;
  try {
    if (audit && p.auditFormat === 'tsv') await audit.write(SPANS_AUDIT_COLUMNS.join('\t') + '\n');
    const result = await secondPassShards(list, options.out!, { ...p, audit });
    if (p.d.collided) return undefined;
    await audit?.close();
    audit = undefined;
    return result;
  } finally {
    await audit?.abort();
  }
}

/** One pass 2 over a file (the same records, with their raw text, in the same order); undefined when a hash collided in it. */
async function fileAttempt(input: string, options: SpansFileOptions, p: Pass2Options): Promise<{ written: number; auditRows: number } | undefined> {
  let second: OpenedInput | undefined;
  let out: OutputSink | undefined;
  let audit: OutputSink | undefined;
  // A Parquet file is written whole (./parquet.ts), and put in place once no hash collided.
  const parquet = p.mode !== 'none' && p.first.format === 'parquet' && !p.first.shards ? new PendingCommits() : undefined;
  try {
    out = p.mode !== 'none' && !parquet ? await openOutput(options.out) : undefined;
    audit = options.removed !== undefined ? await atomicFileSink(options.removed) : undefined;
    if (audit && p.auditFormat === 'tsv') await audit.write(SPANS_AUDIT_COLUMNS.join('\t') + '\n');
    const at = { i: 0, base: 0, last: -1, valid: 0 };
    let result: { written: number; auditRows: number };
    if (parquet) result = await parquetPass(input, options.out!, { ...p, audit }, { at, commits: parquet });
    else {
      // Annotating tags every record: none is copied as it is.
      const bytes = p.mode !== 'annotate' && (await rawPassFits(input, p.read, p.first, out)) ? bytesInput(p.first) : undefined;
      second = bytes ?? (await openInput(input, { ...p.read, raw: true }));
      result = bytes ? await secondPassBytes(input, bytes, out, { ...p, audit }, at) : await secondPass(second, out, { ...p, audit }, at);
    }
    if (at.i !== p.rows.length) throw new Error(`${p.first.name} changed while it was being read (${at.i} records instead of ${p.rows.length})`);
    if (p.d.collided) return undefined;
    await parquet?.commit();
    await out?.close();
    out = undefined;
    await audit?.close();
    audit = undefined;
    return result;
  } finally {
    await second?.records.return(undefined);
    await parquet?.discard();
    await out?.abort();
    await audit?.abort();
  }
}

/** Whether the records' output can be discarded: a file written atomically, not standard output nor a device or pipe (written as it goes). */
async function retractable(out: string | undefined): Promise<boolean> {
  if (out === undefined || out === '-') return false;
  const st = await fsp.stat(out).catch(() => undefined);
  return st === undefined || st.isFile();
}

/** Where pass 2 is: the next document, the shard's first row, and the shard's last row and valid records so far. */
interface At {
  i: number;
  base: number;
  last: number;
  valid: number;
}

/** Pass 2's document number of record `r` of input `name`, checked against pass 1's rows (an input changed meanwhile is an error). */
function nextDoc(r: InputRecord, p: Pass2, at: At, name: string): number {
  const i = at.i;
  at.last = r.row;
  at.valid++;
  if (i >= p.rows.length || r.row + at.base !== p.rows[i]) throw new Error(`${name} changed while it was being read (record ${i})`);
  return i;
}

/** What pass 2 shares across shards. */
interface Pass2 {
  /** The input as pass 1 opened it. */
  first: OpenedInput;
  read: ReadOptions;
  d: SpanDeduper;
  mode: 'dedup' | 'annotate' | 'none';
  audit: OutputSink | undefined;
  auditFormat: 'tsv' | 'jsonl';
  idOf: (i: number) => string;
  rows: number[];
}

/**
 * Pass 2 of a sharded input: each shard opened alone (its own format, header and byte-order mark)
 * and written to `outDir` under its relative name, atomically, then `_SUCCESS` — into a directory
 * checked and locked as `dedup --output dedup` does (no overlap with an input, nothing but this
 * run's shards in it).
 */
async function secondPassShards(list: ShardList, outDir: string, p: Pass2): Promise<{ written: number; auditRows: number }> {
  const release = await prepareOutputDirectory(list, outDir);
  try {
    const at = { i: 0, base: 0, last: -1, valid: 0 };
    let written = 0;
    let auditRows = 0;
    for (const [k, shard] of list.shards.entries()) {
      const target = path.join(outDir, shard.rel);
      await fsp.mkdir(path.dirname(target), { recursive: true });
      [at.last, at.valid] = [-1, 0];
      if (p.first.shardFormats?.[k] === 'parquet') {
        const r = await parquetPass(shard.path, target, p, { at, name: shard.name });
        [written, auditRows] = [written + r.written, auditRows + r.auditRows];
        at.base += rowCount(at.last, at.valid, r.skipped);
        continue;
      }
      const input = await openInput(shard.path, { ...p.read, inputs: undefined, displayName: shard.name, raw: true });
      let sink: OutputSink | undefined = await atomicFileSink(target);
      try {
        const r = await secondPass(input, sink, p, at);
        written += r.written;
        auditRows += r.auditRows;
        await sink.close();
        sink = undefined;
      } finally {
        await input.records.return(undefined);
        await sink?.abort();
      }
      // Rows continue across shards as pass 1 numbered them (skipped records count).
      at.base += rowCount(at.last, at.valid, input.skips.count);
    }
    if (at.i !== p.rows.length) throw new Error(`${list.name} changed while it was being read (${at.i} records instead of ${p.rows.length})`);
    // A hash collided in a speculative pass: these shards are void and are written again.
    if (!p.d.collided) await writeSuccessMarker(outDir, list.shards.map((s) => s.rel));
    return { written, auditRows };
  } finally {
    await release();
  }
}

/**
 * Pass 2 of a Parquet file or shard into `target` (./parquet.ts): each valid record checked against
 * pass 1's rows, decided and audited, in row order; `o.name` names a shard.
 */
async function parquetPass(
  file: string,
  target: string,
  p: Pass2,
  o: { at: At; commits?: PendingCommits; name?: string },
): Promise<{ written: number; auditRows: number; skipped: number }> {
  const { at } = o;
  const name = o.name ?? p.first.name;
  if (p.mode === 'none') throw new Error('a dry run writes no Parquet');
  let auditRows = 0;
  const decide = async (r: InputRecord): Promise<DocVerdict> => {
    const i = nextDoc(r, p, at, name);
    const v = p.d.decide(r.text);
    auditRows += await auditVerdict(v, p, i);
    at.i++;
    return v;
  };
  const read = { ...p.read, inputs: undefined, displayName: name };
  const r = await rewriteSpansParquet(file, target, { read, name, mode: p.mode, decide, commits: o.commits });
  return { written: r.written, auditRows, skipped: r.skipped };
}

/** The input pass 2 reads as bytes ({@link rawJsonlPass}): pass 1's, with no records of its own, its byte-order mark told by the pass. */
function bytesInput(first: OpenedInput): OpenedInput & { bom: boolean } {
  return { ...first, header: undefined, bom: false, skips: { count: 0, examples: [] }, records: (async function* () {})() };
}

/**
 * {@link secondPass} over a plain JSONL file read as bytes (./rawPass.ts): the records that lose nothing are copied unread.
 * Why these parameters: {@link secondPass}'s, and the file's path.
 */
async function secondPassBytes(
  path: string,
  input: OpenedInput & { bom: boolean },
  out: OutputSink | undefined,
  p: Pass2,
  at: At,
): Promise<{ written: number; auditRows: number }> {
  const batch = out ? new ByteBatch(out) : undefined;
  const writer = new RecordWriter(input, p.read, p.mode, batch);
  const counts = { auditRows: 0, passed: 0 };
  const keys = p.mode !== 'annotate' ? recordKeys(p.read, false) : undefined;
  // A changed text's JSON made by the deduper's kernel: JSON.stringify and the UTF-8 encoding were a tenth of pass 2.
  const records = keys ? new ByteRecords(keys, (changed) => p.d.jsonOf(changed)) : undefined;
  /** A record to decide, read from its bytes when the scan takes it. Why these parameters: the hook's (RawPassHooks.takes). */
  const takes = async (_row: number, line: Buffer, start: number, stop: number, next: number): Promise<boolean> => {
    const text = records!.scan(line, start, stop) ? p.d.jsonText(line, records!.textStart, records!.textEnd) : undefined;
    if (text === undefined) return false;
    await writer.header();
    const v = p.d.decide(text);
    counts.auditRows += await auditVerdict(v, p, at.i);
    if (batch && !v.dropped) {
      await records!.write(batch, line, { start, stop, next }, v.changed ? v : undefined);
      writer.written++;
    }
    at.i++;
    return true;
  };
  await rawJsonlPass(path, { name: input.name, read: p.read, out: batch, skips: input.skips }, {
    start: (bom) => (input.bom = bom),
    header: () => writer.header(),
    passes: (row) => {
      const i = at.i;
      at.last = row;
      at.valid++;
      if (i >= p.rows.length || row + at.base !== p.rows[i]) throw new Error(`${input.name} changed while it was being read (record ${i})`);
      if (!p.d.passUnread()) return false;
      at.i++;
      counts.passed++;
      return true;
    },
    takes: records && takes,
    record: async (r) => {
      counts.auditRows += await passRecord(r, writer, p, at.i);
      at.i++;
    },
  });
  await writer.header();
  await batch?.flush();
  // Records copied unread were written as they are (none with no output, or dropped).
  return { written: writer.written + (p.mode === 'none' ? 0 : counts.passed), auditRows: counts.auditRows };
}

/** Pass 2 of record `r`, document `i`: decided, its removed units audited, the record written; returns the audit rows. */
async function passRecord(r: InputRecord, writer: RecordWriter, p: Pass2, i: number): Promise<number> {
  await writer.header();
  const v = p.d.decide(r.text);
  const rows = await auditVerdict(v, p, i);
  await writer.write(r, v);
  return rows;
}

/** The audit rows of verdict `v` of document `i`, written; returns how many. */
async function auditVerdict(v: DocVerdict, p: Pass2, i: number): Promise<number> {
  if (!p.audit || v.units.length === 0) return 0;
  const id = p.idOf(i);
  let rows = ''; // one awaited write per document, not per removed unit (most of the audit's time)
  for (const u of v.units) rows += auditLine(p.auditFormat, auditRow(id, u, p.idOf));
  await p.audit.write(rows);
  return v.units.length;
}

/** Pass 2 over one opened input (a file, or one shard): `at.i` is the next document, `at.base` the shard's first row. */
async function secondPass(
  input: OpenedInput,
  out: OutputSink | undefined,
  p: Pass2,
  at: At,
): Promise<{ written: number; auditRows: number }> {
  const writer = new RecordWriter(input, p.read, p.mode, out);
  let auditRows = 0;
  for await (const r of input.records) {
    auditRows += await passRecord(r, writer, p, nextDoc(r, p, at, input.name));
    at.i++;
  }
  await writer.header();
  return { written: writer.written, auditRows };
}
