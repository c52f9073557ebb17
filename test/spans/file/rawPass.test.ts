/**
 * Pass 2 over a plain JSONL file read as bytes (src/spans/file/rawPass.ts) against pass 2 over the
 * JSONL reader's records (the route a limit takes): the same output bytes, audit and summary, on
 * files with byte-order marks, CRLF and lone-CR line ends, blank lines (ASCII and Unicode
 * whitespace), spaces before a record, escapes, and a last line with or without its break; and
 * the inputs that must not take the byte route.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { dedupSpansFile, type SpansFileOptions } from '../../../src/spans/file/file.js';
import { ByteBatch, rawPassFits } from '../../../src/spans/file/rawPass.js';
import { openInput } from '../../../src/io/read/read.js';
import type { OutputSink } from '../../../src/io/write/output.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spans-raw-'));
const POOL = [
  'Accept all cookies.',
  'accept  ALL cookies.',
  'Read more…',
  '我喜欢猫。',
  'Emoji 😀 here.',
  'say "hi", then go',
  'Unique text',
  'lone \ud800 half',
];
const BLANKS = ['', '   ', '\t', ' \u00a0 ', '\u3000'];
let run = 0;

/** The output, audit and summary of `dedupSpansFile` on `input`, by the byte route or (`limit`) the records' route. */
async function outputs(input: string, o: SpansFileOptions, viaRecords: boolean): Promise<[string, string, string]> {
  const out = path.join(tmp, `out${run}.jsonl`);
  const audit = path.join(tmp, `removed${run++}.tsv`);
  const read = { ...o.read, fields: { id: 'id' }, limit: viaRecords ? 1e9 : undefined };
  const r = await dedupSpansFile(input, { ...o, read, out: o.mode === 'none' ? undefined : out, removed: audit });
  const got = o.mode === 'none' ? '' : fs.readFileSync(out, 'latin1');
  return [got, fs.readFileSync(audit, 'latin1'), JSON.stringify({ ...r, summary: r.summary })];
}

test('JSONL as bytes: output, audit and summary as pass 2 over records', async () => {
  const doc = fc.array(fc.tuple(fc.integer({ min: 0, max: POOL.length - 1 }), fc.constantFrom('\n', '\r\n', '\n\n', ' ')), { maxLength: 5 }).map((ps) =>
    ps.map(([p, s]) => POOL[p]! + s).join('')
  );
  const line = fc.oneof(
    { weight: 4, arbitrary: fc.record({ text: doc, lead: fc.constantFrom('', ' ', '\t '), esc: fc.boolean() }) },
    { weight: 1, arbitrary: fc.constantFrom(...BLANKS).map((blank) => ({ blank })) },
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n')), { minLength: 1, maxLength: 12 }),
      fc.constantFrom('line' as const, 'paragraph' as const, 'sentence' as const),
      fc.option(fc.constant(2), { nil: undefined }),
      fc.constantFrom('dedup' as const, 'none' as const),
      fc.boolean(),
      fc.constantFrom('\n', '', '\r'),
      async (rows, unit, minDocs, mode, bom, last) => {
        let id = 0;
        const lines = rows.map(([l, eol]) => {
          if ('blank' in l) return [l.blank, eol] as const;
          // Every non-ASCII code unit escaped (lone surrogates too), or JSON.stringify's escapes only.
          const text = JSON.stringify(l.text).replace(/[\u0080-\uffff]/g, (c) => (l.esc ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c));
          return [`${l.lead}{"id":"d${id++}","text":${text},"n":1.50}`, eol] as const;
        });
        if (id === 0) return;
        const body = lines.map(([l, e], i) => l + (i + 1 < lines.length ? e : last)).join('');
        const input = path.join(tmp, `in${run}.jsonl`);
        fs.writeFileSync(input, (bom ? '\ufeff' : '') + body);
        const o: SpansFileOptions = { mode, spans: { unit, minDocs, window: unit === 'sentence' ? 2 : undefined } };
        assert.deepEqual(await outputs(input, o, false), await outputs(input, o, true));
      },
    ),
    { numRuns: 120, seed: 50 },
  );
});

test('blank lines and spaces before records: rows and line numbers as the reader counts them', async () => {
  const input = path.join(tmp, 'blanks.jsonl');
  const a = '{"id":"a","text":"Same line\\nOther"}';
  fs.writeFileSync(input, `\n  \r\n${a}\n\u00a0\n \t${a.replace('"a"', '"b"')}\r\n\n{"id":"c","text":"Same line"}`);
  const o: SpansFileOptions = { spans: { unit: 'line' } };
  const bytes = await outputs(input, o, false);
  assert.deepEqual(bytes, await outputs(input, o, true));
  assert.equal(bytes[0], `${a}\n`);
});

/** A sink that records what it gets. */
function memorySink(): OutputSink & { bytes: Buffer[] } {
  const bytes: Buffer[] = [];
  return {
    name: 'mem',
    bytes,
    write: async (t) => void bytes.push(Buffer.from(t, 'utf8')),
    writeBytes: async (b) => void bytes.push(Buffer.from(b)),
    close: async () => {},
    abort: async () => {},
  };
}

test('ByteBatch: text and bytes in order, encoded as the sinks encode, large pieces past the buffer', async () => {
  const sink = memorySink();
  const b = new ByteBatch(sink);
  const big = 'x'.repeat(1 << 20);
  const parts: (string | Buffer)[] = ['a\ud800b😀', Buffer.from('raw'), big, Buffer.alloc(3 << 20, 0x41), 'é'.repeat(400000), 'end'];
  for (const p of parts) await (typeof p === 'string' ? b.write(p) : b.writeBytes(p));
  await b.close();
  const want = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
  assert.ok(Buffer.concat(sink.bytes).equals(want));
});

test('the byte route is taken only by a plain JSONL file read whole', async () => {
  const text = '{"text":"a"}\n';
  const plain = path.join(tmp, 'plain.jsonl');
  fs.writeFileSync(plain, text);
  const gz = path.join(tmp, 'packed.jsonl');
  fs.writeFileSync(gz, zlib.gzipSync(text));
  const tsv = path.join(tmp, 'rows.tsv');
  fs.writeFileSync(tsv, 'text\na\n');
  const fits = async (file: string, read = {}, out: OutputSink | undefined = memorySink()): Promise<boolean> => {
    const input = await openInput(file, read);
    try {
      return await rawPassFits(file, read, input, out);
    } finally {
      await input.records.return(undefined);
    }
  };
  assert.equal(await fits(plain), true);
  assert.equal(await fits(plain, {}, undefined), true);
  assert.equal(await fits(gz), false);
  assert.equal(await fits(tsv), false);
  assert.equal(await fits(plain, { limit: 5 }), false);
  assert.equal(await fits(plain, { skipInvalid: true }), false);
  assert.equal(await fits(plain, {}, { ...memorySink(), writeBytes: undefined }), false);
});
