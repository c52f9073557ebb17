/**
 * `neardup spans` from the command line, in this process: every output flag pointed at the input
 * (any spelling) is refused with exit 2 and the input unchanged; bad input names file and line;
 * an unknown unit and flags that do not apply are usage errors; Parquet is written as Parquet, to a
 * .parquet file only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { createProgram, runProgram } from '../../../src/cli/program.js';
import { spansCommand } from '../../../src/cli/spans/command.js';
import { readParquetRows, writeParquet } from '../../helpers/formats.js';

async function spans(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  const program = createProgram().addCommand(spansCommand());
  let stderr = '';
  const sink = { write: (s: string) => ((stderr += s), true) } as unknown as NodeJS.WritableStream;
  const code = await runProgram(program, ['node', 'neardup', 'spans', ...args], sink);
  return { code, stderr };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spans-cli-'));
const input = path.join(dir, 'in.jsonl');
const data = '{"id":"a","text":"one\\nfooter line"}\n{"id":"b","text":"two\\nfooter line"}\n';
fs.writeFileSync(input, data);

test('every output pointed at the input (path, symlink, hard link, other spelling) is refused with exit 2, input intact', async () => {
  fs.symlinkSync(input, path.join(dir, 'link.jsonl'));
  fs.linkSync(input, path.join(dir, 'hard.jsonl'));
  fs.mkdirSync(path.join(dir, 'sub'));
  const spellings = [input, path.join(dir, 'link.jsonl'), path.join(dir, 'hard.jsonl'), `${dir}/./sub/../in.jsonl`];
  for (const o of spellings) {
    for (
      const args of [
        [input, '--id-field', 'id', '-q', '--out', o],
        [input, '--id-field', 'id', '-q', '--output', 'annotate', '--out', o],
        [input, '--id-field', 'id', '-q', '--out', path.join(dir, 'x.jsonl'), '--removed', o.replace(/\.jsonl$/, '.jsonl')],
        [input, '--id-field', 'id', '-q', '--dry-run', '--removed', o],
      ]
    ) {
      const r = await spans(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /same file/);
      assert.equal(fs.readFileSync(input, 'utf8'), data);
    }
  }
  // --out and --removed the same file.
  const same = path.join(dir, 'same.jsonl');
  const r = await spans([input, '-q', '--out', same, '--removed', same]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /same file/);
  assert.equal(fs.existsSync(same), false);
});

test('a run writes the records and the audit; Parquet is written as Parquet (not to standard output, nor to a name of another format)', async () => {
  const out = path.join(dir, 'out.jsonl');
  const removed = path.join(dir, 'removed.tsv');
  const r = await spans([input, '--id-field', 'id', '-q', '--out', out, '--removed', removed]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(fs.readFileSync(out, 'utf8'), '{"id":"a","text":"one\\nfooter line"}\n{"id":"b","text":"two\\n"}\n');
  assert.equal(
    fs.readFileSync(removed, 'utf8'),
    'id\tstart\tend\tbyte_start\tbyte_end\tkept_id\tkept_start\tkept_byte_start\tcount\tdocs\nb\t4\t15\t4\t15\ta\t4\t4\t2\t2\n',
  );
  const pq = path.join(dir, 'in.parquet');
  await writeParquet(pq, [{ name: 'id', data: ['a', 'b'] }, { name: 'text', data: ['one\nfooter line', 'two\nfooter line'] }]);
  const written = await spans([pq, '--id', 'id', '-q', '--out', path.join(dir, 'o.parquet')]);
  assert.equal(written.code, 0, written.stderr);
  assert.deepEqual((await readParquetRows(path.join(dir, 'o.parquet'))).rows, [
    { id: 'a', text: 'one\nfooter line' },
    { id: 'b', text: 'two\n' },
  ]);
  for (
    const [args, re] of [
      [[], /needs --out FILE\.parquet/],
      [['--out', path.join(dir, 'o2.jsonl')], /name it \.parquet/],
      [['--out', path.join(dir, 'o3.parquet'), '--text', 'id,text'], /one text column/],
    ] as [string[], RegExp][]
  ) {
    const refused = await spans([pq, '--id', 'id', '-q', ...args]);
    assert.equal(refused.code, 2, args.join(' '));
    assert.match(refused.stderr, re, args.join(' '));
  }
  assert.deepEqual(fs.readdirSync(dir).filter((f) => /^o[23]\.|\.tmp$/.test(f)), []);
  const audit = path.join(dir, 'pq.removed.jsonl');
  const dry = await spans([pq, '--id', 'id', '-q', '--dry-run', '--removed', audit]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(
    fs.readFileSync(audit, 'utf8'),
    '{"id":"b","start":4,"end":15,"byte_start":4,"byte_end":15,"kept_id":"a","kept_start":4,"kept_byte_start":4,"count":2,"docs":2}\n',
  );
});

test('bad input names the file and the line; exit 2', async () => {
  const bad = path.join(dir, 'bad.jsonl');
  fs.writeFileSync(bad, '{"text":"a"}\n{"text":"b"}\n{"text": nope}\n');
  const r = await spans([bad, '--dry-run', '-q']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: invalid JSON`));
  const tsv = path.join(dir, 'bad.tsv');
  fs.writeFileSync(tsv, 'id\ttext\n1\tok\n2\ttoo\tmany\n');
  const t = await spans([tsv, '--dry-run', '-q']);
  assert.equal(t.code, 2);
  assert.match(t.stderr, /bad\.tsv:3: ragged row/);
});

test('usage errors: an unknown unit, --window without sentences, --min-length or --length-unit without substrings, several text fields, --json without --out', async () => {
  const cases: [string[], RegExp][] = [
    [[input, '--unit', 'suffix'], /--unit must be line, paragraph, sentence or substring, got "suffix"/],
    [[input, '--unit', 'line', '--min-length', '5'], /--min-length applies to --unit substring only/],
    [[input, '--unit', 'substring', '--min-length', '0'], /--min-length/],
    [[input, '--unit', 'line', '--window', '2'], /--window applies to --unit sentence only/],
    [[input, '--unit', 'line', '--length-unit', 'bytes'], /--length-unit applies to --unit substring only/],
    [[input, '--unit', 'substring', '--length-unit', 'chars'], /--length-unit.*chars/],
    [[input, '--unit', 'substring', '--length-unit', 'bytes', '--min-unit-words', '2'], /--min-unit-words does not apply to --length-unit bytes/],
    [[input, '--text-field', 'text,id', '--out', path.join(dir, 'o1.jsonl')], /one text field/],
    [[input, '--json'], /--json/],
    [[input, '--removed', path.join(dir, 'r.parquet'), '--dry-run'], /name it \.tsv or \.jsonl/],
  ];
  for (const [args, re] of cases) {
    const r = await spans([...args, '-q']);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(' '));
  }
  const txt = path.join(dir, 'plain.txt');
  fs.writeFileSync(txt, 'a\nb\n');
  const a = await spans([txt, '--output', 'annotate', '--out', path.join(dir, 'p.out.txt'), '-q']);
  assert.equal(a.code, 2);
  assert.match(a.stderr, /no room/);
  assert.equal(fs.existsSync(path.join(dir, 'p.out.txt')), false);
});

test('.gz input, .gz output and audit: the same records as the plain run', async () => {
  const gz = path.join(dir, 'in2.jsonl.gz');
  fs.writeFileSync(gz, gzipSync(data));
  const out = path.join(dir, 'out2.jsonl.gz');
  const removed = path.join(dir, 'removed2.jsonl.gz');
  const r = await spans([gz, '--id-field', 'id', '-q', '--out', out, '--removed', removed]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(gunzipSync(fs.readFileSync(out)).toString(), '{"id":"a","text":"one\\nfooter line"}\n{"id":"b","text":"two\\n"}\n');
  assert.match(gunzipSync(fs.readFileSync(removed)).toString(), /^\{"id":"b","start":4,"end":15,/);
});

test('shards and several inputs: one output shard per input file under --out DIR, then _SUCCESS; keep-first across files', async () => {
  const sh = path.join(dir, 'shards');
  fs.mkdirSync(sh);
  fs.writeFileSync(path.join(sh, 'p1.jsonl'), '{"id":"a","text":"x\\nshared line"}\n{"id":"b","text":"y\\nshared line"}\n');
  fs.writeFileSync(path.join(sh, 'p2.tsv'), '\ufeffid\ttext\r\nc\tshared line\r\nd\tz\r\n');
  const out = path.join(dir, 'shards-out');
  const removed = path.join(dir, 'shards-removed.tsv');
  const r = await spans([sh, '--id-field', 'id', '--id', 'id', '-q', '--out', out, '--removed', removed]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(out).sort(), ['_SUCCESS', 'p1.jsonl', 'p2.tsv']);
  assert.equal(fs.readFileSync(path.join(out, 'p1.jsonl'), 'utf8'), '{"id":"a","text":"x\\nshared line"}\n{"id":"b","text":"y\\n"}\n');
  assert.equal(fs.readFileSync(path.join(out, 'p2.tsv'), 'utf8'), '\ufeffid\ttext\r\nd\tz\r\n');
  assert.equal(fs.readFileSync(removed, 'utf8').split('\n').slice(1).join('\n'), 'b\t2\t13\t2\t13\ta\t2\t2\t3\t3\nc\t0\t11\t0\t11\ta\t2\t2\t3\t3\n');
  // The same files given as several inputs: the same shards.
  const out2 = path.join(dir, 'several-out');
  const s2 = await spans([path.join(sh, 'p1.jsonl'), path.join(sh, 'p2.tsv'), '--id-field', 'id', '--id', 'id', '-q', '--out', out2]);
  assert.equal(s2.code, 0, s2.stderr);
  for (const f of ['p1.jsonl', 'p2.tsv']) assert.equal(fs.readFileSync(path.join(out2, f), 'utf8'), fs.readFileSync(path.join(out, f), 'utf8'));
  // Refused, exit 2, inputs intact: no --out, --out inside the input directory, a directory holding other files.
  const before = fs.readFileSync(path.join(sh, 'p1.jsonl'), 'utf8');
  fs.mkdirSync(path.join(dir, 'stray'));
  fs.writeFileSync(path.join(dir, 'stray', 'keep.txt'), 'mine');
  for (
    const [args, re] of [
      [[sh, '--id-field', 'id', '--id', 'id'], /needs --out DIR/],
      [[sh, '--id-field', 'id', '--id', 'id', '--out', sh], /overlaps|same file/],
      [[sh, '--id-field', 'id', '--id', 'id', '--out', path.join(sh, 'sub')], /overlaps|same file/],
      [[sh, '--id-field', 'id', '--id', 'id', '--out', path.join(dir, 'stray')], /keep\.txt/],
    ] as [string[], RegExp][]
  ) {
    const x = await spans([...args, '-q']);
    assert.equal(x.code, 2, `${args.join(' ')}: ${x.stderr}`);
    assert.match(x.stderr, re);
  }
  assert.equal(fs.readFileSync(path.join(sh, 'p1.jsonl'), 'utf8'), before);
  assert.deepEqual(fs.readdirSync(sh).sort(), ['p1.jsonl', 'p2.tsv']);
  assert.deepEqual(fs.readdirSync(path.join(dir, 'stray')), ['keep.txt']);
});

test('--json: the summary on stdout (units, repeated, bytes removed, documents, top units)', async () => {
  const out = path.join(dir, 'json-out.jsonl');
  let printed = '';
  const write = process.stdout.write.bind(process.stdout);
  // Only the summary is taken: the test runner writes its own reports to stdout too.
  process.stdout.write = ((s: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof s === 'string' && s.startsWith('{\n  "unit"')) return ((printed += s), true);
    return (write as (...a: unknown[]) => boolean)(s, ...rest);
  }) as typeof process.stdout.write;
  let r: { code: number; stderr: string };
  try {
    r = await spans([input, '--id-field', 'id', '--json', '--out', out]);
  } finally {
    process.stdout.write = write;
  }
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(printed) as Record<string, unknown>;
  assert.deepEqual(
    {
      unit: s.unit,
      mode: s.mode,
      documents: s.documents,
      units: s.units,
      distinctUnits: s.distinctUnits,
      repeatedUnits: s.repeatedUnits,
      unitsRemoved: s.unitsRemoved,
      bytesRemoved: s.bytesRemoved,
      documentsChanged: s.documentsChanged,
      documentsDropped: s.documentsDropped,
      written: s.written,
      top: s.top,
    },
    {
      unit: 'line',
      mode: 'keep-first',
      documents: 2,
      units: 4,
      distinctUnits: 3,
      repeatedUnits: 1,
      unitsRemoved: 1,
      bytesRemoved: 11,
      documentsChanged: 1,
      documentsDropped: 0,
      written: 2,
      top: [{ text: 'footer line', count: 2, docs: 2 }],
    },
  );
});
