/**
 * Readers of the formats of sharded corpora: .zst beside .gz, Parquet, globs and directories of
 * shards. Every file is made here, with the same libraries neardup writes with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { openInput, type ReadOptions } from '../../../src/io/read/read.js';
import { InputError, UsageError } from '../../../src/common/errors.js';
import { formatFromExtension } from '../../../src/io/read/formats.js';
import { zstdDecompress } from '../../../src/io/codec/zstd.js';
import type { InputRecord } from '../../../src/io/read/record.js';
import { tmpDir } from '../../cliUtil.js';
import { CODECS, writeParquet, writeParquetSchema, zstd } from '../../helpers/formats.js';

async function readAll(file: string, options: ReadOptions = {}): Promise<{ records: InputRecord[]; input: Awaited<ReturnType<typeof openInput>> }> {
  const input = await openInput(file, options);
  const records: InputRecord[] = [];
  for await (const r of input.records) records.push(r);
  return { records, input };
}

async function failure(file: string, options: ReadOptions = {}): Promise<Error> {
  try {
    await readAll(file, options);
  } catch (e) {
    return e as Error;
  }
  assert.fail(`${file}: expected an error`);
}

const TEXTS = ['first, "quoted" text', 'second text with ünïcödé ✓', '', 'fourth'];

/** One file content per text format, with the TEXTS above (CSV also quotes a line break). */
function contents(eol: string, bom: boolean): Record<string, { name: string; body: string; texts: string[]; options: ReadOptions }> {
  const b = bom ? '\ufeff' : '';
  const csvTexts = [...TEXTS, 'multi\nline'];
  return {
    jsonl: { name: 'x.jsonl', body: b + TEXTS.map((t, i) => JSON.stringify({ id: `r${i}`, text: t })).join(eol) + eol, texts: TEXTS, options: {} },
    csv: {
      name: 'x.csv',
      body: b + 'id,text' + eol + csvTexts.map((t, i) => `r${i},"${t.replace(/"/g, '""')}"`).join(eol) + eol,
      texts: csvTexts,
      options: {},
    },
    tsv: {
      name: 'x.tsv',
      body: b + 'id\ttext' + eol + TEXTS.map((t, i) => `r${i}\t${t.replace(/"/g, "'")}`).join(eol) + eol,
      texts: TEXTS.map((t) => t.replace(/"/g, "'")),
      options: {},
    },
    text: { name: 'x.txt', body: b + TEXTS.join(eol) + eol, texts: TEXTS, options: {} },
  };
}

test('every text reader reads plain, .gz and .zst alike, with LF or CRLF, with or without a BOM', async () => {
  const dir = tmpDir();
  for (const eol of ['\n', '\r\n']) {
    for (const bom of [false, true]) {
      for (const [fmt, c] of Object.entries(contents(eol, bom))) {
        for (const comp of ['', '.gz', '.zst']) {
          const file = path.join(dir, `${fmt}${eol.length}${bom ? 'b' : ''}${c.name.slice(1)}${comp}`);
          const raw = Buffer.from(c.body);
          fs.writeFileSync(file, comp === '.gz' ? gzipSync(raw) : comp === '.zst' ? await zstd(raw, 7) : raw);
          const { records, input } = await readAll(file, c.options);
          assert.equal(input.format, fmt, file);
          assert.deepEqual(
            records.map((r) => r.text),
            c.texts,
            `${file} (eol ${JSON.stringify(eol)}, bom ${bom})`,
          );
        }
      }
    }
  }
});

test('.zst: recognised by magic bytes whatever the name; extensions ignored for the format', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'data.jsonl');
  fs.writeFileSync(file, await zstd('{"text":"a"}\n{"text":"b"}\n'));
  assert.deepEqual((await readAll(file)).records.map((r) => r.text), ['a', 'b']);
  // Skippable frames (magic 0x184D2A5?) between data frames are passed over.
  const skip = (n: number, len: number): Buffer => Buffer.concat([Buffer.from([0x50 + n, 0x2a, 0x4d, 0x18, len, 0, 0, 0]), Buffer.alloc(len, 7)]);
  fs.writeFileSync(file, Buffer.concat([skip(0, 4), await zstd('{"text":"a"}\n'), skip(14, 0), await zstd('{"text":"b"}\n')]));
  assert.deepEqual((await readAll(file)).records.map((r) => r.text), ['a', 'b']);
  assert.equal(formatFromExtension('s/part-0.JSONL.ZST'), 'jsonl');
  assert.equal(formatFromExtension('s/part-0.csv.zstd'), 'csv');
  assert.equal(formatFromExtension('s/part-0.parquet'), 'parquet');
});

