/**
 * Issue 16 items 3, 8 and 10 (JSONL types): property tests for every line reader. Any field content
 * (quotes, tabs, CR, LF, CRLF, a byte-order mark) either round-trips or is reported with its line;
 * a record never silently swallows the lines after it; the raw text and line break of each record
 * reproduce the input byte for byte. Plus the CLI: `--output dedup|annotate` keep rows byte for byte.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { openInput, type ReadOptions } from '../../../src/io/read/read.js';
import type { InputRecord } from '../../../src/io/read/record.js';
import { InputError } from '../../../src/common/errors.js';
import { csvField } from '../../../src/io/write/write.js';
import { createProgram, runProgram } from '../../../src/cli/program.js';
import { dedupCommand } from '../../../src/cli/dedup/command.js';
import { tmpDir } from '../../cliUtil.js';

const RUNS = Number(process.env.NEARDUP_FUZZ_RUNS ?? 150);
const BOM = '\ufeff';

/** Characters that break naive readers. */
const hostile = fc.constantFrom('a', 'b', ' ', '"', '\t', '\r', '\n', ',', 'é', '😀', BOM, '\u2028', '\\');
const value = (max = 12) => fc.string({ unit: hostile, maxLength: max });
const oneLine = (max = 12) => fc.string({ unit: hostile.filter((c) => c !== '\n' && c !== '\r'), maxLength: max });

async function read(data: string, options: ReadOptions) {
  const input = await openInput('-', { skipInvalid: true, raw: true, ...options, stdin: Readable.from([Buffer.from(data)]) });
  const records: InputRecord[] = [];
  for await (const r of input.records) records.push(r);
  return { records, input, skipped: input.skips.count, examples: input.skips.examples };
}

/** Physical lines of `data` as textLines cuts them (after an optional leading BOM): [content, eol]. */
function physical(data: string): [string, string][] {
  const d = data.startsWith(BOM) ? data.slice(1) : data;
  const out: [string, string][] = [];
  const re = /([^\n]*?)(\r?\n|\r?$)/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < d.length && (m = re.exec(d)) !== null) {
    out.push([m[1]!, m[2]!]);
    at = re.lastIndex;
    if (m[0] === '') break;
  }
  return out;
}

/** Each record's raw text and line break are exactly lines [line, line + k) of the input. */
function assertRawIsInput(lines: [string, string][], r: InputRecord): number {
  let s = '';
  let k = 0;
  const want = r.raw! + r.eol!;
  while (s.length < want.length && r.line - 1 + k < lines.length) {
    const [c, e] = lines[r.line - 1 + k]!;
    s += c + e;
    k++;
  }
  assert.equal(s, want, `line ${r.line}: raw + eol is the input`);
  return k;
}

test('TSV (default, IANA): a line is a record; any content round-trips or is reported at its line, never merged', async () => {
  const line = fc.oneof(
    fc.tuple(oneLine(), oneLine()).map(([a, b]) => `${a.replace(/\t/g, '')}\t${b.replace(/\t/g, '')}`),
    value(20),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n')), { maxLength: 25 }), fc.boolean(), async (rows, bom) => {
      const data = (bom ? BOM : '') + 'id\ttext\n' + rows.map(([l, e]) => l + e).join('');
      const lines = physical(data);
      const got = await read(data, { format: 'tsv', columns: { text: ['text'], id: 'id' } });
      assert.equal(got.input.bom, bom);
      // Expected, from the physical lines alone: a non-blank line with exactly one tab is a record.
      const want: { line: number; id: string; text: string }[] = [];
      let bad = 0;
      lines.slice(1).forEach(([c], i) => {
        if (c === '') return;
        const f = c.split('\t');
        if (f.length === 2) want.push({ line: i + 2, id: f[0]!, text: f[1]! });
        else bad++;
      });
      assert.deepEqual(
        got.records.map((r) => ({ line: r.line, id: r.id, text: r.text })),
        want,
      );
      assert.equal(got.skipped, bad, 'every other non-blank line is reported');
      for (const e of got.examples) assert.match(e.message, /^<stdin>:\d+: ragged row/);
      for (const r of got.records) assert.equal(assertRawIsInput(lines, r), 1, 'one line per record');
    }),
    { numRuns: RUNS },
  );
});

