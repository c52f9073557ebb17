import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { openInput, type ReadOptions } from '../../../src/io/read/read.js';
import { InputError } from '../../../src/common/errors.js';
import { formatFromExtension, sniffFormat } from '../../../src/io/read/formats.js';
import { htmlToText } from '../../../src/io/read/html.js';
import { readTextFile } from '../../../src/io/read/textFile.js';
import type { InputRecord } from '../../../src/io/read/record.js';
import { fixtures, kijiji, tmpDir } from '../../cliUtil.js';
import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import { textLines, utf8Chunks, utf8LinesOf, type TextLine } from '../../../src/io/codec/utf8.js';

const A = 'The quick brown fox jumps over the lazy dog near the river bank today';
const B = 'Apartment for rent in Rome, two bedrooms, close to the metro station, available from October';
const C = 'Completely different words about compilers, parsers and type systems in general';

async function readAll(file: string, options: ReadOptions = {}): Promise<{ records: InputRecord[]; input: Awaited<ReturnType<typeof openInput>> }> {
  const input = await openInput(file, options);
  const records: InputRecord[] = [];
  for await (const r of input.records) records.push(r);
  return { records, input };
}

async function readError(file: string, options: ReadOptions = {}): Promise<InputError> {
  try {
    await readAll(file, options);
  } catch (e) {
    assert.ok(e instanceof InputError, `expected an InputError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected an error');
}

const f = (name: string): string => path.join(fixtures, name);

test('TSV: header, --text columns joined by a space, --id, a quote is an ordinary character', async () => {
  const { records, input } = await readAll(f('docs.tsv'), { columns: { text: ['title', 'body'], id: 'id' }, raw: true });
  assert.equal(input.format, 'tsv');
  assert.deepEqual(input.header?.columns, ['id', 'title', 'body']);
  assert.equal(records.length, 7);
  assert.equal(records[0]!.text, `Fox ${A}`);
  assert.equal(records[0]!.id, 'a1');
  assert.equal(records[2]!.text, `Compilers ${C}, with a "quote" inside`);
  assert.equal(records[6]!.text, 'Empty ');
  assert.deepEqual(
    records.map((r) => [r.row, r.line]),
    [0, 1, 2, 3, 4, 5, 6].map((i) => [i, i + 2]),
  );
  assert.equal(records[1]!.raw, `b1\tFlat\t${B}`);
});

test('CSV: CRLF, quoted commas, doubled quotes and a line break inside quotes', async () => {
  const { records, input } = await readAll(f('docs.csv'), { columns: { text: ['body'] }, raw: true });
  assert.equal(input.format, 'csv');
  assert.equal(records.length, 7);
  assert.equal(records[1]!.text, B);
  // The file's CRLF inside the quoted field is part of the value (kept, not turned into LF).
  assert.equal(records[2]!.text, `${C},\r\nwith a "quoted" line break`);
  assert.equal(records[2]!.line, 4);
  assert.equal(records[3]!.line, 6);
  assert.equal(records[3]!.row, 3);
  assert.equal(records[6]!.text, '');
  assert.equal(records[2]!.raw, `c1,Compilers,"${C},\r\nwith a ""quoted"" line break"`);
  assert.equal(records[2]!.eol, '\r\n');
});

test('JSONL: nested text and id paths', async () => {
  const { records } = await readAll(f('docs.jsonl'), { fields: { text: ['body.text'], id: 'meta.id' } });
  assert.equal(records.length, 7);
  assert.deepEqual(
    records.map((r) => r.id),
    ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'e1'],
  );
  assert.equal(records[0]!.text, A);
  const two = await readAll(f('docs.jsonl'), { fields: { text: ['meta.id', 'body.text'] } });
  assert.equal(two.records[1]!.text, `b1 ${B}`);
  assert.equal(two.records[1]!.id, undefined);
});

test('plain text: one document per line, blank lines are empty documents', async () => {
  const { records, input } = await readAll(f('docs.txt'));
  assert.equal(input.format, 'text');
  assert.equal(records.length, 7);
  assert.equal(records[6]!.text, '');
  assert.equal(records[5]!.row, 5);
});

test('id<TAB>text lines', async () => {
  const { records } = await readAll(f('rcv1-style.txt'), { format: 'idtext' });
  assert.equal(records.length, 7);
  assert.equal(records[1]!.id, 'b1');
  assert.equal(records[1]!.text, B);
  assert.equal(records[6]!.text, '');
});

test('directory: .txt, .md and .html files by sorted relative path, HTML stripped, others ignored', async () => {
  const { records, input } = await readAll(f('corpus'));
  assert.equal(input.format, 'dir');
  assert.deepEqual(
    records.map((r) => r.id),
    ['a1.txt', 'b1.md', 'c1.txt', 'sub/a2.html'],
  );
  assert.equal(records[3]!.text, 'The quick brown fox jumps over the lazy dog near the river bank tonight');
  assert.equal(records[2]!.text, `${C} &amp; more\n`);
});

test('gzip input is read transparently, whatever its name', async () => {
  const dir = tmpDir();
  const gz = path.join(dir, 'docs.tsv.gz');
  fs.writeFileSync(gz, gzipSync(fs.readFileSync(f('docs.tsv'))));
  const { records, input } = await readAll(gz, { columns: { text: ['body'] } });
  assert.equal(input.format, 'tsv');
  assert.equal(records.length, 7);
  assert.equal(records[0]!.text, A);
  const odd = path.join(dir, 'docs.data');
  fs.writeFileSync(odd, gzipSync(fs.readFileSync(f('docs.jsonl'))));
  const r2 = await readAll(odd, { fields: { text: ['body.text'] } });
  assert.equal(r2.input.format, 'jsonl');
  assert.equal(r2.records.length, 7);
});

test('standard input: the format is sniffed from the first line', async () => {
  const stdin = Readable.from([fs.readFileSync(f('docs.jsonl'))]);
  const { records, input } = await readAll('-', { stdin, fields: { text: ['body.text'] } });
  assert.equal(input.format, 'jsonl');
  assert.equal(input.name, '<stdin>');
  assert.equal(records.length, 7);
  assert.equal(sniffFormat('a\tb'), 'tsv');
  assert.equal(sniffFormat('hello world'), 'text');
  assert.equal(formatFromExtension('x/y.CSV.gz'), 'csv');
  assert.equal(formatFromExtension('x.ndjson'), 'jsonl');
  assert.equal(formatFromExtension('x.bin'), undefined);
});

test('errors name file:line: unknown column (listing the columns), ragged row, invalid UTF-8, invalid JSON, missing file', async () => {
  let e = await readError(f('docs.tsv'), { columns: { text: ['Body', 'nope'] } });
  assert.equal(e.message, `${f('docs.tsv')}:1: unknown column "nope"; available columns: "id", "title", "body"`);
  e = await readError(f('bad/ragged.tsv'), { columns: { text: ['body'] } });
  assert.equal(e.message, `${f('bad/ragged.tsv')}:3: ragged row: 5 fields, the header has 3 (TSV has no quoting: a tab inside a field splits it)`);
  e = await readError(f('bad/badutf8.tsv'), { columns: { text: ['body'] } });
  assert.equal(e.message, `${f('bad/badutf8.tsv')}:3: invalid UTF-8`);
  e = await readError(f('bad/badjson.jsonl'));
  assert.match(e.message, /badjson\.jsonl:2: invalid JSON \(/);
  e = await readError(f('docs.jsonl'), { fields: { text: ['body.txt'] } });
  assert.equal(e.message, `${f('docs.jsonl')}:1: no field "body.txt"; available fields: "meta", "body", "tags"`);
  e = await readError(f('nope.tsv'));
  assert.equal(e.message, `${f('nope.tsv')}: no such file or directory`);
  e = await readError(f('docs.tsv'), { columns: { text: ['body'], id: 'ID2' } });
  assert.match(e.message, /unknown id column "ID2"/);
});

test('skipInvalid skips and counts bad records; rows keep their numbers', async () => {
  const r1 = await readAll(f('bad/ragged.tsv'), { columns: { text: ['body'] }, skipInvalid: true });
  assert.deepEqual(
    r1.records.map((r) => [r.text, r.row]),
    [
      ['some text', 0],
      ['fine', 2],
    ],
  );
  assert.equal(r1.input.skips.count, 1);
  assert.match(r1.input.skips.examples[0]!.message, /ragged\.tsv:3: ragged row/);
  const r2 = await readAll(f('bad/badutf8.tsv'), { columns: { text: ['body'] }, skipInvalid: true });
  assert.deepEqual(
    r2.records.map((r) => r.text),
    ['some text', 'fine'],
  );
  assert.equal(r2.input.skips.count, 1);
  const r3 = await readAll(f('bad/badjson.jsonl'), { skipInvalid: true });
  assert.deepEqual(
    r3.records.map((r) => [r.text, r.row, r.line]),
    [
      ['one', 0, 1],
      ['three', 2, 3],
    ],
  );
  // A header problem is never skipped.
  await readError(f('docs.tsv'), { columns: { text: ['nope'] }, skipInvalid: true });
});

test('an unclosed quote is reported at the line where it opens', async () => {
  const dir = tmpDir();
  const p = path.join(dir, 'q.csv');
  fs.writeFileSync(p, 'a,b\n1,2\n3,"oops\n4,5\n');
  const e = await readError(p, { columns: { text: ['b'] } });
  assert.equal(e.message, `${p}:3: a quoted field is never closed`);
});

test('HTML to text', () => {
  assert.equal(htmlToText('<p>a&amp;b</p><script>x()</script><!-- c --><b>d</b>&#233;&#x41;&nbsp;e'), 'a&b d éA e');
});

test('readTextFile reads gzip and strips HTML; invalid UTF-8 gives file:line', async () => {
  const dir = tmpDir();
  const h = path.join(dir, 'x.html.gz');
  fs.writeFileSync(h, gzipSync('<h1>Hi</h1>\n<p>there</p>'));
  assert.equal(await readTextFile(h), 'Hi there');
  const bad = path.join(dir, 'bad.txt');
  fs.writeFileSync(bad, Buffer.from([0x61, 0x0a, 0x62, 0x0a, 0xc3, 0x28, 0x0a]));
  await assert.rejects(readTextFile(bad), { message: `${bad}:3: invalid UTF-8` });
});

test('Kijiji TSV: 2,627 rows of 6 fields; texts equal a plain split on tabs', async () => {
  const { records, input } = await readAll(kijiji, { columns: { text: ['Title', 'Short Description'] }, raw: true });
  assert.equal(records.length, 2627);
  assert.equal(input.header?.columns.length, 6);
  const plain = fs.readFileSync(kijiji, 'utf8').split('\n').slice(1, -1);
  assert.equal(plain.length, 2627);
  for (let i = 0; i < plain.length; i++) {
    const fields = plain[i]!.split('\t');
    assert.equal(fields.length, 6);
    assert.equal(records[i]!.text, `${fields[0]} ${fields[1]}`, `row ${i}`);
    assert.equal(records[i]!.raw, plain[i]);
  }
});

test('utf8LinesOf: the same lines, numbers and line breaks as textLines(utf8Chunks(..)), or false for invalid UTF-8', async () => {
  const piece = fc.oneof(
    fc.constantFrom('\n', '\r\n', '\r', '\ufeff', '\uFEFF\n', ' ', 'ñ', '日本', '😀', '{"text":"a\\nb"}', ''),
    fc.string({ unit: 'grapheme', maxLength: 12 }),
  );
  const bytes = fc.oneof(
    fc.array(piece, { maxLength: 30 }).map((ps) => Buffer.from(ps.join(''), 'utf8')),
    // Raw bytes: invalid UTF-8, lone surrogates encoded, stray CR/LF.
    fc.uint8Array({ maxLength: 80 }).map((a) => Buffer.from(a)),
    fc.tuple(fc.boolean(), fc.array(piece, { maxLength: 10 })).map(([bom, ps]) =>
      Buffer.concat([Buffer.from(bom ? [0xef, 0xbb, 0xbf] : []), Buffer.from(ps.join(''), 'utf8')])
    ),
  );
  await fc.assert(
    fc.asyncProperty(bytes, fc.integer({ min: 1, max: 1000 }), fc.boolean(), async (buf, firstLine, stripBom) => {
      const got: TextLine[] = [];
      let bomA = false;
      const ok = utf8LinesOf(buf, { firstLine, stripBom, each: (text, line, eol) => got.push({ text, line, eol }), onBom: () => (bomA = true) });
      assert.equal(ok, isUtf8(buf));
      if (!ok) {
        assert.equal(got.length, 0);
        return;
      }
      let bomB = false;
      const want: TextLine[] = [];
      const once = async function* () {
        yield buf;
      };
      for await (const l of textLines(utf8Chunks(once(), { file: 'x', firstLine, stripBom, onBom: () => (bomB = true) }))) want.push(l);
      assert.deepEqual(got, want);
      assert.equal(bomA, bomB);
    }),
    { numRuns: 1500, seed: 20 },
  );
});

// #48: a TSV/CSV header that says the input is something else is refused (exit 2), naming the
// file, line 1 and the option: a JSON object (JSON lines read with --format tsv|csv or named
// .tsv/.csv), or, read as CSV with the default comma, one column that ';', '|' or a tab splits.
// An explicit --delimiter , reads such a header as the one column it is; a plain one-column CSV
// and a JSON-looking header that does not parse are read as before.
test('TSV/CSV headers that are JSON objects, or split by another delimiter, are refused with the option to use', async () => {
  const dir = tmpDir();
  const name = fc.string({ unit: fc.constantFrom('a', 'b', 'x', '_', '1', ' ', 'é'), minLength: 1, maxLength: 6 }).filter((s) => s.trim() !== '');
  let n = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(name, fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), { minKeys: 0, maxKeys: 4 }),
      fc.constantFrom('tsv', 'csv'),
      fc.boolean(),
      fc.constantFrom('\n', '\r\n'),
      async (obj, fmt, byName, eol) => {
        const file = path.join(dir, `j${n++}.${byName ? fmt : 'txt'}`);
        fs.writeFileSync(file, `${JSON.stringify(obj)}${eol}${JSON.stringify({ ...obj, more: 1 })}${eol}`);
        const e = await readError(file, byName ? {} : { format: fmt as 'tsv' | 'csv' });
        assert.equal(e.line, 1);
        assert.equal(e.file, file);
        assert.match(e.reason, /JSON object/);
        assert.deepEqual(e.fix, { option: 'format', value: 'jsonl' });
      },
    ),
    { numRuns: 60 },
  );
  await fc.assert(
    fc.asyncProperty(fc.array(name, { minLength: 2, maxLength: 5 }), fc.constantFrom(';', '|', '\t'), fc.boolean(), async (cols, d, byName) => {
      const file = path.join(dir, `d${n++}.${byName ? 'csv' : 'txt'}`);
      const row = cols.map((_, i) => `v${i}`);
      fs.writeFileSync(file, `${cols.join(d)}\n${row.join(d)}\n`);
      const format = byName ? {} : { format: 'csv' as const };
      const e = await readError(file, format);
      assert.equal(e.line, 1);
      assert.match(e.reason, d === '\t' ? /tab-separated: read it with --format tsv/ : new RegExp(`"\\${d}"-separated: read it with --delimiter '\\${d}'`));
      // Given explicitly, the comma reads the header as one column.
      const { records } = await readAll(file, { ...format, delimiter: ',' });
      assert.equal(records.length, 1);
      assert.equal(records[0]!.text, row.join(d));
    }),
    { numRuns: 60 },
  );
  for (const [content, fmt] of [['body\nsome; text | here\n', 'csv'], ['{not json\nx\n', 'tsv'], ['{"a":1\nx\n', 'csv'], ['[1,2]\nx\n', 'tsv']] as const) {
    const file = path.join(dir, `ok${n++}.${fmt}`);
    fs.writeFileSync(file, content);
    assert.equal((await readAll(file)).records.length, 1, content);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});