/** Runs `fn` with each zstd decoder: fzstd (NEARDUP_ZSTD=js) and the zstd command when present. */
async function withEachDecoder(fn: (mode: string) => Promise<void>): Promise<void> {
  const before = process.env.NEARDUP_ZSTD;
  try {
    for (const mode of ['js', 'auto']) {
      process.env.NEARDUP_ZSTD = mode;
      await fn(mode);
    }
  } finally {
    if (before === undefined) delete process.env.NEARDUP_ZSTD;
    else process.env.NEARDUP_ZSTD = before;
  }
}

test('.zst streams across frames and chunk boundaries, with either decoder (property)', async () => {
  await withEachDecoder(async (mode) => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 5000 }), fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 1, max: 997 }), async (data, frame, chunk) => {
        const z = await zstd(Buffer.from(data), frame);
        async function* chunks(): AsyncGenerator<Buffer> {
          for (let i = 0; i < z.length; i += chunk) yield z.subarray(i, i + chunk);
        }
        const out: Buffer[] = [];
        for await (const c of zstdDecompress(chunks())) out.push(c);
        assert.deepEqual(Buffer.concat(out), Buffer.from(data), mode);
      }),
      { numRuns: mode === 'js' ? 60 : 15 },
    );
  });
});

test('a truncated or corrupt .zst is an error naming the file, with either decoder; a reader that stops early stops the decoder', async () => {
  const dir = tmpDir();
  const z = await zstd('{"text":"a"}\n'.repeat(1000));
  const trunc = path.join(dir, 'trunc.jsonl.zst');
  fs.writeFileSync(trunc, z.subarray(0, z.length - 5));
  const bad = Buffer.from(z);
  for (let i = 12; i < bad.length - 4; i += 3) bad[i] = bad[i]! ^ 0x5a;
  const corrupt = path.join(dir, 'corrupt.jsonl.zst');
  fs.writeFileSync(corrupt, bad);
  const early = path.join(dir, 'early.jsonl.zst');
  fs.writeFileSync(early, await zstd('{"text":"a"}\n{"text": oops\n' + '{"text":"more"}\n'.repeat(300000)));
  await withEachDecoder(async (mode) => {
    const e = await failure(trunc);
    assert.ok(e instanceof InputError, `${mode}: ${String(e)}`);
    assert.match(e.message, /trunc\.jsonl\.zst: invalid zstd data \(.+\)/, mode);
    assert.match((await failure(corrupt)).message, /corrupt\.jsonl\.zst: invalid (zstd data|UTF-8|JSON)|corrupt\.jsonl\.zst:\d+:/, mode);
    // The error comes from line 2 while the decoder still has 300,000 lines to go: it is stopped.
    const e2 = await failure(early);
    assert.ok(e2 instanceof InputError && e2.line === 2, `${mode}: ${String(e2)}`);
  });
});

const DOCS = Array.from({ length: 25 }, (_, i) => `document number ${i} about ${i % 3 === 0 ? 'parquet files' : 'zstd frames'} ${'x'.repeat(i)}`);

