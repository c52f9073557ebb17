/**
 * The progress bars of src/cli/progress.ts: the ETA is a time or `--`, never cli-progress's
 * `INF`/`NULL` cut to two characters (`ETA NFs`, #48); and dedup's passes that read the input
 * again, the keep policy's and the copy's (#48), have bars like the others: only when asked for
 * (a terminal, here NEARDUP_PROGRESS=always), never with --quiet.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { createProgress, formatEta } from '../../src/cli/progress.js';
import { tmpDir } from '../cliUtil.js';
import { jsonl, plantedDocs } from '../helpers/shards.js';
import { neardupAsync } from '../helpers/procs.js';

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
  const bar = createProgress({ enabled: true, stream }, 'read', 'bytes', 1e6);
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

const dir = tmpDir();
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The labels of the bars a run drew, in order, each once. */
function barsOf(stderr: string): string[] {
  const labels = [...stderr.matchAll(/^([a-z]+) +\[/gm)].map((m) => m[1]!);
  return labels.filter((l, i) => labels.indexOf(l) === i);
}

test('dedup: the keep and write passes have bars when progress is on, none with -q or off a terminal (property)', async () => {
  const docs = plantedDocs(3000, 0.3, 48).map((d, i) => ({ ...d, score: i % 17 }));
  fs.writeFileSync(path.join(dir, 'in.jsonl'), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'ref.jsonl'), jsonl(plantedDocs(300, 0.3, 49, 'r')));
  let n = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('pairs', 'clusters', 'dedup', 'annotate'),
      fc.constantFrom('first', 'longest', 'max:score', 'none'),
      fc.constantFrom('memory', 'stream', 'exact', 'against'),
      fc.boolean(),
      fc.constantFrom('always', 'quiet', 'off'),
      async (output, keep, route, dryRun, progress) => {
        fc.pre(!(route === 'exact' && keep !== 'first') && !(route === 'against' && (keep !== 'first' || output === 'clusters')));
        const dry = dryRun && output === 'dedup';
        const args = ['dedup', 'in.jsonl', '--id-field', 'id', '--output', output, '--keep', keep];
        if (route === 'stream') args.push('--stream');
        if (route === 'exact') args.push('--exact');
        if (route === 'against') args.push('--against', 'ref.jsonl');
        args.push(...(dry ? ['--dry-run', '--removed', `r${n}.tsv`] : ['--out', `o${n}.jsonl`]));
        n++;
        if (progress === 'quiet') args.push('-q');
        const r = await neardupAsync(args, dir, progress === 'off' ? {} : { NEARDUP_PROGRESS: 'always' });
        assert.equal(r.code, 0, r.stderr);
        const bars = barsOf(r.stderr);
        if (progress !== 'always') {
          assert.deepEqual(bars, [], `${progress}: no bars`);
          return;
        }
        const ranks = output !== 'pairs' && (keep === 'longest' || keep === 'max:score');
        const copies = (output === 'dedup' || output === 'annotate') && !dry;
        assert.equal(bars.includes('keep'), ranks, `keep bar: ${bars.join(' ')}`);
        assert.equal(bars.includes('write'), copies, `write bar: ${bars.join(' ')}`);
        // In the order the passes run, after the ones before them.
        if (ranks && copies) assert.ok(bars.indexOf('keep') < bars.indexOf('write'), bars.join(' '));
        if (copies) {
          const last = r.stderr.split('\n').filter((l) => l.startsWith('write ')).pop()!;
          assert.match(last, /\] 100% · [\d.k]+ docs\/s · ETA 0s/, 'the write bar ends full');
        }
      },
    ),
    { numRuns: 24, seed: 48 },
  );
});
