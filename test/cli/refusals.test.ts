/**
 * Issue #31, item 6 (the smaller items): write errors name the path (ENOSPC through /dev/full);
 * `--id-field`/`--text-field` on TSV and `--exact --verify estimate` are refused naming the option;
 * a TSV header naming the text (or id) column twice is an error; a 0-byte TSV is an error (a header
 * is required), in memory and on the ranged route; a Parquet DATE id prints as an ISO date.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { mainJs, neardup, tmpDir } from '../cliUtil.js';
import { writeParquetSchema } from '../helpers/formats.js';

const TEXT = 'a flat in rome near the metro with two rooms and a balcony';
const full = fs.existsSync('/dev/full') ? {} : { skip: 'no /dev/full on this system' };

test('a full disk: the error names the file, or standard output; exit 1, no stack trace', full, () => {
  const dir = tmpDir();
  const file = path.join(dir, 'in.jsonl');
  fs.writeFileSync(file, Array.from({ length: 3000 }, (_, i) => JSON.stringify({ id: `d${i}`, text: `${TEXT} ${i % 7}` })).join('\n') + '\n');
  for (const output of ['pairs', 'clusters', 'dedup', 'annotate']) {
    const r = neardup(['dedup', file, '--id-field', 'id', '--output', output, '--out', '/dev/full', '-q']);
    assert.equal(r.code, 1, `${output}: ${r.stderr}`);
    assert.equal(r.stderr, 'neardup: /dev/full: cannot write (ENOSPC: no space left on device)\n', output);
  }
  const fd = fs.openSync('/dev/full', 'w');
  try {
    const r = spawnSync(process.execPath, [mainJs, 'dedup', file, '--id-field', 'id', '-q'], {
      stdio: ['ignore', fd, 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, NEARDUP_DEBUG: '' },
    });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^neardup: standard output: cannot write \(ENOSPC: no space left on device\)\n$/);
  } finally {
    fs.closeSync(fd);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('JSONL field flags on other formats, and --exact --verify estimate|none, are refused naming the option', () => {
  const dir = tmpDir();
  const tsv = path.join(dir, 'in.tsv');
  fs.writeFileSync(tsv, `id\ttext\na\t${TEXT}\nb\t${TEXT}!\n`);
  const txt = path.join(dir, 'in.txt');
  fs.writeFileSync(txt, `${TEXT}\n${TEXT}!\n`);
  for (
    const [args, option] of [
      [[tsv, '--id-field', 'id'], '--id-field'],
      [[tsv, '--text-field', 'text'], '--text-field'],
      [[tsv, '--id-field', 'id', '--stream', '--workers', '2'], '--id-field'],
      [[txt, '--id-field', 'id'], '--id-field'],
    ] as const
  ) {
    for (const cmd of args.includes('--stream') ? [['dedup']] : [['dedup'], ['index', 'add']]) {
      const extra = cmd[0] === 'index' ? ['--store', `sqlite:${path.join(dir, 'i.db')}`] : [];
      const r = neardup([...cmd, ...args, ...extra]);
      assert.equal(r.code, 2, `${cmd.join(' ')} ${args.join(' ')}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`neardup: ${option} `), r.stderr);
      assert.equal(fs.existsSync(path.join(dir, 'i.db')), false);
    }
  }
  // --id on TSV is the way, and works.
  const ok = neardup(['dedup', tsv, '--id', 'id', '-q']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^a\tb\t/);
  for (const mode of ['estimate', 'none']) {
    const r = neardup(['dedup', tsv, '--id', 'id', '--exact', '--verify', mode]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`--exact .*--verify ${mode}`));
  }
  assert.equal(neardup(['dedup', tsv, '--id', 'id', '--exact', '--verify', 'exact', '-q']).code, 0);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a TSV/CSV header naming the text or id column twice is an error naming both columns; an empty TSV/CSV has no header', () => {
  const dir = tmpDir();
  const cases: [string, string, string[], RegExp][] = [
    ['twice.tsv', `text\tid\ttext\nA b c d e f\t1\tB\n`, [], /twice\.tsv:1: the header names the text column "text" 2 times \(columns 1, 3\)/],
    ['loose.tsv', `Text\tid\t text \nA b c d e f\t1\tB\n`, [], /the header names the text column "Text" 2 times \(columns 1, 3\)/],
    ['ids.csv', `id,text,id\n1,A b c d e f,2\n`, ['--id', 'id'], /ids\.csv:1: the header names the id column "id" 2 times \(columns 1, 3\)/],
    ['named.tsv', `body\tbody\nx\ty\n`, ['--text', 'body'], /the header names the text column "body" 2 times/],
  ];
  for (const [name, content, flags, re] of cases) {
    const f = path.join(dir, name);
    fs.writeFileSync(f, content);
    for (const route of [[], ['--stream', '--workers', '2']]) {
      const r = neardup(['dedup', f, ...flags, ...route]);
      assert.equal(r.code, 2, `${name} ${route.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
    }
  }
  for (const name of ['empty.tsv', 'empty.csv', 'blank.tsv']) {
    const f = path.join(dir, name);
    fs.writeFileSync(f, name.startsWith('blank') ? '\n\n' : '');
    for (const route of [[], ['--stream', '--workers', '2'], ['--exact']]) {
      const r = neardup(['dedup', f, ...route]);
      assert.equal(r.code, 2, `${name} ${route.join(' ')}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`${name}: no header line`), r.stderr);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a Parquet DATE id (and title) prints as an ISO date, not a day number', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'dates.parquet');
  const schema = [
    { name: 'root', num_children: 2 },
    { name: 'day', type: 'INT32', converted_type: 'DATE', repetition_type: 'REQUIRED' },
    { name: 'text', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  ];
  const days = [new Date('2020-01-01T00:00:00Z'), new Date('1969-12-31T00:00:00Z'), new Date('2024-02-29T00:00:00Z')];
  await writeParquetSchema(file, schema, [
    { name: 'day', data: days },
    { name: 'text', data: [TEXT, `${TEXT}!`, 'something else entirely about boats'] },
  ]);
  const r = neardup(['dedup', file, '--id', 'day', '--output', 'clusters', '-q']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    '{"cluster":0,"size":2,"representative":"2020-01-01","members":["2020-01-01","1969-12-31"],"duplicate_of":[null,"2020-01-01"],"similarity":[null,0.9818181818181818]}\n',
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

test('--text and --id on TSV shards are not refused when a sharded job reads them back from job.json', () => {
  const dir = tmpDir();
  const shards = path.join(dir, 'shards');
  fs.mkdirSync(shards);
  fs.writeFileSync(path.join(shards, 'p0.tsv'), `id\tbody\na\t${TEXT}\nb\tsomething else about boats\n`);
  fs.writeFileSync(path.join(shards, 'p1.tsv'), `id\tbody\nc\t${TEXT}!\n`);
  const want = neardup(['dedup', shards, '--text', 'body', '--id', 'id', '-q']);
  assert.equal(want.code, 0, want.stderr);
  assert.equal(want.stdout, `a\tc\t${want.stdout.split('\t')[2]}`);
  const job = neardup([
    'job',
    'dedup',
    shards,
    '--local',
    '--work-dir',
    path.join(dir, 'w'),
    '--text',
    'body',
    '--id',
    'id',
    '--out',
    path.join(dir, 'pairs.tsv'),
    '-q',
  ]);
  assert.equal(job.code, 0, job.stderr);
  assert.equal(fs.readFileSync(path.join(dir, 'pairs.tsv'), 'utf8'), want.stdout);
  fs.rmSync(dir, { recursive: true, force: true });
});
