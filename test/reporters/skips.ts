/**
 * node:test reporter (used by `npm test` next to spec): at the end of the run, lists every skipped
 * test with its file and reason, and prints one plain closing line, "tests: N passed, N failed,
 * N skipped". Under NEARDUP_REQUIRE_ALL=1 (CI) any skip fails the run, so CI always runs everything.
 *
 * A Transform (like the spec reporter) that pushes its summary when the runner's last summary
 * diagnostic (duration_ms) arrives: `npm test` uses --test-force-exit, which ends the process right
 * after the run, before an async-generator reporter would see the end of its input.
 */
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';

interface TestEventData {
  name?: string;
  nesting?: number;
  file?: string;
  skip?: string | boolean;
  message?: string;
}

interface TestEvent {
  type: string;
  data: TestEventData;
}

interface Skip {
  file: string;
  name: string;
  reason: string;
}

/** The reporter: collects skips and the run's totals, prints the summary once. */
class SkipSummary extends Transform {
  private readonly skipped: Skip[] = [];
  private readonly counts: Record<string, number> = {};
  private done = false;

  constructor() {
    super({ writableObjectMode: true });
  }

  override _transform(event: TestEvent, _enc: BufferEncoding, callback: TransformCallback): void {
    const d = event.data;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && d.skip !== undefined && d.skip !== false) {
      this.skipped.push({ file: d.file ? path.basename(d.file) : '?', name: d.name ?? '?', reason: typeof d.skip === 'string' ? d.skip : '(no reason given)' });
    }
    // The run's own totals, reported as diagnostics of the outermost level; duration_ms comes last.
    if (event.type === 'test:diagnostic' && d.nesting === 0 && d.message) {
      const m = /^(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(d.message);
      if (m) this.counts[m[1]!] = Number(m[2]);
      if (/^duration_ms /.test(d.message)) this.finish();
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    this.finish();
    callback();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.push(summary(this.skipped, this.counts));
    if (this.skipped.length > 0 && process.env.NEARDUP_REQUIRE_ALL === '1') process.exitCode = 1;
  }
}

/** The text printed at the end: the skips grouped by file and reason, and the closing line. */
function summary(skipped: Skip[], counts: Record<string, number>): string {
  let out = '\n';
  if (skipped.length > 0) {
    // One line per file and reason: a file whose tests all need redis-server says so once.
    const groups = new Map<string, { file: string; reason: string; names: string[] }>();
    for (const s of skipped) {
      const key = `${s.file}\0${s.reason}`;
      const g = groups.get(key) ?? { file: s.file, reason: s.reason, names: [] };
      g.names.push(s.name);
      groups.set(key, g);
    }
    out += `skipped ${skipped.length} test${skipped.length === 1 ? '' : 's'} in ${new Set(skipped.map((s) => s.file)).size} file(s):\n`;
    for (const g of groups.values()) out += `  ${g.file}: ${g.names.length} skipped: ${g.reason}\n`;
    if (process.env.NEARDUP_REQUIRE_ALL === '1') out += 'NEARDUP_REQUIRE_ALL=1: skipped tests fail this run (CI must run everything)\n';
  } else {
    out += 'skipped suites: none\n';
  }
  const pass = counts.pass ?? 0;
  const fail = (counts.fail ?? 0) + (counts.cancelled ?? 0);
  // A skipped describe() counts as a skip here, though the runner's own total leaves it out.
  out += `tests: ${pass} passed, ${fail} failed, ${Math.max(counts.skipped ?? 0, skipped.length)} skipped\n`;
  return out;
}

/** node:test loads the default export: a stream of events in, text out. */
export default new SkipSummary();
