/**
 * Named pipes among several inputs (`neardup dedup a.jsonl <(zcat b.jsonl.gz)`, `neardup spans …`):
 * each pipe is copied to a temp file first, so every output mode answers as for the same bytes in
 * regular files at the same paths (the same stdout, the same output shards under --out DIR), its
 * records' errors name the pipe as typed, and the copies are gone when the run ends: after success,
 * after an error, and after SIGTERM while a pipe is still being copied. They were once refused:
 * some outputs read the inputs twice and would wait on a pipe for ever.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fixtures, neardup, tmpDir, type Run } from '../cliUtil.js';
import { neardupChild } from '../helpers/procs.js';
import { freshTmp, throughFifos as fifoRun, toFifos } from '../helpers/fifos.js';

let dir: string;
before(() => {
  dir = tmpDir();
  // Near duplicates across the two files: b's documents are a's, lightly edited.
  const bodies = fs.readFileSync(path.join(fixtures, 'docs.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) =>
    (JSON.parse(l) as { body: { text: string } }).body.text
  );
  fs.writeFileSync(path.join(dir, 'a.jsonl'), bodies.map((t, i) => JSON.stringify({ id: `a${i}`, text: t }) + '\n').join(''));
  fs.writeFileSync(path.join(dir, 'b.jsonl'), bodies.map((t, i) => JSON.stringify({ id: `b${i}`, text: `${t} again` }) + '\n').join(''));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** `neardup args` (each `{out}` replaced by `out`) with the inputs of `pipes` read from FIFOs. */
async function throughFifos(args: readonly string[], pipes: readonly string[], out: string): Promise<Run> {
  return fifoRun(dir, args.map((a) => a.replace('{out}', out)), pipes);
}

/** Every file under `d` (relative path → bytes), or undefined when `d` does not exist. */
function tree(d: string): Record<string, string> | undefined {
  if (!fs.existsSync(d)) return undefined;
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(d, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) {
      const p = path.join(e.parentPath, e.name);
      out[path.relative(d, p)] = fs.readFileSync(p, 'utf8');
    }
  }
  return out;
}

let outs = 0;
/** The run with regular files, then with `pipes` as FIFOs: the same exit code, stdout and output files. */
async function assertSameAnswer(args: readonly string[], pipes: readonly string[]): Promise<void> {
  const what = `${args.join(' ')} (pipes: ${pipes.join(', ')})`;
  const wantOut = path.join(dir, `out-${outs++}`);
  const want = neardup(args.map((a) => a.replace('{out}', wantOut)), { cwd: dir });
  assert.equal(want.code, 0, `${what}: ${want.stderr}`);
  if (args.includes('{out}')) assert.ok(Object.keys(tree(wantOut) ?? {}).length >= 2, `${what}: output shards written`);
  const gotOut = path.join(dir, `out-${outs++}`);
  const got = await throughFifos(args, pipes, gotOut);
  assert.equal(got.code, 0, `${what}: ${got.stderr}`);
  assert.equal(got.stdout, want.stdout, what);
  assert.deepEqual(tree(gotOut), tree(wantOut), what);
}

const MODES: string[][] = [
  ['--output', 'pairs'],
  ['--output', 'pairs', '--stream'],
  ['--output', 'clusters'],
  ['--output', 'clusters', '--keep', 'longest'],
  ['--output', 'dedup', '--out', '{out}'],
  ['--output', 'annotate', '--out', '{out}'],
  ['--output', 'dedup', '--out', '{out}', '--stream'],
  ['--output', 'dedup', '--out', '{out}', '--exact'],
];

test('dedup of several inputs, one or two of them FIFOs: every output mode answers as for the files', async () => {
  for (const mode of MODES) {
    const args = ['dedup', 'a.jsonl', 'b.jsonl', '--id-field', 'id', '-q', ...mode];
    const sample = neardup(args.map((a) => a.replace('{out}', path.join(dir, 'sample'))), { cwd: dir });
    assert.equal(sample.code, 0, sample.stderr);
    fs.rmSync(path.join(dir, 'sample'), { recursive: true, force: true });
    assert.ok(sample.stdout.length > 0 || mode.includes('{out}'), `${mode.join(' ')} answers something`);
    for (const pipes of [['b.jsonl'], ['a.jsonl', 'b.jsonl']]) await assertSameAnswer(args, pipes);
  }
});

test('spans of several inputs, one or two of them FIFOs: the output shards of the files', async () => {
  const args = ['spans', 'a.jsonl', 'b.jsonl', '--unit', 'sentence', '--window', '1', '--id-field', 'id', '-q', '--out', '{out}'];
  for (const pipes of [['b.jsonl'], ['a.jsonl', 'b.jsonl']]) await assertSameAnswer(args, pipes);
});

test('a bad record of a FIFO among several inputs is named by the FIFO as typed and its line; the copies are removed', async () => {
  const good = fs.readFileSync(path.join(dir, 'b.jsonl'));
  fs.writeFileSync(path.join(dir, 'b.jsonl'), Buffer.concat([good, Buffer.from('{"id": broken}\n')]));
  try {
    const want = neardup(['dedup', 'a.jsonl', 'b.jsonl', '--id-field', 'id', '--output', 'pairs'], { cwd: dir });
    assert.equal(want.code, 2, want.stderr);
    const line = /b\.jsonl:(\d+): invalid JSON/.exec(want.stderr)?.[1];
    assert.ok(line, want.stderr);
    const got = await throughFifos(['dedup', 'a.jsonl', 'b.jsonl', '--id-field', 'id', '--output', 'pairs'], ['b.jsonl'], '');
    assert.equal(got.code, 2, got.stderr);
    assert.match(got.stderr, new RegExp(`^neardup: b\\.jsonl:${line}: invalid JSON`, 'm'));
    assert.doesNotMatch(got.stderr, /neardup-\w+\/|\n\s+at /, 'not the copy, no stack trace');
  } finally {
    fs.writeFileSync(path.join(dir, 'b.jsonl'), good);
  }
});

test('a FIFO given twice among several inputs is refused by name before it is read (exit 2)', async () => {
  const got = await throughFifos(['dedup', 'a.jsonl', 'b.jsonl', 'b.jsonl', '--output', 'pairs'], ['b.jsonl'], '');
  assert.equal(got.code, 2, got.stderr);
  assert.match(got.stderr, /^neardup: b\.jsonl is given twice/m);
});

test('SIGTERM while a FIFO among several inputs is being copied: no copy is left behind', async () => {
  const fifos = toFifos(dir, ['a.jsonl', 'b.jsonl'], true);
  const tmp = freshTmp(dir);
  try {
    const run = neardupChild(['dedup', 'a.jsonl', 'b.jsonl', '--output', 'pairs'], { cwd: dir, env: { TMPDIR: tmp } });
    // The first pipe's writer holds it open: the run waits, its first copy begun, until the signal.
    const t0 = Date.now();
    while (!fs.readdirSync(tmp).some((d) => fs.readdirSync(path.join(tmp, d)).some((f) => fs.statSync(path.join(tmp, d, f)).size > 0))) {
      assert.ok(Date.now() - t0 < 60_000 && run.child.exitCode === null, 'the run begins to copy the first pipe');
      await new Promise((r) => setTimeout(r, 20));
    }
    run.child.kill('SIGTERM');
    const r = await run.done;
    assert.equal(r.signal, 'SIGTERM', r.stderr);
    assert.deepEqual(fs.readdirSync(tmp), [], 'the copy is removed');
  } finally {
    await fifos.restore();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
