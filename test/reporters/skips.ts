/**
 * node:test reporter (used by `npm test` next to spec): at the end of the run, lists every skipped
 * test with its file and reason, and prints one plain closing line, "tests: N passed, N failed,
 * N skipped". Under NEARDUP_REQUIRE_ALL=1 (CI) any skip fails the run, so CI always runs everything.
 */
import path from 'node:path';

interface TestEventData {
  name?: string;
  nesting?: number;
  file?: string;
  skip?: string | boolean;
  message?: string;
  details?: { type?: string };
}

interface TestEvent {
  type: string;
  data: TestEventData;
}

/** The reporter: consumes the run's events, yields text once they end. */
export default async function* skipSummary(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const skipped: { file: string; name: string; reason: string }[] = [];
  const counts: Record<string, number> = {};
  for await (const event of source) {
    const d = event.data;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && d.skip !== undefined && d.skip !== false) {
      skipped.push({ file: d.file ? path.basename(d.file) : '?', name: d.name ?? '?', reason: typeof d.skip === 'string' ? d.skip : '(no reason given)' });
    }
    // The run's own totals, which the runner reports as diagnostics of the outermost level.
    if (event.type === 'test:diagnostic' && d.nesting === 0 && d.message) {
      const m = /^(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(d.message);
      if (m) counts[m[1]!] = Number(m[2]);
    }
  }
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
    if (process.env.NEARDUP_REQUIRE_ALL === '1') {
      out += 'NEARDUP_REQUIRE_ALL=1: skipped tests fail this run (CI must run everything)\n';
      process.exitCode = 1;
    }
  } else {
    out += 'skipped suites: none\n';
  }
  const pass = counts.pass ?? 0;
  const fail = (counts.fail ?? 0) + (counts.cancelled ?? 0);
  out += `tests: ${pass} passed, ${fail} failed, ${counts.skipped ?? skipped.length} skipped\n`;
  yield out;
}