test('Parquet: every codec, every row group, text and id columns, in row order', async () => {
  const dir = tmpDir();
  for (const codec of CODECS) {
    const file = path.join(dir, `d-${codec}.parquet`);
    await writeParquet(
      file,
      [
        { name: 'id', data: DOCS.map((_, i) => BigInt(1000 + i)), type: 'INT64' },
        { name: 'title', data: DOCS.map((_, i) => `t${i}`), type: 'STRING' },
        { name: 'text', data: DOCS, type: 'STRING' },
      ],
      codec,
      4,
    );
    const { records, input } = await readAll(file, { fields: { id: 'id' } });
    assert.equal(input.format, 'parquet');
    assert.deepEqual(records.map((r) => r.text), DOCS, codec);
    assert.deepEqual(records.map((r) => r.id), DOCS.map((_, i) => String(1000 + i)));
    assert.deepEqual(records.map((r) => r.row), DOCS.map((_, i) => i));
    const two = await readAll(file, { fields: { text: ['title', 'text'] } });
    assert.equal(two.records[3]!.text, `t3 ${DOCS[3]}`);
    assert.ok(input.bytesRead() > 0 && input.bytesRead() <= input.size!);
  }
});

test('Parquet: recognised by its magic bytes, optional text is empty, struct fields by dotted path, lists joined', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'nested.bin');
  const schema = [
    { name: 'root', num_children: 4 },
    { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
    { name: 'body', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
    { name: 'meta', repetition_type: 'OPTIONAL', num_children: 2 },
    { name: 'title', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
    { name: 'year', type: 'INT32', repetition_type: 'OPTIONAL' },
    { name: 'tags', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  ];
  await writeParquetSchema(file, schema, [
    { name: 'id', data: ['a', 'b', null] },
    { name: 'body', data: ['body a', null, 'body c'] },
    { name: 'meta', data: [{ title: 'T a', year: 2001 }, { title: 'T b', year: null }, null] },
    { name: 'tags', data: [['x', 'y'], [], null] },
  ]);
  const { records, input } = await readAll(file, { fields: { text: ['body'] } });
  assert.equal(input.format, 'parquet');
  assert.deepEqual(records.map((r) => r.text), ['body a', '', 'body c']);
  assert.deepEqual((await readAll(file, { fields: { text: ['meta.title', 'tags'] } })).records.map((r) => r.text), ['T a x y', 'T b ', ' ']);
  // A struct as text, a missing column, a null id: clear errors naming file, column, row group and row.
  const e1 = await failure(file, { fields: { text: ['meta'] } });
  assert.ok(e1 instanceof UsageError);
  assert.match(e1.message, /nested\.bin: column "meta" is a struct, not text: choose a field inside it \(meta\.title, meta\.year\)/);
  assert.match(
    (await failure(file, { fields: { text: ['nope'] } })).message,
    /nested\.bin: no column "nope"; columns: id, body, meta\.title, meta\.year, tags\.list\.element/,
  );
  assert.match((await failure(file, { fields: { text: ['tags'], id: 'tags' } })).message, /column "tags" is a list, not an id/);
  assert.match((await failure(file, { fields: { text: ['body'], id: 'id' } })).message, /nested\.bin: row group 0, row 2: id column "id" is null/);
  // Without --text: the text column is "text", else the only column, else a usage error listing the columns.
  assert.match((await failure(file)).message, /no column named "text": choose the text column\(s\) \(columns: id, body/);
});

test('Parquet: a corrupt footer or row group is named; --skip-invalid skips the row group and counts its rows', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'c.parquet');
  await writeParquet(file, [{ name: 'text', data: DOCS, type: 'STRING' }], 'GZIP', 10);
  const good = fs.readFileSync(file);
  const notParquet = path.join(dir, 'np.parquet');
  fs.writeFileSync(notParquet, good.subarray(0, good.length - 20));
  const e0 = await failure(notParquet);
  assert.ok(e0 instanceof InputError);
  assert.match(e0.message, /np\.parquet: not a valid Parquet file/);
  // Corrupt the second row group's gzip data (rows 10–19): find its pages after the first group's.
  const bad = Buffer.from(good);
  const { parquetMetadataAsync, asyncBufferFromFile } = await import('hyparquet');
  const md = await parquetMetadataAsync(await asyncBufferFromFile(file));
  const col = md.row_groups[1]!.columns[0]!.meta_data!;
  const from = Number(col.dictionary_page_offset ?? col.data_page_offset);
  for (let i = from + 30; i < from + Number(col.total_compressed_size) - 2; i++) bad[i] = 0x41;
  const broken = path.join(dir, 'broken.parquet');
  fs.writeFileSync(broken, bad);
  const e = await failure(broken);
  assert.ok(e instanceof InputError, String(e));
  assert.match(e.message, /broken\.parquet: row group 1 \(rows 10–19\): cannot decode the row group/);
  const { records, input } = await readAll(broken, { skipInvalid: true });
  assert.deepEqual(records.map((r) => r.text), [...DOCS.slice(0, 10), ...DOCS.slice(20)]);
  assert.deepEqual(records.map((r) => r.row), [...DOCS.keys()].filter((i) => i < 10 || i >= 20));
  assert.equal(input.skips.count, 10);
  assert.deepEqual([...input.skips.perFile!], [[broken, 10]]);
});

test('Parquet: text that is not valid UTF-8 is an invalid record, not U+FFFD', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'u.parquet');
  await writeParquet(file, [{ name: 'text', data: [Buffer.from('ok'), Buffer.from([0x66, 0xff, 0x6f]), Buffer.from('fine')], type: 'BYTE_ARRAY' }]);
  assert.match((await failure(file)).message, /u\.parquet: row group 0, row 1: column "text" is not valid UTF-8/);
  assert.deepEqual((await readAll(file, { skipInvalid: true })).records.map((r) => r.text), ['ok', 'fine']);
});

