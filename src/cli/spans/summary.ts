/**
 * The summary of `neardup spans` and of `neardup job spans`: on stderr for people, or with --json on
 * stdout; a warning first about the invalid records skipped.
 * @module
 */
import { excerpt } from '../../common/errors.js';
import type { SpansFileResult } from '../../spans/file/file.js';
import { int, ms, type Reporter } from '../report.js';
import { warnSkips } from '../corpus.js';
import { SPANS_DEFAULTS } from '../../spans/options.js';

/** The flags the summary names. */
export interface SummaryFlags {
  unit: string;
  window?: number;
  minLength?: number;
  lengthUnit?: string;
  minDocs?: number;
  output: string;
  dryRun?: boolean;
  removed?: string;
  out?: string;
}

function pct(a: number, b: number): string {
  return b > 0 ? `${((100 * a) / b).toFixed(1)}%` : '0%';
}

/** Prints the summary of a run (`--json`: one object on stdout). */
export function printSpansSummary(reporter: Reporter, flags: SummaryFlags, r: SpansFileResult, t: number): void {
  warnSkips(reporter, r.skips);
  const s = r.summary;
  const unit = flags.unit === 'sentence'
    ? `sentence windows of ${flags.window ?? SPANS_DEFAULTS.window}`
    : flags.unit === 'substring'
    ? `${flags.minLength ?? SPANS_DEFAULTS.minLength}-${flags.lengthUnit === 'bytes' ? 'byte' : 'word'} windows`
    : `${flags.unit}s`;
  if (reporter.flags.json) {
    reporter.json({
      unit: flags.unit,
      ...(flags.unit === 'sentence' ? { window: flags.window ?? SPANS_DEFAULTS.window } : {}),
      ...(flags.unit === 'substring'
        ? { minLength: flags.minLength ?? SPANS_DEFAULTS.minLength, lengthUnit: flags.lengthUnit ?? SPANS_DEFAULTS.lengthUnit }
        : {}),
      mode: flags.minDocs !== undefined ? 'min-docs' : 'keep-first',
      ...(flags.minDocs !== undefined ? { minDocs: flags.minDocs } : {}),
      output: flags.dryRun ? null : flags.output,
      ...s,
      written: r.written,
      auditRows: r.auditRows,
      skipped: r.skipped,
      seconds: Math.round(t) / 1000,
    });
    return;
  }
  const mode = flags.minDocs !== undefined ? `units in ≥ ${flags.minDocs} documents removed everywhere` : 'keep-first';
  reporter.summary(
    `${int(s.documents)} documents (${r.format}), ${int(s.units)} ${unit} (${int(s.distinctUnits)} distinct, ${int(s.repeatedUnits)} repeated); ${mode}`,
  );
  reporter.summary(
    `removed ${int(s.unitsRemoved)} units, ${int(s.bytesRemoved)} of ${int(s.textBytes)} text bytes (${pct(s.bytesRemoved, s.textBytes)}); ${
      int(s.documentsChanged)
    } documents changed, ${int(s.documentsEmptied)} emptied, ${int(s.documentsDropped)} dropped`,
  );
  if (r.skipped > 0) reporter.summary(`skipped ${int(r.skipped)} invalid records`);
  if (s.top.length > 0) {
    reporter.summary('top repeated units (occurrences, documents):');
    for (const u of s.top) reporter.summary(`  ${String(u.count).padStart(7)} ${String(u.docs).padStart(7)}  ${excerpt(u.text, 80)}`);
  }
  const wrote = flags.dryRun ? 'dry run: no records written' : `${int(r.written)} records written (${flags.output}) to ${flags.out ?? 'stdout'}`;
  reporter.summary(`${wrote}${flags.removed !== undefined ? `; ${int(r.auditRows)} removed units listed in ${flags.removed}` : ''}`);
  reporter.summary(`time ${ms(t)}`);
}
