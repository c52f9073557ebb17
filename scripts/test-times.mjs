// node:test reporter: at the end of a run, each test file's time, longest first, then their sum. For
// finding the files that set the suite's length:
// `node scripts/test-tier.mjs all --test-reporter=scripts/test-times.mjs`.
// A file's time is its file-level test's duration where the run reports one (named by the file's
// path), else the sum of its top-level tests' durations (they run one after another in a file).
// Times taken at --test-concurrency=N beside other work are wall times under that load: compare
// files within one run.
import path from 'node:path';
import { Transform } from 'node:stream';

const files = new Map();
let done = false;

function fileOf(d) {
  return d.file.split(`${path.sep}dist${path.sep}test${path.sep}`).pop().replace(/\.test\.js$/, '');
}

function table() {
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms);
  const sum = rows.reduce((s, [, t]) => s + t.ms, 0);
  const sec = (ms) => (ms / 1000).toFixed(1).padStart(7);
  const lines = rows.map(([f, t], i) => `${String(i + 1).padStart(3)} ${sec(t.ms)} s  ${f}${t.failed ? '  (failed)' : ''}`);
  return `\nfile times, longest first:\n${lines.join('\n')}\n    ${sec(sum)} s  sum over ${rows.length} files\n`;
}

export default new Transform({
  writableObjectMode: true,
  transform(event, _enc, callback) {
    const d = event.data ?? {};
    if (d.file !== undefined && (event.type === 'test:pass' || event.type === 'test:fail') && d.nesting === 0) {
      const key = fileOf(d);
      let t = files.get(key);
      if (t === undefined) files.set(key, t = { ms: 0, failed: false, whole: false });
      if (event.type === 'test:fail') t.failed = true;
      if (d.name === d.file) {
        t.ms = d.details?.duration_ms ?? 0;
        t.whole = true;
      } else if (!t.whole) t.ms += d.details?.duration_ms ?? 0;
    }
    // Printed on the run's last diagnostic: with forceExit the process ends soon after it.
    if (event.type === 'test:diagnostic' && d.nesting === 0 && /^duration_ms /.test(d.message ?? '') && !done) {
      done = true;
      callback(null, table());
      return;
    }
    callback();
  },
});