test('Parquet cannot come from standard input', async () => {
  const e = await failure('-', { format: 'parquet' });
  assert.ok(e instanceof UsageError);
  assert.match(e.message, /Parquet cannot be read from standard input/);
});

/** Makes shards of mixed formats in `dir`: returns the texts in reading order. */
async function makeShards(dir: string): Promise<string[]> {
  fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
  const a = ['alpha one', 'alpha two'];
  const b = ['beta one', 'beta two', 'beta three'];
  const c = DOCS.slice(0, 7);
  const d = ['delta'];
  fs.writeFileSync(path.join(dir, 'a.jsonl.gz'), gzipSync(a.map((t) => JSON.stringify({ text: t })).join('\n') + '\n'));
  fs.writeFileSync(path.join(dir, 'b.jsonl.zst'), await zstd(b.map((t) => JSON.stringify({ text: t })).join('\n')));
  await writeParquet(path.join(dir, 'c.parquet'), [{ name: 'text', data: c, type: 'STRING' }], 'ZSTD', 3);
  fs.writeFileSync(path.join(dir, 'sub', 'd.csv.zst'), await zstd('text\n' + d.join('\n') + '\n'));
  fs.writeFileSync(path.join(dir, '_SUCCESS'), '');
  fs.writeFileSync(path.join(dir, '.a.jsonl.gz.crc'), 'x');
  return [...a, ...b, ...c, ...d];
}

test('a directory of shards: sorted relative paths, each shard in its own format, rows numbered across shards', async () => {
  const dir = tmpDir();
  const texts = await makeShards(dir);
  const { records, input } = await readAll(dir);
  assert.deepEqual(input.shards!.shards.map((s) => s.rel), ['a.jsonl.gz', 'b.jsonl.zst', 'c.parquet', 'sub/d.csv.zst']);
  assert.deepEqual(input.shardFormats, ['jsonl', 'jsonl', 'parquet', 'csv']);
  assert.deepEqual(records.map((r) => r.text), texts);
  assert.deepEqual(records.map((r) => r.row), texts.map((_, i) => i));
  assert.deepEqual(records.map((r) => r.shard), [0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 3]);
  assert.equal(input.bytesRead(), input.size);
});

