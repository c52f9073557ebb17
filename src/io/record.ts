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
  /** The title column or field (`--title`), when one was named and the record has it. */
  title?: string;
  /** 0-based index of the record among the input's data records (skipped invalid records count too). */
  row: number;
  /** 1-based line where the record starts (the file's record number for directories). */
  line: number;
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
}

/** A context that throws on the first invalid record, or counts and skips them all. */
export function makeContext(file: string, raw: boolean, skipInvalid: boolean, skips: SkipStats): ReaderContext {
  return {
    file,
    raw,
    badLines: skipInvalid ? new Set<number>() : undefined,
    invalid(line, reason, where) {
      const e = new InputError(where ?? file, line, reason);
      if (!skipInvalid) throw e;
      skips.count++;
      if (skips.examples.length < 5) skips.examples.push(e);
    },
  };
}
