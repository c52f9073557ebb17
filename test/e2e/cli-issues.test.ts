/**
 * Issue 16 items 4–7, 9, 10 and index add's share of item 3: 5xx on stderr, outputs that alias an
 * input, duplicate ids, temp files on SIGINT/SIGTERM, store-spec and threshold errors, the add limit,
 * text/plain bodies.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { NearDupIndex } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';
import { neardup, tmpDir as newTmpDir } from '../cliUtil.js';
import { neardupAsync } from '../helpers/procs.js';

const cleanup: (() => Promise<unknown> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});
function tmpDir(): string {
  const d = newTmpDir();
  cleanup.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

const ISSUE_TSV = 'id\ttext\nr1\t"Bright flat near the station with garden\nr2\tsecond ad, a studio in Trastevere\nr3\tthird ad, office in EUR "B"\nr4\tfourth ad about a villa in Ostia\n';

test('item 3: dedup and index add read every row of the issue\'s TSV (no quote swallows the next lines)', () => {
  const dir = tmpDir();
  const q = path.join(dir, 'q.tsv');
  fs.writeFileSync(q, ISSUE_TSV);
  const r = neardup(['dedup', q, '--id', 'id', '--output', 'annotate']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /docs {8}4 from/);
  assert.equal(r.stdout.split('\n').filter(Boolean).length, 5);
  const add = neardup(['index', 'add', q, '--id', 'id', '--store', `sqlite:${path.join(dir, 'q.db')}`]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stderr, /added {7}4 documents/);
  // The opt-in quote-aware reading reports the bad quote with its line, exit 2.
  const quoted = neardup(['dedup', q, '--id', 'id', '--tsv-quotes']);
  assert.equal(quoted.code, 2);
  assert.match(quoted.stderr, /q\.tsv:2: a quoted field opened here is not closed properly/);
});

test('item 4: a 500 is written to stderr with its cause by default (no --log)', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  const lines: string[] = [];
  const app = buildApp(index, { errorLog: (l) => lines.push(l) });
  cleanup.push(() => app.close());
  (index as unknown as { query: () => never }).query = () => {
    throw new Error('disk on fire', { cause: new Error('EIO underneath') });
  };
  const r = await app.inject({ method: 'POST', url: '/v1/query', payload: { text: 'hello world' } });
  assert.equal(r.statusCode, 500);
  assert.ok(!r.body.includes('disk on fire'), 'the client sees no internals');
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /500 POST \/v1\/query: Error: disk on fire/);
  assert.match(lines[0]!, /caused by: Error: EIO underneath/);
  // The default sink is the process's stderr.
  const app2 = buildApp(index);
  cleanup.push(() => app2.close());
  const orig = process.stderr.write.bind(process.stderr);
  const seen: string[] = [];
  process.stderr.write = ((s: string) => (seen.push(String(s)), true)) as typeof process.stderr.write;
  try {
    assert.equal((await app2.inject({ method: 'POST', url: '/v1/query', payload: { text: 'x y z' } })).statusCode, 500);
  } finally {
    process.stderr.write = orig;
  }
  assert.ok(seen.some((s) => /500 POST \/v1\/query: Error: disk on fire/.test(s)), 'on stderr');
});

test('item 5: an output that is the input (same path, symlink, hard link, other spelling) is refused with exit 2, input intact', () => {
  const dir = tmpDir();
  const input = path.join(dir, 'copy.tsv');
  const data = 'id\ttext\na\tthe quick brown fox jumps over the lazy dog\nb\tthe quick brown fox jumps over the lazy dog\n';
  fs.writeFileSync(input, data);
  fs.symlinkSync(input, path.join(dir, 'link.tsv'));
  fs.linkSync(input, path.join(dir, 'hard.tsv'));
  const outs = [input, path.join(dir, 'link.tsv'), path.join(dir, 'hard.tsv'), `${dir}/./sub/../copy.tsv`];
  fs.mkdirSync(path.join(dir, 'sub'));
  const runs: [string, string[]][] = [];
  for (const o of outs) {
    runs.push([`dedup -o ${o}`, ['dedup', input, '--id', 'id', '-o', o]]);
    runs.push([`dedup --output dedup -o ${o}`, ['dedup', input, '--id', 'id', '--output', 'dedup', '-o', o]]);
    runs.push([`report --out ${o}`, ['report', input, '--id', 'id', '--out', o]]);
    runs.push([`report --data ${o}`, ['report', input, '--id', 'id', '--out', path.join(dir, 'r.html'), '--data', o]]);
    runs.push([`index add -o ${o}`, ['index', 'add', input, '--id', 'id', '--store', `sqlite:${path.join(dir, 'i.db')}`, '-o', o]]);
    runs.push([`index query -o ${o}`, ['index', 'query', input, '--id', 'id', '--store', `sqlite:${path.join(dir, 'i.db')}`, '-o', o]]);
  }
  // --out DIR (the input's own directory) writes DIR/<input name>, which is the input.
  for (const mode of ['dedup', 'annotate']) runs.push([`dedup --output ${mode} --out <input dir>`, ['dedup', input, '--id', 'id', '--output', mode, '--out', dir]]);
  // The store file as an output, and --out = --data.
  runs.push(['index add -o store', ['index', 'add', input, '--id', 'id', '--store', `sqlite:${path.join(dir, 'i.db')}`, '-o', path.join(dir, 'i.db')]]);
  runs.push(['report --out = --data', ['report', input, '--id', 'id', '--out', path.join(dir, 'same.html'), '--data', path.join(dir, 'same.html')]]);
  for (const [what, args] of runs) {
    const r = neardup(args);
    assert.equal(r.code, 2, `${what}: ${r.stderr}`);
    assert.match(r.stderr, /same file/, what);
    assert.equal(fs.readFileSync(input, 'utf8'), data, `${what}: the input is intact`);
  }
});

test('item 6: duplicate ids are an input error naming both lines (dedup, every output, streamed too); index add warns', () => {
  const dir = tmpDir();
  const f = path.join(dir, 'dup.tsv');
  fs.writeFileSync(f, 'id\ttext\nA\tthe quick brown fox\nB\tsomething else entirely\nA\tthe quick brown fox\n');
  for (const extra of [[], ['--output', 'clusters'], ['--stream'], ['--output', 'annotate', '--stream']]) {
    const r = neardup(['dedup', f, '--id', 'id', ...extra]);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /dup\.tsv:4: duplicate id "A" \(first on line 2\)/);
    assert.equal(r.stdout, '');
  }
  const j = path.join(dir, 'dup.jsonl');
  fs.writeFileSync(j, '{"id":1,"text":"a b c d e f"}\n{"id":"1","text":"a b c d e f"}\n');
  const rj = neardup(['dedup', j, '--id-field', 'id']);
  assert.equal(rj.code, 2);
  assert.match(rj.stderr, /dup\.jsonl:2: duplicate id "1" \(first on line 1\)/);
  const add = neardup(['index', 'add', f, '--id', 'id', '--store', `sqlite:${path.join(dir, 'd.db')}`]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stderr, /1 record repeats an id of earlier records .*id "A" on lines 2 and 4.*replaced the earlier document/);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`item 7: ${signal} during the write removes the hidden temp file`, async () => {
    const dir = tmpDir();
    const f = path.join(dir, 'big.txt');
    // Many short distinct lines: signing is quick, the annotated output is large.
    const lines: string[] = [];
    for (let i = 0; i < 400000; i++) lines.push(`line ${i} ${(i * 2654435761) % 1000003} words ${i % 977} more ${i % 131}`);
    fs.writeFileSync(f, lines.join('\n') + '\n');
    const out = path.join(dir, 'out.txt');
    const run = neardupAsync(['dedup', f, '--output', 'annotate', '-o', out, '--quiet']);
    let tmpSeen: string | undefined;
    for (let i = 0; i < 20000 && !tmpSeen && run.child.exitCode === null; i++) {
      tmpSeen = fs.readdirSync(dir).find((n) => n.startsWith('.out.txt.') && n.endsWith('.tmp'));
      if (!tmpSeen) await new Promise((r) => setTimeout(r, 2));
    }
    assert.ok(tmpSeen, 'the temp file appeared while writing');
    run.child.kill(signal);
    const res = await run.done;
    assert.equal(res.signal, signal, `died of ${signal} (code ${res.code}, ${res.stderr})`);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.endsWith('.tmp')), [], 'no temp file left');
    assert.ok(!fs.existsSync(out), 'no output pretending to be complete');
  });
}

test('item 9: an unknown store is a usage error (exit 2); a threshold mismatch names the threshold', () => {
  const dir = tmpDir();
  const f = path.join(dir, 'a.tsv');
  fs.writeFileSync(f, 'id\ttext\na\tsome text here\n');
  for (const args of [['index', 'add', f, '--id', 'id', '--store', 'foo:bar'], ['serve', '--store', 'foo:bar', '--port', '0']]) {
    const r = neardup(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /unknown store "foo:bar"/);
  }
  const db = `sqlite:${path.join(dir, 't.db')}`;
  assert.equal(neardup(['index', 'add', f, '--id', 'id', '--store', db, '--threshold', '0.8']).code, 0);
  const r = neardup(['serve', '--store', db, '--threshold', '0.5', '--port', '0']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /created with threshold 0\.8, given 0\.5/);
  assert.doesNotMatch(r.stderr, /^neardup: the store was created with different parameters \(bands/m);
});

test('item 10: POST /v1/documents limit (default 100, max 10000), text/plain gets 415', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  const app = buildApp(index);
  cleanup.push(() => app.close());
  const text = 'the quick brown fox jumps over the lazy dog near the river bank at dawn';
  const docs = Array.from({ length: 150 }, (_, i) => ({ id: `d${i}`, text }));
  const b = await app.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: docs.slice(0, 120) } });
  assert.equal(b.statusCode, 200);
  assert.equal(b.json().results[119].duplicates.length, 100, 'batch default limit 100');
  assert.equal((await app.inject({ method: 'POST', url: '/v1/documents:batch', payload: { documents: docs.slice(120, 125), limit: 3 } })).json().results[4].duplicates.length, 3);
  let r = await app.inject({ method: 'POST', url: '/v1/documents', payload: docs[130] });
  assert.equal(r.json().duplicates.length, 100, 'default 100');
  r = await app.inject({ method: 'POST', url: '/v1/documents', payload: { ...docs[131], limit: 7 } });
  assert.equal(r.json().duplicates.length, 7);
  r = await app.inject({ method: 'POST', url: '/v1/documents', payload: { ...docs[132], limit: 10000 } });
  assert.equal(r.json().duplicates.length, 127, 'all of them up to the maximum');
  for (const limit of [0, 10001, 1.5, '5']) {
    r = await app.inject({ method: 'POST', url: '/v1/documents', payload: { ...docs[133], limit } });
    assert.equal(r.statusCode, 400, `limit ${limit}`);
  }
  r = await app.inject({ method: 'POST', url: '/v1/documents', payload: 'id=x&text=y', headers: { 'content-type': 'text/plain' } });
  assert.equal(r.statusCode, 415, r.body);
  assert.equal(r.json().error, 'Unsupported Media Type');
});
