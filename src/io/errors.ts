/**
 * Errors caused by the user's input or invocation, as opposed to bugs: the CLI prints their message
 * (never a stack trace) and exits with code 2.
 * @module
 */

/** A bad command line: unknown option value, conflicting options, missing argument. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
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

  constructor(file: string, line: number | undefined, reason: string, position?: string) {
    super(line !== undefined ? `${file}:${line}: ${reason}` : position !== undefined ? `${file}: ${position}: ${reason}` : `${file}: ${reason}`);
    this.file = file;
    this.line = line;
    this.position = position;
    this.reason = reason;
  }
}

/** True for errors whose message is meant for the user as is (exit code 2). */
export function isUserError(e: unknown): e is UsageError | InputError {
  return e instanceof UsageError || e instanceof InputError;
}
