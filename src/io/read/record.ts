/**
 * The records readers produce, and the context they share.
 * @module
 */
import { excerpt, InputError } from '../../common/errors.js';

/** One document read from an input. */
export interface InputRecord {
  /** The document text (for several text columns or fields, their values joined by one space). */
  text: string;
  /** The id from `--id` / `--id-field`, the id column of `idtext`, or the path in a directory; else undefined (the row number is the id). */
  id: string | undefined;
  /** The title column or field (`--title`), when one was named and the record has it. */
  title?: string;
  /** 0-based index of the record among the input's data records (skipped invalid records count too). */
  row: number;
  /** 1-based line where the record starts (the file's record number for directories, the 1-based row for Parquet). */
  line: number;
  /** 0-based index of the shard the record came from, when the input is several shards. */
  shard?: number;
  /** Parquet: the row group the record is in (its row in the file is `line` - 1). */
  rowGroup?: number;
  /** The record as it appears in the input, without its line break (only when `raw` was asked for). */
  raw?: string;
  /** The line break that ended the record in the input (`\n`, `\r\n`, …; '' at the end), with `raw`. */
  eol?: string;
}

/**
 * Where a record is, for a message about it: `{ position: 'row group 2, row 22' }` for Parquet
 * (whose rows have no lines), else `{ line }`.
 */
export function recordWhere(r: Pick<InputRecord, 'line' | 'rowGroup'>): { line: number | undefined; position: string | undefined } {
  return r.rowGroup !== undefined ? { line: undefined, position: `row group ${r.rowGroup}, row ${r.line - 1}` } : { line: r.line, position: undefined };
}

/** State shared by a reader and the code that drives it. */
export interface ReaderContext {
  /** Input name for messages. */
  readonly file: string;
  /** Keep each record's raw text. */
  readonly raw: boolean;
  /** Line numbers that are not valid UTF-8 (only filled when skipping invalid records). */
  readonly badLines: Set<number> | undefined;
  /** The skip statistics (and notes such as records spanning lines), reported in the summary. */
  readonly stats: SkipStats;
  /**
   * Reports an invalid record: throws an {@link InputError} unless invalid records are skipped.
   * `line` is a line number, or a position in words (`row group 2, row 17`); `file` overrides the
   * input name (a file inside a directory input); `records` is how many records the problem costs
   * (a whole Parquet row group, say).
   */
  invalid(line: number | string | undefined, reason: string, file?: string, records?: number): void;
}

/** Counters of skipped records. */
export interface SkipStats {
  /** Records skipped. */
  count: number;
  /** The first few problems, for the summary. */
  examples: InputError[];
  /** Records that span several lines (quoted line breaks in CSV, or TSV read with quotes). */
  multiline?: number;
  /** Where the first of those starts. */
  firstMultiline?: string;
  /** Records skipped per file (the shard, or the file inside a directory), in the order first met. */
  perFile?: Map<string, number>;
}

/**
 * What a read skipped, as its warning names it: how many records, the first problem (its file,
 * line and reason), the count per file when the input is several files, and the records that
 * span several lines. A sharded job builds one from its tasks' markers.
 */
export interface SkipReport {
  count: number;
  /** The first problem's message, or undefined when not known (the markers of an older job). */
  first: string | undefined;
  /** Records skipped per file, in input order; only when the input is several files. */
  perFile?: ReadonlyMap<string, number>;
  multiline?: number;
  firstMultiline?: string;
}

/** The {@link SkipReport} of `skips`; `several`: the input is several shards (each file is then named). */
export function skipReport(skips: SkipStats, several: boolean): SkipReport {
  const per = skips.perFile;
  return {
    count: skips.count,
    first: skips.examples[0]?.message,
    ...(per && (per.size > 1 || several) ? { perFile: per } : {}),
    multiline: skips.multiline,
    firstMultiline: skips.firstMultiline,
  };
}

/** A context that throws on the first invalid record, or counts and skips them all. */
export function makeContext(file: string, raw: boolean, skipInvalid: boolean, skips: SkipStats): ReaderContext {
  return {
    file,
    raw,
    badLines: skipInvalid ? new Set<number>() : undefined,
    stats: skips,
    invalid(line, why, where, records = 1) {
      // A reason may quote the input (JSON.parse quotes the line's start): short and escaped.
      const reason = excerpt(why, 500);
      const e = typeof line === 'string' ? new InputError(where ?? file, undefined, reason, line) : new InputError(where ?? file, line, reason);
      if (!skipInvalid) throw e;
      skips.count += records;
      skips.perFile ??= new Map();
      skips.perFile.set(e.file, (skips.perFile.get(e.file) ?? 0) + records);
      if (skips.examples.length < 5) skips.examples.push(e);
    },
  };
}