test('TSV: the issue-16 file keeps all four rows (one reported row with --tsv-quotes, never a silent merge)', async () => {
  const data =
    'id\ttext\nr1\t"Bright flat near the station with garden\nr2\tsecond ad, a studio in Trastevere\nr3\tthird ad, office in EUR "B"\nr4\tfourth ad about a villa in Ostia\n';
  const plain = await read(data, { format: 'tsv', columns: { text: ['text'], id: 'id' } });
  assert.deepEqual(plain.records.map((r) => r.id), ['r1', 'r2', 'r3', 'r4']);
  assert.equal(plain.records[0]!.text, '"Bright flat near the station with garden');
  const quoted = await read(data, { format: 'tsv', tsvQuotes: true, columns: { text: ['text'], id: 'id' } });
  assert.deepEqual(quoted.records.map((r) => r.id), ['r2', 'r3', 'r4']);
  assert.equal(quoted.skipped, 1);
  assert.match(quoted.examples[0]!.message, /^<stdin>:2: a quoted field opened here is not closed properly/);
  await assert.rejects(
    read(data, { format: 'tsv', tsvQuotes: true, skipInvalid: false, columns: { text: ['text'], id: 'id' } }),
    (e: unknown) => e instanceof InputError && e.line === 2,
  );
});

for (
  const [format, delim] of [
    ['csv', ','],
    ['tsv', '\t'],
  ] as const
) {
  const opts: ReadOptions = { format, tsvQuotes: true, columns: { text: ['text'], id: 'id' } };
  test(`${format.toUpperCase()} with quotes: any field content written quoted round-trips exactly, raw bytes included`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(oneLine(6).map((s) => s.replace(/[\t,"]/g, '') || 'x'), value(16)), { minLength: 1, maxLength: 15 }),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        async (rows, eol, bom) => {
          const data = (bom ? BOM : '') + `id${delim}text${eol}` + rows.map(([id, t]) => `${csvField(id, delim)}${delim}${csvField(t, delim)}${eol}`).join('');
          const got = await read(data, { ...opts, skipInvalid: false });
          assert.deepEqual(
            got.records.map((r) => [r.id, r.text]),
            rows,
          );
          const lines = physical(data);
          let multi = 0;
          for (const r of got.records) if (assertRawIsInput(lines, r) > 1) multi++;
          assert.equal(got.input.skips.multiline ?? 0, multi, 'records spanning lines are counted');
        },
      ),
      { numRuns: RUNS },
    );
  });

  test(`${format.toUpperCase()} with quotes: hostile unescaped lines never merge silently (every multi-line record is counted)`, async () => {
    const line = fc.oneof(oneLine(20), fc.tuple(oneLine(6), oneLine(12)).map(([a, b]) => `${a}${delim}${b}`), oneLine(10).map((s) => `1${delim}"${s}`));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n')), { maxLength: 25 }), async (rows) => {
        const data = `id${delim}text\n` + rows.map(([l, e]) => l + e).join('');
        const lines = physical(data);
        const got = await read(data, opts);
        let multi = 0;
        let prev = 1;
        for (const r of got.records) {
          assert.ok(r.line > prev, 'records in order');
          const k = assertRawIsInput(lines, r);
          if (k > 1) multi++;
          prev = r.line + k - 1;
        }
        assert.equal(got.input.skips.multiline ?? 0, multi, 'every record that spans lines is counted and reported');
        for (const e of got.examples) assert.match(e.message, /^<stdin>:\d+: /);
      }),
      { numRuns: RUNS },
    );
  });
}

test('JSONL: any string round-trips; numbers, null, booleans, arrays and objects as text are reported with line and field', async () => {
  const other = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constant(null),
    fc.boolean(),
    fc.array(value(4), { maxLength: 3 }),
    fc.dictionary(oneLine(3), value(3), { maxKeys: 2 }),
  );
  const item = fc.oneof({ weight: 3, arbitrary: value(20).map((t) => ({ ok: true, text: t as unknown })) }, {
    weight: 1,
    arbitrary: other.map((t) => ({ ok: false, text: t as unknown })),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(item, fc.constantFrom('\n', '\r\n')), { maxLength: 20 }), fc.boolean(), async (items, bom) => {
      const data = (bom ? BOM : '') + items.map(([it, e], i) => JSON.stringify({ id: `d${i}`, text: it.text }) + e).join('');
      const got = await read(data, { format: 'jsonl', fields: { text: ['text'], id: 'id' } });
      const want = items.flatMap(([it], i) => (it.ok ? [{ id: `d${i}`, text: it.text as string, line: i + 1 }] : []));
      assert.deepEqual(
        got.records.map((r) => ({ id: r.id, text: r.text, line: r.line })),
        want,
      );
      const bad = items.flatMap(([it], i) => (it.ok ? [] : [i + 1]));
      assert.equal(got.skipped, bad.length);
      if (bad.length)
        assert.match(got.examples[0]!.message, new RegExp(`^<stdin>:${bad[0]}: field "text" is (a number|null|a boolean|an array|an object), not a string$`));
      const lines = physical(data);
      for (const r of got.records) assert.equal(assertRawIsInput(lines, r), 1);
    }),
    { numRuns: RUNS },
  );
});

