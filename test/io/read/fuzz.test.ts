/**
 * Issue 7, fuzzing the readers (TSV, CSV, JSONL, text, id-tab-text), driven by random Unicode (lone
 * surrogates, zero-width characters, RTL marks, combining marks, NUL, quotes, delimiters, line
 * breaks) and by random bytes. For every input: nothing but an InputError is
 * ever thrown, errors name file:line, and every input record is either read or counted as skipped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { openInput, type ReadOptions } from '../../../src/io/read/read.js';
import { InputError } from '../../../src/common/errors.js';
import type { InputRecord } from '../../../src/io/read/record.js';
import { createShingler } from '../../../src/text/shingler.js';
import { RUNS, nasty, nastyLine } from '../../helpers/fuzz.js';

async function readAll(data: Buffer | string, options: ReadOptions): Promise<{ records: InputRecord[]; skipped: number; examples: InputError[] }> {
  const input = await openInput('-', { ...options, stdin: Readable.from([Buffer.from(data)]) });
  const records: InputRecord[] = [];
  for await (const r of input.records) records.push(r);
  return { records, skipped: input.skips.count, examples: input.skips.examples };
}

/** Reads, and asserts that a failure is an InputError located at <stdin>:line (or <stdin>: for the whole input). */
async function readOrInputError(data: Buffer | string, options: ReadOptions): Promise<Awaited<ReturnType<typeof readAll>> | InputError> {
  try {
    return await readAll(data, options);
  } catch (e) {
    if (!(e instanceof InputError)) throw new Error(`not an InputError: ${String((e as Error)?.stack ?? e)}`);
    assert.match(e.message, /^<stdin>(:\d+)?: \S/);
    assert.ok(!/\n\s+at /.test(e.message), 'no stack trace in the message');
    return e;
  }
}

/** No lone surrogate: decided here on its own, not by the reader's helper. */
const wellFormed = (s: string): boolean => Buffer.from(s, 'utf8').toString('utf8') === s;

/** What our readers make of a JS string written as UTF-8: lone surrogates become U+FFFD. */
const viaUtf8 = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

/** Quotes a CSV/TSV field when it needs it. */
function csvField(v: string, delim: string): string {
  return v.includes(delim) || v.includes('"') || v.includes('\n') || v.includes('\r') ? `"${v.replace(/"/g, '""')}"` : v;
}

test('text lines: every line is a document, exactly as written (random Unicode)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(nastyLine(), { minLength: 1, maxLength: 30 }), async (lines) => {
      const data = lines.join('\n');
      const { records, skipped } = await readAll(data, { format: 'text' });
      const expected = viaUtf8(data).split('\n');
      if (expected.length > 0 && expected[0]!.startsWith('\ufeff')) expected[0] = expected[0]!.slice(1); // BOM
      if (expected[expected.length - 1] === '') expected.pop(); // an empty final line is not a document (a lone BOM is an empty file)
      assert.equal(skipped, 0);
      assert.deepEqual(
        records.map((r) => r.text),
        expected.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)),
      );
      assert.deepEqual(
        records.map((r) => r.line),
        expected.map((_, i) => i + 1),
      );
    }),
    { numRuns: RUNS },
  );
});

test('JSONL: valid objects are read exactly (lone surrogates survive \\u escapes in texts; an id holding one is invalid, as UTF-8 cannot spell it); every other non-blank line is skipped and counted', async () => {
  const doc = fc.record({ id: nasty(12), text: nasty(60), n: fc.integer() });
  const line = fc.oneof(
    { weight: 4, arbitrary: doc.map((d) => ({ kind: 'doc' as const, d, line: JSON.stringify(d) })) },
    { weight: 1, arbitrary: nastyLine(30).map((s) => ({ kind: 'junk' as const, d: undefined, line: s })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('[1,2]', '"text"', '{"text": {"a": 1}}', '{"id": 1}', 'null', '{', '{"text":"x"} trailing').map((s) => ({
        kind: 'junk' as const,
        d: undefined,
        line: s,
      })),
    },
  );
  await fc.assert(
    fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 25 }), async (items) => {
      const data = items.map((i) => i.line).join('\n') + '\n';
      const got = await readAll(data, { format: 'jsonl', skipInvalid: true, fields: { text: ['text'], id: 'id' } });
      // What a line should give, decided independently of the reader.
      const wanted: { id: string; text: string }[] = [];
      let nonBlank = 0;
      for (const it of items) {
        const text = viaUtf8(it.line);
        if (text.trim() === '') continue;
        nonBlank++;
        if (it.kind === 'doc') {
          if (wellFormed(it.d!.id)) wanted.push({ id: it.d!.id, text: it.d!.text });
          continue;
        }
        let o: unknown;
        try {
          o = JSON.parse(text);
        } catch {
          continue;
        }
        const r = o as Record<string, unknown>;
        if (
          r && typeof r === 'object' && !Array.isArray(r) && typeof r.text === 'string'
          && ((typeof r.id === 'string' && wellFormed(r.id)) || typeof r.id === 'number')
        ) {
          wanted.push({ id: String(r.id), text: r.text });
        }
      }
      assert.deepEqual(
        got.records.map((r) => ({ id: r.id, text: r.text })),
        wanted,
      );
      assert.equal(got.records.length + got.skipped, nonBlank, 'every non-blank line is read or skipped');
    }),
    { numRuns: RUNS },
  );
});

