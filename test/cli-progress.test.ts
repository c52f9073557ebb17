/**
 * The progress bars of src/cli/progress.ts: the ETA is a time or `--`, never cli-progress's
 * `INF`/`NULL` cut to two characters (`ETA NFs`, #48).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { createProgress, formatEta } from '../src/cli/progress.js';

const ETA = /^(--|\d+s|\d+m[0-5]\ds|\d+h[0-5]\dm)$/;

test('formatEta: a time or --, for any remaining amount and rate (zero, NaN, infinite included)', () => {
  const num = fc.oneof(fc.double(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1e-300, 1e300));
  fc.assert(
    fc.property(num, num, (remaining, perSecond) => {
      const s = formatEta(remaining, perSecond);
      assert.match(s, ETA, `${remaining} at ${perSecond}/s: ${s}`);
    }),
    { numRuns: 2000 },
  );
  assert.equal(formatEta(100, 0), '--');
  assert.equal(formatEta(0, 0), '0s');
  assert.equal(formatEta(90, 1), '1m30s');
  assert.equal(formatEta(7500, 1), '2h05m');
});

test('a bar that has made no progress (a stall) says ETA --, not NFs', async () => {
  let out = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      out += String(chunk);
      cb();
    },
  });
  const bar = createProgress(true, stream, 'read', 'bytes', 1e6);
  // Past one redraw (once a second without a TTY), with nothing done: cli-progress's own ETA was `NFs` here.
  for (let i = 0; i < 12; i++) {
    bar.update(0, 0);
    await new Promise((r) => setTimeout(r, 100));
  }
  bar.stop();
  assert.ok(out.split('\n').filter((l) => l.includes('ETA')).length >= 2, out);
  assert.match(out, /ETA --/);
  assert.doesNotMatch(out, /NF|NULL|INF/);
});
