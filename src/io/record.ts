/**
 * The records readers produce, and the context they share.
 * @module
 */
import { InputError } from './errors.js';

/** One document read from an input. */
export interface InputRecord {
  /** The document text (for several text columns or fields, their values joined by one space). */
  text: string;
  /** The id from `--id` / `--id-field`, the id column of `idtext`, or the path in a directory; else undefined (the row number is the id). */
  id: string | undefined;
  /** 0-based index of the record among the input's data records (skipped invalid records count too). */
  row: number;
  /** 1-based line where the record starts (the file's record number for directories). */
  line: number;
  /** The record as it appears in the input, without its line break (only when `raw` was asked for). */
  raw?: string;
  /** The line break that ended the record in the input (`\n`, `\r\n`, …; '' at the end), with `raw`. */
  eol?: string;
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
   * `file` overrides the input name (a file inside a directory input).
   */
  invalid(line: number | undefined, reason: string, file?: string): void;
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
}

/** A context that throws on the first invalid record, or counts and skips them all. */
export function makeContext(file: string, raw: boolean, skipInvalid: boolean, skips: SkipStats): ReaderContext {
  return {
    file,
    raw,
    badLines: skipInvalid ? new Set<number>() : undefined,
    stats: skips,
    invalid(line, reason, where) {
      const e = new InputError(where ?? file, line, reason);
      if (!skipInvalid) throw e;
      skips.count++;
      if (skips.examples.length < 5) skips.examples.push(e);
    },
  };
}
