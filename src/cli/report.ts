/**
 * What the CLI tells the user on stderr: summaries, --verbose stage timings, progress bars.
 * stdout is kept for results (and for the --json summary).
 * @module
 */
import type { Writable } from 'node:stream';
import { s3Display } from '../io/s3/staging.js';
import { createProgress, progressEnabled, type Progress, type ProgressUnit } from './progress.js';

/** The logging flags every command has. */
export interface LogFlags {
  /** No summary, no progress. */
  quiet?: boolean;
  /** Stage timings as they happen, and more detail in the summary. */
  verbose?: boolean;
  /** A machine-readable summary on stdout instead of the human one on stderr. */
  json?: boolean;
}

/**
 * Formats an integer with thousands separators (1,234,567), as `toLocaleString('en-US')` does, by
 * hand: the first toLocaleString call loads ICU's locale data (~25 ms of every CLI run's start).
 */
export function int(n: number): string {
  const r = Math.round(n);
  if (!Number.isSafeInteger(r)) return r.toLocaleString('en-US');
  const digits = String(Math.abs(r));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += ',' + digits.slice(i, i + 3);
  return r < 0 ? '-' + out : out;
}

/** Formats milliseconds as "12 ms" or "1.23 s". */
export function ms(t: number): string {
  return t < 1000 ? `${t < 10 ? t.toFixed(1) : Math.round(t)} ms` : `${(t / 1000).toFixed(2)} s`;
}

/** Writes human-readable output to stderr according to the flags. */
export class Reporter {
  readonly flags: Required<LogFlags>;
  private readonly err: Writable;
  private readonly out: Writable;
  private readonly t0 = performance.now();
  private readonly showProgress: boolean;

  constructor(flags: LogFlags, err: Writable = process.stderr, out: Writable = process.stdout) {
    this.flags = { quiet: flags.quiet ?? false, verbose: (flags.verbose ?? false) && !flags.quiet, json: flags.json ?? false };
    this.err = err;
    this.out = out;
    this.showProgress = progressEnabled(err as { isTTY?: boolean }, this.flags.quiet);
  }

  /** A summary line (suppressed by --quiet and by --json). */
  summary(line: string): void {
    if (!this.flags.quiet && !this.flags.json) this.err.write(s3Display(line) + '\n');
  }

  /** A warning: shown unless --quiet. */
  warn(line: string): void {
    if (!this.flags.quiet) this.err.write(`neardup: warning: ${s3Display(line)}\n`);
  }

  /** A --verbose line, stamped with the time since start. */
  verbose(line: string): void {
    if (this.flags.verbose) this.err.write(`[${((performance.now() - this.t0) / 1000).toFixed(2).padStart(7)} s] ${s3Display(line)}\n`);
  }

  /** Prints the --json summary on stdout. */
  json(value: unknown): void {
    this.out.write(s3Display(JSON.stringify(value, null, 2)) + '\n');
  }

  /** A progress bar for a stage (a no-op unless stderr is a TTY and not --quiet). */
  progress(label: string, unit: ProgressUnit, total: number | undefined): Progress {
    return createProgress({ enabled: this.showProgress, stream: this.err }, label, unit, total);
  }

  /** Runs a stage, logging its time under --verbose; returns its result and duration. */
  async stage<T>(name: string, fn: () => Promise<T> | T, detail?: (r: T, t: number) => string): Promise<{ value: T; ms: number }> {
    const a = performance.now();
    const value = await fn();
    const t = performance.now() - a;
    this.verbose(`${name}: ${ms(t)}${detail ? ` (${detail(value, t)})` : ''}`);
    return { value, ms: t };
  }
}
