/**
 * Issue 16 item 5, from the outside: every command that writes (dedup in every output mode, report,
 * index add and query) refuses an output that is its input, through any spelling, with exit 2 and
 * the input intact (the check itself: io/write/alias.ts, test/io/write/alias.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { neardup, tmpDir } from '../cliUtil.js';

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
  for (const mode of ['dedup', 'annotate'])
    runs.push([`dedup --output ${mode} --out <input dir>`, ['dedup', input, '--id', 'id', '--output', mode, '--out', dir]]);
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

test('standard output redirected onto an input (>>, 1<>), or --out onto the file read as standard input, is refused with exit 2, input intact', async () => {
  const { spawnSync } = await import('node:child_process');
  const { mainJs } = await import('../cliUtil.js');
  const dir = tmpDir();
  const input = path.join(dir, 'pages.jsonl');
  const data = '{"id":"a","text":"Cheap flights.\\nSubscribe!\\n"}\n{"id":"b","text":"Hotels.\\nSubscribe!\\n"}\n';
  fs.writeFileSync(input, data);
  const run = (args: string[], stdin: 'pipe' | number, stdout: 'pipe' | number): { code: number | null; stderr: string } => {
    const r = spawnSync(process.execPath, [mainJs, ...args], {
      stdio: [stdin, stdout, 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, NEARDUP_PROGRESS: '' },
    });
    return { code: r.status, stderr: r.stderr };
  };
  const cases: [string, () => { code: number | null; stderr: string }][] = [
    ['spans a >> a', () => run(['spans', input], 'pipe', fs.openSync(input, 'a'))],
    ['spans a 1<> a', () => run(['spans', input], 'pipe', fs.openSync(input, 'r+'))],
    ['dedup a >> a', () => run(['dedup', input, '--output', 'dedup'], 'pipe', fs.openSync(input, 'a'))],
    ['spans - < a >> a', () => run(['spans', '-'], fs.openSync(input, 'r'), fs.openSync(input, 'a'))],
    ['spans - < a --out a', () => run(['spans', '-', '--out', input], fs.openSync(input, 'r'), 'pipe')],
    ['dedup - < a --output dedup --out a', () => run(['dedup', '-', '--output', 'dedup', '--out', input], fs.openSync(input, 'r'), 'pipe')],
  ];
  for (const [what, go] of cases) {
    const r = go();
    assert.equal(r.code, 2, `${what}: ${r.stderr}`);
    assert.match(r.stderr, /same file as (the input|standard input)/, what);
    assert.equal(fs.readFileSync(input, 'utf8'), data, `${what}: the input is intact`);
  }
  // Standard output to another file still works.
  const other = path.join(dir, 'out.jsonl');
  assert.equal(run(['spans', input], 'pipe', fs.openSync(other, 'w')).code, 0);
  assert.equal(fs.readFileSync(other, 'utf8'), '{"id":"a","text":"Cheap flights.\\nSubscribe!\\n"}\n{"id":"b","text":"Hotels.\\n"}\n');
});