for (
  const [format, delim] of [
    ['tsv', '\t'],
    ['csv', ','],
  ] as const
) {
  test(`${format.toUpperCase()}: properly quoted random fields (delimiters, quotes, line breaks, NUL, surrogates) round-trip`, async () => {
    const row = fc.tuple(fc.string({ unit: fc.constantFrom('a', 'b', '1', '2', '-'), minLength: 1, maxLength: 6 }), nasty(50), nasty(10));
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 20 }), fc.boolean(), async (rows, crlf) => {
        const eol = crlf ? '\r\n' : '\n';
        const data = ['id', 'text', 'other'].join(delim) + eol + rows.map((r) => r.map((v) => csvField(v, delim)).join(delim)).join(eol) + eol;
        const got = await readAll(data, { format, tsvQuotes: true, columns: { text: ['text'], id: 'id' } });
        assert.equal(got.skipped, 0);
        // Inside quoted fields, line breaks are kept as written (CRLF stays CRLF: it is part of the value).
        assert.deepEqual(
          got.records.map((r) => [r.id, r.text]),
          rows.map((r) => [r[0], viaUtf8(r[1])]),
        );
        assert.deepEqual(
          got.records.map((r) => r.row),
          rows.map((_, i) => i),
        );
      }),
      { numRuns: RUNS },
    );
  });

  test(`${format.toUpperCase()}: damaged rows (stray and unclosed quotes, wrong field counts) never crash; every record is read or counted`, async () => {
    const good = fc.tuple(fc.integer({ min: 0, max: 999 }), nastyLine(30)).map(([i, t]) => `${i}${delim}${csvField(t, delim)}`);
    const bad = fc.oneof(
      nasty(30),
      nastyLine(20).map((t) => `"${t}`),
      nastyLine(20).map((t) => `1${delim}"${t}`),
      nastyLine(20).map((t) => `1${delim}"${t}"x${delim}y`),
      fc.constant(`1${delim}2${delim}3${delim}4`),
    );
    const line = fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: bad });
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 30 }), async (lines) => {
        const data = `id${delim}text\n` + lines.join('\n') + '\n';
        const got = await readOrInputError(data, { format, tsvQuotes: true, skipInvalid: true, columns: { text: ['text'], id: 'id' } });
        if (got instanceof InputError) {
          assert.fail(`only the header can fail with skipInvalid, got ${got.message}`);
        }
        const rows = got.records.map((r) => r.row);
        for (let i = 1; i < rows.length; i++) assert.ok(rows[i]! > rows[i - 1]!, 'rows increase');
        const seen = got.records.length + got.skipped;
        if (rows.length) assert.ok(rows[rows.length - 1]! < seen, 'row numbers account for skipped records');
        // Every line ends up in some record: read ones cover their lines, skipped ones are counted.
        assert.ok(seen >= 1 || lines.every((l) => viaUtf8(l) === ''));
        for (const e of got.examples) assert.match(e.message, /^<stdin>:\d+: /);
        // Without skipping, the same input either reads fully or fails with file:line.
        const strict = await readOrInputError(data, { format, tsvQuotes: true, columns: { text: ['text'], id: 'id' } });
        if (!(strict instanceof InputError)) assert.equal(got.skipped, 0);
        else assert.ok(got.skipped > 0);
      }),
      { numRuns: RUNS },
    );
  });
}