test('shards are read in code-point order of their names, whatever order the directory lists them in', async () => {
  const dir = tmpDir();
  // Names whose code-point order differs from locale and numeric order (B < a, a10 < a9).
  // Subdirectories interleave with files in name order (a directory walk would list them last).
  const names = Array.from({ length: 40 }, (_, i) => `${['B', 'a', 'Z', 'é', '_x', 'a1', 'm/', 'c/d/'][i % 8]}${(i * 7919) % 97}.jsonl`).filter((n) =>
    !n.startsWith('_')
  );
  for (const n of names) fs.mkdirSync(path.dirname(path.join(dir, n)), { recursive: true });
  // Created in a scrambled order (tmpfs lists newest first, ext4 by hash).
  const scrambled = names.map((n, i) => ({ n, k: (i * 31) % names.length })).sort((a, b) => a.k - b.k).map((x) => x.n);
  for (const n of scrambled) fs.writeFileSync(path.join(dir, n), JSON.stringify({ text: n }) + '\n');
  const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const input of [dir, path.join(dir, '**/*.jsonl')]) {
    const { records } = await readAll(input);
    assert.deepEqual(records.map((r) => r.text), sorted);
  }
});

test('a glob of shards: sorted, relative to the glob base; no match is a usage error', async () => {
  const dir = tmpDir();
  const texts = await makeShards(dir);
  const { records, input } = await readAll(path.join(dir, '*.{gz,zst,parquet}'));
  assert.deepEqual(input.shards!.shards.map((s) => s.rel), ['a.jsonl.gz', 'b.jsonl.zst', 'c.parquet']);
  assert.equal(input.shards!.base, dir);
  assert.deepEqual(records.map((r) => r.text), texts.slice(0, -1));
  const deep = await readAll(path.join(dir, '**/*.zst'));
  assert.deepEqual(deep.input.shards!.shards.map((s) => s.rel), ['b.jsonl.zst', 'sub/d.csv.zst']);
  const e = await failure(path.join(dir, '*.nothing'));
  assert.ok(e instanceof UsageError);
  assert.match(e.message, /no file matches/);
});

test('directories: documents stay documents; shards with documents or unknown files are usage errors; --format forces shards', async () => {
  const dir = tmpDir();
  fs.writeFileSync(path.join(dir, 'a.txt'), 'doc a');
  fs.writeFileSync(path.join(dir, 'notes.json'), '{}');
  assert.equal((await readAll(dir)).input.format, 'dir');
  fs.writeFileSync(path.join(dir, 'b.jsonl'), '{"text":"x"}\n');
  assert.match((await failure(dir)).message, /holds both shard files \(b\.jsonl\) and document files \(a\.txt\): read it as format dir/);
  assert.equal((await readAll(dir, { format: 'dir' })).records.length, 1);
  fs.rmSync(path.join(dir, 'a.txt'));
  fs.writeFileSync(path.join(dir, 'README'), 'about');
  assert.match((await failure(dir)).message, /the format of README is not known from the name/);
  const forced = await readAll(dir, { format: 'text' });
  assert.deepEqual(forced.input.shards!.shards.map((s) => s.rel), ['README', 'b.jsonl', 'notes.json']);
});

test('a corrupt shard in a glob is named with its line; --skip-invalid goes on and says which shard lost what', async () => {
  const dir = tmpDir();
  await makeShards(dir);
  fs.writeFileSync(path.join(dir, 'b2.jsonl.zst'), await zstd('{"text":"ok"}\n{"text": broken\n{"text":"ok too"}\n'));
  const e = await failure(path.join(dir, '*.zst'));
  assert.ok(e instanceof InputError);
  assert.equal(e.file, path.join(dir, 'b2.jsonl.zst'));
  assert.equal(e.line, 2);
  const { records, input } = await readAll(path.join(dir, '*.zst'), { skipInvalid: true });
  assert.deepEqual(records.map((r) => r.text), ['beta one', 'beta two', 'beta three', 'ok', 'ok too']);
  assert.deepEqual(records.map((r) => r.row), [0, 1, 2, 3, 5]);
  assert.deepEqual([...input.skips.perFile!], [[path.join(dir, 'b2.jsonl.zst'), 1]]);
  // A truncated shard: the error names it.
  const z = await zstd('{"text":"a"}\n'.repeat(500));
  fs.writeFileSync(path.join(dir, 'b3.jsonl.zst'), z.subarray(0, z.length >> 1));
  assert.match((await failure(path.join(dir, '*.zst'), { skipInvalid: true })).message, /b3\.jsonl\.zst: invalid zstd data/);
});
