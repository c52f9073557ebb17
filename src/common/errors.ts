/**
 * Errors caused by the user's input or invocation, as opposed to bugs: the CLI prints their message
 * (never a stack trace) and exits with code 2.
 * @module
 */

/**
 * The option that would fix an error, in the library's terms (`text`: which columns or fields hold
 * the text, `value: 'field'` for JSONL fields; `format`: the input format, with the value to try when there is one; `out`: where the
 * output goes). The message says what is wrong and where; a front end adds how to set the option
 * its own way (the CLI: `(use --text)`, `(use --format dir)`).
 */
export interface InputFix {
  option: 'text' | 'format' | 'out' | 'tagPrefix';
  value?: string;
}

/** A bad command line or bad options: unknown option value, conflicting options, missing argument. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The option that would fix it, when one does. */
  readonly fix: InputFix | undefined;

  constructor(message: string, fix?: InputFix) {
    super(message);
    this.fix = fix;
  }
}

/**
 * Bad input data, located as precisely as possible: the file, and the line when there is one, or
 * a position in words for formats without lines (`row group 2, row 2017` in a Parquet file).
 */
export class InputError extends Error {
  override readonly name = 'InputError';
  /** The file (or `<stdin>`). */
  readonly file: string;
  /** 1-based line number, when the problem has one. */
  readonly line: number | undefined;
  /** A position without a line number (Parquet: row group and row), when the problem has one. */
  readonly position: string | undefined;
  /** The problem without its location. */
  readonly reason: string;

  /** The option that would fix it, when one does. */
  readonly fix: InputFix | undefined;

  /**
   * Why these parameters: this is a public class (`neardup` exports it), constructed positionally
   * by users' code and ~50 call sites here, location first as the message reads (`file:line: reason`);
   * an options object would break every caller for no gain in clarity.
   */
  constructor(file: string, line: number | undefined, reason: string, position?: string, fix?: InputFix) {
    super(line !== undefined ? `${file}:${line}: ${reason}` : position !== undefined ? `${file}: ${position}: ${reason}` : `${file}: ${reason}`);
    this.file = file;
    this.line = line;
    this.position = position;
    this.reason = reason;
    this.fix = fix;
  }
}

/** True for errors whose message is meant for the user as is (exit code 2). */
export function isUserError(e: unknown): e is UsageError | InputError {
  return e instanceof UsageError || e instanceof InputError;
}

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `s` safe to print in an error message: control characters (C0, DEL, C1), line separators,
 * bidirectional overrides and lone surrogates written as `\uXXXX`, and at most `max` characters
 * (then `…`). Messages quote input (a bad line's start, field names) only through this.
 */
export function excerpt(s: string, max = 200): string {
  const cut = s.length > max ? s.slice(0, max) : s;
  const safe = cut.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return s.length > max ? `${safe}…` : safe;
}