test('TSV: an unclosed quote skips only its own record; the lines after it are still read', async () => {
  const lines = ['id\ttext', '0\tfirst', '1\t"never closed', ...Array.from({ length: 3000 }, (_, i) => `${i + 2}\tordinary row ${i}`)];
  const got = await readAll(lines.join('\n') + '\n', { format: 'tsv', tsvQuotes: true, skipInvalid: true, columns: { text: ['text'], id: 'id' } });
  assert.equal(got.skipped, 1);
  assert.equal(got.examples[0]!.message, '<stdin>:3: a quoted field is never closed');
  assert.equal(got.records.length, 3001);
  assert.deepEqual(got.records.slice(0, 2).map((r) => [r.id, r.row, r.line]), [
    ['0', 0, 2],
    ['2', 2, 4],
  ]);
  // More lines than a quoted record may span (10,000): the quote is declared unclosed, the rest is read.
  const many = ['id\ttext', '1\t"open', ...Array.from({ length: 12000 }, (_, i) => `${i + 2}\trow`)];
  const got2 = await readAll(many.join('\n'), { format: 'tsv', tsvQuotes: true, skipInvalid: true, columns: { text: ['text'], id: 'id' } });
  assert.equal(got2.skipped, 1);
  assert.equal(got2.records.length, 12000);
});

test('random bytes in every format: only InputErrors (file:line), and with --skip-invalid every line is read or counted', async () => {
  const bytes = fc.array(
    fc.oneof(
      fc.uint8Array({ maxLength: 20 }),
      fc.constantFrom(
        Buffer.from('\n'),
        Buffer.from('\t'),
        Buffer.from('"'),
        Buffer.from([0xc3]),
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from('{"text":"a"}'),
      ),
    ),
    { maxLength: 20 },
  ).map((parts) => Buffer.concat(parts));
  await fc.assert(
    fc.asyncProperty(bytes, fc.constantFrom('text', 'idtext', 'jsonl', 'tsv', 'csv'), async (data, format) => {
      const opts: ReadOptions = { format: format as ReadOptions['format'], ...(format === 'tsv' || format === 'csv' ? { columns: {} } : {}) };
      await readOrInputError(data, opts);
      const got = await readOrInputError(data, { ...opts, skipInvalid: true });
      if (got instanceof InputError) {
        assert.ok(format === 'tsv' || format === 'csv', `${format} failed: ${got.message}`);
        return;
      }
      const lines = data.toString('utf8').replace(/^\ufeff/, '').split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      if (format === 'text') assert.equal(got.records.length + got.skipped, lines.length);
      if (format === 'idtext' || format === 'jsonl') {
        assert.equal(got.records.length + got.skipped, lines.filter((l) => l.trim() !== '').length);
      }
    }),
    { numRuns: RUNS * 2 },
  );
});

test('a single 1 MB line is one document in every format', async () => {
  const unit = 'Appartamento in affitto \u200b Roma \u05e9\u05dc\u05d5\u05dd e\u0301 \u0000 ';
  const big = unit.repeat(Math.ceil((1 << 20) / unit.length));
  for (
    const [format, data] of [
      ['text', big + '\n'],
      ['idtext', `x\t${big}\n`],
      ['jsonl', JSON.stringify({ id: 'x', text: big }) + '\n'],
      ['tsv', `id\ttext\nx\t${big}\n`],
      ['csv', `id,text\nx,"${big}"\n`],
    ] as const
  ) {
    const got = await readAll(data, { format, columns: { text: ['text'], id: 'id' }, fields: { text: ['text'], id: 'id' } });
    assert.equal(got.records.length, 1, format);
    assert.equal(got.records[0]!.text, big, format);
  }
  for (const kind of ['char', 'word', 'spot'] as const) {
    const set = createShingler({ kind }).set(big);
    assert.ok(set.length > 0, kind);
  }
});

test('a line spanning many chunks is joined once (bytes copied stay linear in the line length)', async () => {
  const line = Buffer.alloc(8 << 20, 0x61);
  const chunks: Buffer[] = [];
  for (let i = 0; i < line.length; i += 64 << 10) chunks.push(line.subarray(i, i + (64 << 10)));
  chunks.push(Buffer.from('\nend\n'));
  const concat = Buffer.concat;
  let copied = 0;
  Buffer.concat = ((list: readonly Uint8Array[], n?: number) => {
    const r = concat(list, n);
    copied += r.length;
    return r;
  }) as typeof Buffer.concat;
  try {
    const input = await openInput('-', { format: 'text', stdin: Readable.from(chunks) });
    const lens: number[] = [];
    for await (const r of input.records) lens.push(r.text.length);
    assert.deepEqual(lens, [8 << 20, 3]);
  } finally {
    Buffer.concat = concat;
  }
  // 128 chunks: joining on every chunk copied ~64 times the line; joining once copies it about once.
  assert.ok(copied <= 2 * line.length, `copied ${copied} bytes for a ${line.length}-byte line`);
});
