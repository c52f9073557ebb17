/**
 * Reading one input shard of a job, the same way in every stage (so document numbers agree), and
 * the per-shard numbering that later stages derive from the sign stage's markers.
 * @module
 */
import { openInput, type OpenedInput } from '../../io/read/read.js';
import type { SkipReport } from '../../io/read/record.js';
import { rangeableFormat, tsvHeaderOf, type LineParseSpec } from '../../io/ranges/lineRanges.js';
import { shardMarker } from './perShard.js';
import type { JobSpec } from './job.js';
import { checkShard } from './shardIdentity.js';

/** The sign stage's marker: what a shard held. */
export interface SignMarker {
  /** Documents (records read, without skipped invalid ones). */
  docs: number;
  /** Rows (records including skipped invalid ones): the shard's share of the global row numbers. */
  rows: number;
  /** Documents without shingles. */
  emptyDocs: number;
  /** UTF-16 code units of text. */
  chars: number;
  /** Bytes of the shard on disk. */
  bytes: number;
  /** The resolved input format. */
  format: string;
  /** Invalid records skipped (--skip-invalid), and the first problem. */
  skippedRecords: number;
  firstSkip?: string;
  /** Records that span several lines (a quoted line break), and where the first lies; absent when none. */
  multiline?: number;
  firstMultiline?: string;
  /** Explicit ids read (their file `ids.bin` exists when > 0). */
  ids?: number;
  /** Set when the whole shard could not be read and the job skips bad shards: the error, naming file and line. */
  skipped?: string;
}

/**
 * Opens shard `s` of `job` through the io layer's reader (every format and compression it knows),
 * after checking it is still the file the job was planned on.
 */
export function openShard(workDir: string, job: JobSpec, s: number, raw = false): Promise<OpenedInput> {
  checkShard(workDir, job, s);
  return openInput(job.shards[s]!.path, { ...job.read, raw });
}

/**
 * How to read shard `s` in byte ranges (a plain, uncompressed line-format file), or undefined when it
 * must be read sequentially. Sign reads such a shard as `neardup dedup` reads one file (texts left
 * as bytes, signed in WebAssembly) and records where each document's line lies, so verification
 * reads the lines it needs again from the shard itself: no copy of their texts is written.
 * `withHeader`: a TSV spec carries its header line (what reading lines by offset needs).
 */
export function shardLineSpec(job: JobSpec, s: number, withHeader = false): LineParseSpec | undefined {
  const file = job.shards[s]!.path;
  if (job.read.limit !== undefined) return undefined;
  const format = rangeableFormat(file, job.read.format ?? 'auto', job.read.tsvQuotes);
  if (!format) return undefined;
  const spec: LineParseSpec = {
    path: file,
    name: file,
    format,
    fields: job.read.fields,
    columns: job.read.columns,
    skipInvalid: job.read.skipInvalid ?? false,
  };
  if (withHeader && format === 'tsv') spec.header = tsvHeaderOf(file)?.header ?? '';
  return spec;
}

/** Global numbering of the shards' documents and rows, from the sign markers (all must be complete). */
export interface Numbering {
  markers: SignMarker[];
  /** First global document index of each shard (length S + 1; the last is the total). */
  docOffset: Float64Array;
  /** First global row number of each shard (length S + 1). */
  rowOffset: Float64Array;
}

/** The numbering of `job`'s documents; throws if a sign task has not completed. */
export function numbering(workDir: string, job: JobSpec): Numbering {
  const S = job.shards.length;
  const markers: SignMarker[] = [];
  const docOffset = new Float64Array(S + 1);
  const rowOffset = new Float64Array(S + 1);
  for (let s = 0; s < S; s++) {
    const m = shardMarker<SignMarker>(workDir, job, 'sign', s);
    markers.push(m);
    docOffset[s + 1] = docOffset[s]! + m.docs;
    // Row numbers are each input's own, as in neardup dedup NEW --against OLD: the reference's start at 0.
    const first = s > 0 && job.shards[s]!.side !== job.shards[s - 1]!.side;
    rowOffset[s] = first ? 0 : rowOffset[s]!;
    rowOffset[s + 1] = rowOffset[s]! + m.rows;
  }
  return { markers, docOffset, rowOffset };
}

/**
 * The id of a document: its explicit id (--id / --id-field), else its global row number, which is the
 * row number single-process `neardup dedup` gives it in the shards' concatenation.
 */
export function docId(explicit: string | undefined, rowOffset: number, row: number): string {
  return explicit ?? String(rowOffset + row);
}

/**
 * The invalid records a job's shards skipped (--skip-invalid), added shard by shard in input order
 * from the tasks' markers, as one process's warning names them: the first problem is the first
 * shard's that has one, and a job of several shards names each file that lost records.
 */
export class SkippedRecords {
  count = 0;
  private first: string | undefined;
  private multiline = 0;
  private firstMultiline: string | undefined;
  private readonly perFile = new Map<string, number>();
  private readonly job: JobSpec;

  constructor(job: JobSpec) {
    this.job = job;
  }

  /** Shard `s` skipped `count` records, the first of them `first` (absent in an older job's markers). */
  add(s: number, count: number, first: string | undefined): void {
    if (count === 0) return;
    // Only the first shard that skipped names the first problem (none named rather than a later one).
    if (this.count === 0) this.first = first;
    this.count += count;
    const file = this.job.shards[s]!.path;
    this.perFile.set(file, (this.perFile.get(file) ?? 0) + count);
  }

  /** The next shard in input order held `count` records that span several lines, the first at `first` (absent in an older job's markers). */
  addMultiline(count: number | undefined, first: string | undefined): void {
    if (!count) return;
    if (this.multiline === 0) this.firstMultiline = first;
    this.multiline += count;
  }

  /** What the warning says. */
  report(): SkipReport {
    return {
      count: this.count,
      first: this.first,
      ...(this.job.shards.length > 1 ? { perFile: this.perFile } : {}),
      ...(this.multiline > 0 ? { multiline: this.multiline, firstMultiline: this.firstMultiline } : {}),
    };
  }
}
