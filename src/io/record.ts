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
  /** 1-based line where the record starts (the file's record number for directories, the 1-based row for Parquet). */
  line: number;
  /** 0-based index of the shard the record came from, when the input is several shards. */
  shard?: number;
  /** The record as it appears in the input, without its line break (only when `raw` was asked for). */
  raw?: string;
}

/** State shared by a reader and the code that drives it. */
export interface ReaderContext {
  /** Input name for messages. */
  readonly file: string;
  /** Keep each record's raw text. */
  readonly raw: boolean;
  /** Line numbers that are not valid UTF-8 (only filled when skipping invalid records). */
  readonly badLines: Set<number> | undefined;
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
  /** Records skipped per file (the shard, or the file inside a directory), in the order first met. */
  perFile?: Map<string, number>;
}

/** A context that throws on the first invalid record, or counts and skips them all. */
export function makeContext(file: string, raw: boolean, skipInvalid: boolean, skips: SkipStats): ReaderContext {
  return {
    file,
    raw,
    badLines: skipInvalid ? new Set<number>() : undefined,
    invalid(line, reason, where, records = 1) {
      const e = typeof line === 'string' ? new InputError(where ?? file, undefined, reason, line) : new InputError(where ?? file, line, reason);
      if (!skipInvalid) throw e;
      skips.count += records;
      skips.perFile ??= new Map();
      skips.perFile.set(e.file, (skips.perFile.get(e.file) ?? 0) + records);
      if (skips.examples.length < 5) skips.examples.push(e);
    },
  };
}
