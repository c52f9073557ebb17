/**
 * The other commands that read an input, given a named pipe without an extension (as
 * `<(zcat x.gz)` is /dev/fd/63): `report`, `bench` and `dedup --against` (its input, its reference,
 * or both) copy it first and answer as for the same bytes in a regular file at the same path. They
 * died with `ESPIPE: invalid seek` (exit 1): a format sniffed by a positional read. `compare`,
 * `index restore` and `index remove` (ids one per line) read a pipe as it comes, and are checked
 * too. Dedup, spans and index add|query|remove --column: ./pipe-input.test.ts, ./pipe-several.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fixtures, neardup, tmpDir, type Run } from '../cliUtil.js';
import { throughFifos } from '../helpers/fifos.js';

let dir: string;
before(() => {
  dir = tmpDir();
  const bodies = fs.readFileSync(path.join(fixtures, 'docs.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) =>
    (JSON.parse(l) as { body: { text: string } }).body.text
  );
  // Extensionless, as /dev/fd/63: the format is sniffed from the bytes.
  fs.writeFileSync(path.join(dir, 'new'), bodies.map((t, i) => JSON.stringify({ id: `n${i}`, text: `${t} again` }) + '\n').join(''));
  fs.writeFileSync(path.join(dir, 'old'), bodies.map((t, i) => JSON.stringify({ id: `o${i}`, text: t }) + '\n').join(''));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** JSON without what differs from run to run (timings, the time of day). */
function steady(json: string): unknown {
  return JSON.parse(json, (k, v: unknown) => (['generatedAt', 'timings', 'seconds', 'speedup'].includes(k) ? undefined : v));
}

/** Every file `args` names after `--out`, `--data` or `--removed`, read (then removed, for the next run). */
function outputs(args: readonly string[]): Record<string, string> {
  const got: Record<string, string> = {};
  args.forEach((a, i) => {
    if (!['--out', '--data', '--removed'].includes(a)) return;
    const f = path.join(dir, args[i + 1]!);
    got[a] = fs.readFileSync(f, 'utf8');
    fs.rmSync(f);
  });
  return got;
}

/** The run on regular files, then with `pipes` as FIFOs: the same exit code, stdout and output files (`norm`: compared as normalized). */
async function assertSameAnswer(args: string[], pipes: string[], norm: (s: string) => unknown = (s) => s): Promise<Run> {
  const what = `${args.join(' ')} (pipes: ${pipes.join(', ')})`;
  const want = neardup(args, { cwd: dir });
  assert.equal(want.code, 0, `${what}: ${want.stderr}`);
  const wantFiles = outputs(args);
  const got = await throughFifos(dir, args, pipes);
  assert.equal(got.code, 0, `${what}: ${got.stderr}`);
  assert.deepEqual(norm(got.stdout), norm(want.stdout), what);
  const gotFiles = outputs(args);
  assert.deepEqual(Object.keys(gotFiles), Object.keys(wantFiles), what);
  for (const k of Object.keys(wantFiles)) assert.deepEqual(norm(gotFiles[k]!), norm(wantFiles[k]!), `${what}: ${k}`);
  return got;
}

test('report of a FIFO: the report data of the file', async () => {
  // The page embeds its timings too: the data says what it shows.
  const norm = (s: string): unknown => (s.startsWith('{') ? steady(s) : /^<!doctype html>/i.test(s) ? 'a page' : s);
  await assertSameAnswer(['report', 'new', '--id-field', 'id', '-q', '--out', 'r.html', '--data', 'r.json'], ['new'], norm);
});

test('bench of a FIFO: the measures of the file', async () => {
  await assertSameAnswer(['bench', 'new', '--id-field', 'id', '-q', '--json'], ['new'], steady);
});

test('dedup --against with a FIFO as the input, the reference or both: every output of the files', async () => {
  for (
    const mode of [
      ['--output', 'pairs'],
      ['--output', 'dedup', '--removed', 'removed.tsv'],
      ['--output', 'annotate'],
      ['--output', 'dedup', '--out', 'kept.jsonl'],
    ]
  ) {
    const args = ['dedup', 'new', '--against', 'old', '--id-field', 'id', '-q', ...mode];
    for (const pipes of [['new'], ['old'], ['new', 'old']]) await assertSameAnswer(args, pipes);
  }
  // A bad record of the piped reference is named by the pipe and its line (exit 2).
  const good = fs.readFileSync(path.join(dir, 'old'));
  fs.appendFileSync(path.join(dir, 'old'), '{"id": broken}\n');
  try {
    const bad = await throughFifos(dir, ['dedup', 'new', '--against', 'old', '--id-field', 'id'], ['old']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /^neardup: old:\d+: invalid JSON/m);
    assert.doesNotMatch(bad.stderr, /neardup-\w+\/|\n\s+at /, 'not the copy, no stack trace');
  } finally {
    fs.writeFileSync(path.join(dir, 'old'), good);
  }
});

test('compare, index restore and index remove of a FIFO: what the file gives', async () => {
  await assertSameAnswer(['compare', 'new', 'old'], ['new', 'old']);
  const store = (n: string): string => `sqlite:${path.join(dir, `${n}.db`)}`;
  assert.equal(neardup(['index', 'add', 'old', '--id-field', 'id', '--store', store('a'), '-q'], { cwd: dir }).code, 0);
  assert.equal(neardup(['index', 'snapshot', '--store', store('a'), '--out', 'snap'], { cwd: dir }).code, 0);
  const restored = await throughFifos(dir, ['index', 'restore', 'snap', '--store', store('b')], ['snap']);
  assert.equal(restored.code, 0, restored.stderr);
  assert.match(restored.stdout, /^\d+ documents restored/);
  fs.writeFileSync(path.join(dir, 'ids'), 'o0\no1\n');
  const removed = await throughFifos(dir, ['index', 'remove', 'ids', '--store', store('b')], ['ids']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout + removed.stderr, /^2 documents removed/m);
});
