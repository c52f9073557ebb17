/**
 * An input that is a pipe, not a file (a FIFO, `<(zcat x.gz)`'s /dev/fd/N): `neardup dedup` and
 * `neardup spans` read it once, into a copy, and answer as for the file itself, every output and
 * route; its records' errors name it. It once failed with `ESPIPE: invalid seek` (a format sniffed by
 * a positional read).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { fixtures, neardup, tmpDir, type Run } from '../cliUtil.js';

let dir: string;
before(() => {
  dir = tmpDir();
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** `neardup args…` with `{in}` read from a fresh FIFO that a writer process fills with `bytes`. */
async function throughFifo(args: readonly string[], bytes: Buffer, name = 'in'): Promise<Run> {
  const fifo = path.join(dir, `${name}-${Math.random().toString(36).slice(2)}`);
  execFileSync('mkfifo', [fifo]);
  fs.writeFileSync(`${fifo}.src`, bytes);
  // The writer blocks until neardup opens the FIFO; a run that never opens it leaves it to be killed.
  const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', `${fifo}.src`, fifo], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => writer.once('exit', () => resolve()));
  try {
    return neardup(args.map((a) => a.replace('{in}', fifo)), { cwd: dir });
  } finally {
    writer.kill();
    await exited;
    fs.rmSync(fifo, { force: true });
    fs.rmSync(`${fifo}.src`, { force: true });
  }
}

/** Documents with near duplicates (the fixture's texts under `text`, each also lightly edited). */
const docs = Buffer.from(
  fs.readFileSync(path.join(fixtures, 'docs.jsonl'), 'utf8').split('\n').filter((l) => l !== '').flatMap((l, i) => {
    const body = (JSON.parse(l) as { body: { text: string } }).body.text;
    return [JSON.stringify({ id: `a${i}`, text: body }), JSON.stringify({ id: `b${i}`, text: `${body} again` })];
  }).join('\n') + '\n',
);

test('dedup of a FIFO: every output the file gives, plain and gzipped', async () => {
  for (
    const extra of [
      ['--output', 'pairs'],
      ['--output', 'clusters'],
      ['--output', 'dedup'],
      ['--output', 'annotate'],
      ['--output', 'dedup', '--stream'],
      ['--output', 'dedup', '--exact'],
    ]
  ) {
    const args = ['dedup', '{in}', '--id-field', 'id', '-q', ...extra];
    fs.writeFileSync(path.join(dir, 'docs.jsonl'), docs);
    const want = neardup(args.map((a) => a.replace('{in}', 'docs.jsonl')), { cwd: dir });
    assert.equal(want.code, 0, want.stderr);
    assert.ok(want.stdout.length > 0, extra.join(' '));
    for (const bytes of [docs, gzipSync(docs)]) {
      const got = await throughFifo(args, bytes);
      assert.equal(got.code, 0, `${extra.join(' ')}: ${got.stderr}`);
      assert.equal(got.stdout, want.stdout, extra.join(' '));
    }
  }
});

test("spans of a FIFO: the file's output", async () => {
  const text = Buffer.from(
    ['one\\nshared line here\\ntwo', 'three\\nshared line here', 'shared line here\\nfour'].map((t, i) => `{"id":${i},"text":"${t}"}\n`).join(''),
  );
  fs.writeFileSync(path.join(dir, 'spans.jsonl'), text);
  const args = ['spans', '{in}', '--unit', 'line', '--id-field', 'id', '-q'];
  const want = neardup(args.map((a) => a.replace('{in}', 'spans.jsonl')), { cwd: dir });
  assert.equal(want.code, 0, want.stderr);
  assert.notEqual(want.stdout, text.toString(), 'a line is cut');
  const got = await throughFifo(args, text);
  assert.equal(got.code, 0, got.stderr);
  assert.equal(got.stdout, want.stdout);
});

test('a bad record of a FIFO is named by the FIFO and its line (exit 2, no stack trace)', async () => {
  const got = await throughFifo(['dedup', '{in}', '--id-field', 'id', '--output', 'dedup'], Buffer.concat([docs, Buffer.from('{"id": broken}\n')]), 'bad');
  assert.equal(got.code, 2, got.stderr);
  assert.match(got.stderr, /^neardup: \S*bad-\w+:\d+: invalid JSON/m);
  assert.doesNotMatch(got.stderr, /\n\s+at /);
});
