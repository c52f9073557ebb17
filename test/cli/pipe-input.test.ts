/**
 * An input that is a pipe, not a file (a FIFO, `<(zcat x.gz)`'s /dev/fd/N): `neardup dedup`,
 * `neardup spans`, `index add`, `index query` and `index remove --column` read it once, into a copy,
 * and answer as for the file itself, every output and route; its records' errors name it. It once
 * failed with `ESPIPE: invalid seek` (a format sniffed by a positional read). A sharded job (`job
 * dedup`, `job spans`, `job plan`, an `--against` shard) refuses a pipe by name (exit 2, nothing
 * planned): its tasks read their files more than once. Pipes among several inputs of one process:
 * ./pipe-several.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { fixtures, neardup, tmpDir, type Run } from '../cliUtil.js';
import { neardupChild } from '../helpers/procs.js';

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
    // Asynchronous, and killed past 2 minutes: a run that opens the FIFO twice waits for ever on the second.
    const run = neardupChild(args.map((a) => a.replace('{in}', fifo)), { cwd: dir });
    const timer = setTimeout(() => run.child.kill('SIGKILL'), 120_000);
    const r = await run.done;
    clearTimeout(timer);
    return { code: r.code ?? -1, stdout: r.stdout, stderr: r.signal ? `${r.stderr}\n(killed by ${r.signal}: it waited on the FIFO)` : r.stderr };
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

test('index add, index query and index remove --column of a FIFO: what the file gives, plain and gzipped', async () => {
  fs.writeFileSync(path.join(dir, 'docs.jsonl'), docs);
  let n = 0;
  const store = (): string => path.join(dir, `store-${n++}`);
  const add = ['index', 'add', '{in}', '--id-field', 'id', '-q'];
  const want = neardup([...add.map((a) => a.replace('{in}', 'docs.jsonl')), '--store', store()], { cwd: dir });
  assert.equal(want.code, 0, want.stderr);
  assert.ok(want.stdout.split('\n').length > 3, 'the later copies match the earlier documents');
  const queried = store();
  for (const bytes of [docs, gzipSync(docs)]) {
    const got = await throughFifo([...add, '--store', queried], bytes);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, want.stdout);
    fs.rmSync(queried, { recursive: true });
    const fresh = store();
    assert.equal((await throughFifo([...add, '--store', fresh], bytes)).code, 0);
    const q = ['index', 'query', '{in}', '--id-field', 'id', '--store', fresh, '-q'];
    const qWant = neardup(q.map((a) => a.replace('{in}', 'docs.jsonl')), { cwd: dir });
    assert.equal(qWant.code, 0, qWant.stderr);
    const qGot = await throughFifo(q, bytes);
    assert.equal(qGot.code, 0, qGot.stderr);
    assert.equal(qGot.stdout, qWant.stdout);
    const removed = await throughFifo(['index', 'remove', '{in}', '--column', 'id', '--store', fresh], bytes);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout + removed.stderr, /^(\d+) documents removed, 0 of \1 ids not indexed/m);
  }
  // A record of the pipe without an id is named by the pipe.
  const noIds = await throughFifo(['index', 'add', '{in}', '--store', store(), '-q'], docs, 'noid');
  assert.equal(noIds.code, 2, noIds.stderr);
  assert.match(noIds.stderr, /^neardup: \S*noid-\w+ has no ids/m);
  assert.doesNotMatch(noIds.stderr, /neardup-\w+\/|\n\s+at /, 'not the copy, no stack trace');
});

test('a sharded job refuses a FIFO by name: exit 2, nothing planned, no stack trace', async () => {
  fs.writeFileSync(path.join(dir, 'docs.jsonl'), docs);
  const cases: [string[], RegExp][] = [
    [['job', 'dedup', '{in}', '--id-field', 'id', '--local', '--work-dir', 'w-dedup', '--output', 'pairs'], /a sharded job's tasks read/],
    [['job', 'spans', '{in}', '--id-field', 'id', '--local', '--work-dir', 'w-spans', '--out-dir', 'o-spans'], /a sharded job's tasks read/],
    [['job', 'plan', 'docs.jsonl', '--against', '{in}', '--id-field', 'id', '--work-dir', 'w-plan'], /a sharded job's tasks read/],
  ];
  for (const [args, why] of cases) {
    const got = await throughFifo(args, docs, 'pipe');
    assert.equal(got.code, 2, `${args.join(' ')}: ${got.stderr}`);
    assert.match(got.stderr, /^neardup: \S*pipe-\w+ is a pipe, not a file: /);
    assert.match(got.stderr, why);
    assert.match(got.stderr, /write it to a file first/);
    assert.doesNotMatch(got.stderr, /ESPIPE|\n\s+at /);
  }
  assert.deepEqual(fs.readdirSync(dir).filter((f) => /^[wo]-/.test(f)), [], 'nothing planned or written');
});
