/**
 * Errors caused by the user's input or invocation, as opposed to bugs: the CLI prints their message
 * (never a stack trace) and exits with code 2.
 * @module
 */

/** A bad command line: unknown option value, conflicting options, missing argument. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Bad input data, located as precisely as possible (file, and line when there is one). */
export class InputError extends Error {
  override readonly name = 'InputError';
  /** The file (or `<stdin>`). */
  readonly file: string;
  /** 1-based line number, when the problem has one. */
  readonly line: number | undefined;
  /** The problem without its location. */
  readonly reason: string;

  constructor(file: string, line: number | undefined, reason: string) {
    super(line === undefined ? `${file}: ${reason}` : `${file}:${line}: ${reason}`);
    this.file = file;
    this.line = line;
    this.reason = reason;
  }
}

/** True for errors whose message is meant for the user as is (exit code 2). */
export function isUserError(e: unknown): e is UsageError | InputError {
  return e instanceof UsageError || e instanceof InputError;
}