for (const format of ['text', 'idtext'] as const) {
  test(`${format}: every line is read (or reported) on its own, raw bytes kept`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(value(15), fc.constantFrom('\n', '\r\n')), { maxLength: 20 }), async (rows) => {
        const data = rows.map(([l, e]) => l + e).join('');
        const lines = physical(data);
        const got = await read(data, { format });
        const want: { line: number; text: string; id?: string }[] = [];
        let bad = 0;
        lines.forEach(([c], i) => {
          if (format === 'text') want.push({ line: i + 1, text: c });
          else if (c.trim() === '') return;
          else if (c.includes('\t')) want.push({ line: i + 1, id: c.slice(0, c.indexOf('\t')), text: c.slice(c.indexOf('\t') + 1) });
          else bad++;
        });
        assert.deepEqual(
          got.records.map((r) => ({ line: r.line, text: r.text, ...(format === 'idtext' ? { id: r.id } : {}) })),
          want,
        );
        assert.equal(got.skipped, bad);
        for (const r of got.records) assert.equal(assertRawIsInput(lines, r), 1);
      }),
      { numRuns: RUNS },
    );
  });
}

/** Runs `neardup dedup` in this process; returns the exit code. */
async function dedup(args: string[]): Promise<number> {
  const program = createProgram();
  program.addCommand(dedupCommand());
  return runProgram(program, ['node', 'neardup', 'dedup', ...args, '--quiet'], { write: () => true } as unknown as NodeJS.WritableStream);
}

test('dedup --output dedup|annotate keep rows byte for byte: CRLF (also inside quoted CSV fields), a BOM', async () => {
  const dir = tmpDir();
  let n = 0;
  // Distinct texts (no duplicates): dedup must give the input back unchanged.
  const text = fc.tuple(value(10), fc.integer({ min: 0, max: 1e9 })).map(([v, k]) => `${v} unique ${k} ${'qwertyuiop'.slice(k % 7)}`);
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('csv', 'tsv', 'jsonl', 'text'),
      fc.array(fc.tuple(text, fc.constantFrom('\n', '\r\n')), { minLength: 1, maxLength: 8 }),
      fc.boolean(),
      async (format, rows, bom) => {
        const uniq = rows.map(([t, e], i) => [`${i} ${t}`, e] as const);
        let body: string;
        if (format === 'csv') body = `id,text\n` + uniq.map(([t, e], i) => `r${i},${csvField(t)}${e}`).join('');
        else if (format === 'tsv') body = `id\ttext\r\n` + uniq.map(([t, e], i) => `r${i}\t${t.replace(/[\t\r\n]/g, ' ')}${e}`).join('');
        else if (format === 'jsonl') body = uniq.map(([t, e], i) => JSON.stringify({ id: `r${i}`, text: t }) + e).join('');
        else body = uniq.map(([t, e]) => t.replace(/[\r\n]/g, ' ') + e).join('');
        const data = (bom ? BOM : '') + body;
        const file = path.join(dir, `in${n++}.${format === 'text' ? 'txt' : format}`);
        fs.writeFileSync(file, data);
        const out = path.join(dir, `out${n}.${format === 'text' ? 'txt' : format}`);
        const idArgs = format === 'csv' || format === 'tsv'
          ? ['--text', 'text', '--id', 'id']
          : format === 'jsonl'
          ? ['--text-field', 'text', '--id-field', 'id']
          : [];
        assert.equal(await dedup([file, ...idArgs, '--threshold', '1', '--output', 'dedup', '--out', out]), 0);
        assert.equal(fs.readFileSync(out, 'utf8'), data, 'dedup without duplicates gives the input back byte for byte');
        assert.equal(await dedup([file, ...idArgs, '--threshold', '1', '--output', 'annotate', '--out', out]), 0);
        const annotated = fs.readFileSync(out, 'utf8');
        assert.equal(annotated.startsWith(BOM), bom, 'the BOM is kept');
        // Every line break of the input is still there, in the same order (CRLF stays CRLF).
        const breaks = (s: string) => s.match(/\r?\n/g) ?? [];
        if (format !== 'jsonl') assert.deepEqual(breaks(annotated), breaks(data));
      },
    ),
    { numRuns: Math.min(RUNS, 40) },
  );
});
