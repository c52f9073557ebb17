/**
 * Pass 1 over a plain JSONL file read as bytes (src/spans/file/bytePass1.ts, src/spans/jsonScan.ts)
 * against `JSON.parse` and against pass 1 over the JSONL reader's records (the route a limit
 * takes): the scan accepts only lines `JSON.parse` reads as it does, decodes their text to the same
 * code units and UTF-8 length, and `neardup spans` writes the same output, audit and summary (or
 * fails with the same error) on random records: escapes of every kind, `\u` escapes with paired
 * and lone surrogates, CRLF, non-ASCII text, empty text, no text field, extra and nested fields
 * (a nested `text` too), whitespace between tokens, duplicate and escaped keys, invalid JSON.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { dedupSpansFile, type SpansFileOptions } from '../../../src/spans/file/file.js';
import { decodeJsonString, decoded, scanRecord } from '../../../src/spans/jsonScan.js';
import { splitUnitCodes } from '../../../src/spans/unitCodes.js';
import { UnitHasher } from '../../../src/spans/unitHash.js';
import { newUnits, splitUnits } from '../../../src/spans/units.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spans-pass1-'));

/** Pieces of text: ASCII, blanks of every kind, line breaks, non-ASCII, astral, lone surrogates, characters JSON escapes. */
const PIECES = [
  'Accept all cookies.',
  'accept  ALL cookies.',
  'Read more',
  '\n',
  '\r\n',
  '\n\n',
  ' ',
  '\t',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\ufeff',
  'é',
  'Σ',
  'ﬁ',
  '我喜欢猫。',
  '😀',
  '\ud800',
  '\udc00',
  '\u0000',
  '\u001f',
  '"',
  '\\',
  '/',
  '\b\f',
  '\u007f',
];
const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }).map((ps) => ps.join(''));

/** JSON whitespace between tokens (no line feed: it would end the line). */
const ws = fc.constantFrom('', '', '', ' ', '\t', '\r', ' \t ');

/** A JSON string literal of `s`, each code unit written raw (when JSON allows), as a short escape, or as `\u` in either case. */
function literal(s: string, how: number[]): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const pick = how[i % how.length]!;
    const short: Record<number, string> = { 0x22: '\\"', 0x5c: '\\\\', 0x2f: '\\/', 0x08: '\\b', 0x0c: '\\f', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t' };
    const u = `\\u${c.toString(16).padStart(4, '0')}`;
    const raw = c >= 0x20 && c !== 0x22 && c !== 0x5c && !(c >= 0xd800 && c <= 0xdfff);
    if (pick === 0 && raw) out += s[i];
    else if (pick === 0 && c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      out += s[i]! + s[i + 1]!;
      i++;
    } else if (pick === 1 && short[c]) out += short[c];
    else out += pick === 3 ? u.toUpperCase().replace('\\U', '\\u') : u;
  }
  return out + '"';
}

/** A JSON value for other fields: scalars, arrays and objects (a nested `text` key among them). */
const value: fc.Arbitrary<string> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('0', '-0', '12', '1.5', '-3e5', '1E+2', '2.5e-3', 'true', 'false', 'null', '"x"', '"a\\"b"', '"\\u00e9"'),
    fc.array(tie('v'), { maxLength: 3 }).map((vs) => `[${vs.join(',')}]`),
    fc.array(fc.tuple(fc.constantFrom('text', 'id', 'k', ''), tie('v')), { maxLength: 3 }).map((kv) => `{${kv.map(([k, v]) => `"${k}":${v}`).join(',')}}`),
  ),
})).v;

/** A field of a record: the text (as a string literal, or of another type), the id, an escaped key, or another. */
const field = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(text, fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 })).map(([t, how]) => `"text"\u0000${literal(t, how)}`),
  },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('d1', 'd2', 'é', ''), fc.boolean()).map(([id, esc]) => `"id"\u0000${literal(id, [esc ? 2 : 0])}`) },
  { weight: 1, arbitrary: fc.constantFrom('"id"\u00007', '"text"\u00001', '"text"\u0000null', '"\\u0074ext"\u0000"sly"', '"te\\u0078t"\u0000"x"') },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('url', 'meta', 'n', 'é', 'a b'), value).map(([k, v]) => `"${k}"\u0000${v}`) },
);

/** A record line: its fields with whitespace around every token, sometimes broken. */
const line = fc.tuple(fc.array(fc.tuple(field, ws, ws, ws, ws), { maxLength: 5 }), ws, ws, fc.integer({ min: 0, max: 30 })).map(([fields, lead, tail, odd]) => {
  const body = fields.map(([f, a, b, c, d]) => a + f.replace('\u0000', `${b}:${c}`) + d).join(',');
  const rec = `${lead}{${body}}${tail}`;
  // Now and then invalid JSON: a trailing comma, garbage after the object, a leading zero, an unclosed string.
  if (odd === 0) return rec.replace(/}(\s*)$/, ',}$1');
  if (odd === 1) return `${rec} x`;
  if (odd === 2) return rec.replace(/"n"(\s*):(\s*)-?\d/, '"n"$1:$201');
  if (odd === 3) return rec.replace(/"$/, '');
  return rec;
});

/** A record `JSON.parse` reads, with a text and an id (escaped or not) among other fields, in either order. */
const validLine = fc
  .tuple(
    fc.tuple(text, fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 })).map(([t, how]) => `"text"\u0000${literal(t, how)}`),
    fc.tuple(fc.constantFrom('d1', 'd2', 'é'), fc.boolean()).map(([id, esc]) => `"id"\u0000${literal(id, [esc ? 2 : 0])}`),
    fc.array(fc.tuple(fc.constantFrom('url', 'meta', 'n'), value).map(([k, v]) => `"${k}"\u0000${v}`), { maxLength: 2 }),
    fc.boolean(),
    fc.tuple(ws, ws, ws),
  )
  .map(([t, id, others, idFirst, [a, b, c]]) => {
    const fields = idFirst ? [id, ...others, t] : [t, ...others, id];
    return `${a}{${fields.map((f) => b + f.replace('\u0000', `${c}:${a}`) + c).join(',')}}${b}`;
  });

const KEYS = { text: Buffer.from('text'), id: Buffer.from('id') };

test('the scan accepts only what JSON.parse reads alike, and decodes the text as it does', () => {
  let accepted = 0;
  const hasher = new UnitHasher();
  fc.assert(
    fc.property(fc.oneof(line, validLine), fc.boolean(), (l, withId) => {
      const b = Buffer.from(l, 'utf8');
      const keys = withId ? KEYS : { text: KEYS.text, id: undefined };
      const at = new Int32Array(6);
      // The scan finds the text; its decoding checks it.
      const out = new Uint16Array(b.length);
      const scanned = scanRecord(b, 0, b.length, keys, at);
      const n = scanned ? decodeJsonString(b, at[0]!, at[1]!, out) : -1;
      if (scanned) {
        // The WebAssembly kernel (the hasher's) decodes as the JavaScript does.
        const k = hasher.decodeJson(b, at[0]!, at[1]!);
        assert.equal(k, n, l);
        if (n >= 0) {
          assert.deepEqual(hasher.codes(0).subarray(0, n), out.subarray(0, n));
          assert.equal(hasher.jsonBytes, Buffer.byteLength(b.toString('utf8', 0, 0) + String.fromCharCode(...out.subarray(0, n))));
        }
      }
      if (scanned) {
        // The text as a string (pass 2, sentences): refused where the decoding refuses it, else JSON.parse's token.
        const t = hasher.decodeJsonText(b, at[0]!, at[1]!);
        assert.equal(t === undefined, n < 0, l);
        if (t !== undefined) assert.equal(t, JSON.parse(b.toString('utf8', at[0]! - 1, at[1]! + 1)), l);
      }
      const ok = n >= 0;
      let parsed: unknown;
      try {
        parsed = JSON.parse(b.toString('utf8'));
      } catch {
        assert.equal(ok, false, `the scan accepted what JSON.parse refuses: ${l}`);
        return;
      }
      if (!ok) return;
      accepted++;
      const o = parsed as { text: unknown; id?: unknown };
      assert.equal(typeof o.text, 'string');
      assert.equal(Buffer.from(out.buffer, 0, 2 * n).toString('utf16le'), o.text);
      assert.equal(String.fromCharCode(...out.subarray(0, n)), o.text);
      assert.equal(decoded.bytes, Buffer.byteLength(o.text as string));
      if (withId) {
        assert.equal(typeof o.id, 'string');
        if (at[5] === 0) assert.equal(b.toString('utf8', at[3], at[4]), o.id);
      }
    }),
    { numRuns: 3000, seed: 50 },
  );
  // The route is taken, not only refused.
  assert.ok(accepted > 1000, `only ${accepted} lines accepted`);
});

test('lines and paragraphs split from code units as from the string', () => {
  fc.assert(
    fc.property(text, fc.constantFrom('line' as const, 'paragraph' as const), (t, unit) => {
      // Room past the text, as in the hasher's buffer: nothing after `n` is read.
      const codes = new Uint16Array(t.length + 3).fill(0x0a);
      for (let i = 0; i < t.length; i++) codes[i] = t.charCodeAt(i);
      assert.deepEqual(splitUnitCodes(codes, t.length, unit, newUnits()), splitUnits(t, unit, 1, newUnits()));
    }),
    { numRuns: 2000, seed: 51 },
  );
});

let run = 0;

/** The output, audit and summary of `dedupSpansFile` on `input` (or its error), by the byte route or (`viaRecords`) the records' route. */
async function outputs(input: string, o: SpansFileOptions, viaRecords: boolean): Promise<string[]> {
  const out = path.join(tmp, `out${run}.jsonl`);
  const audit = path.join(tmp, `removed${run++}.tsv`);
  const read = { ...o.read, limit: viaRecords ? 1e9 : undefined };
  try {
    const r = await dedupSpansFile(input, { ...o, read, out: o.mode === 'none' ? undefined : out, removed: audit });
    return [o.mode === 'none' ? '' : fs.readFileSync(out, 'latin1'), fs.readFileSync(audit, 'latin1'), JSON.stringify(r)];
  } catch (e) {
    return ['error', (e as Error).message];
  }
}

test('neardup spans: passes 1 and 2 as bytes write what the passes over records write, or fail alike', async () => {
  const shared = fc.constantFrom('{"id":"d8","text":"Accept all cookies.\\nRead more"}', '{"id":"d9","text":"read MORE\\r\\n\\nx"}');
  const rec = fc.oneof(
    { weight: 12, arbitrary: validLine },
    { weight: 4, arbitrary: shared },
    { weight: 1, arbitrary: line },
    { weight: 1, arbitrary: fc.constantFrom('', '  ', '\u00a0') },
  );
  let same = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(rec, fc.constantFrom('\n', '\r\n')), { minLength: 1, maxLength: 10 }),
      fc.constantFrom('line' as const, 'line' as const, 'paragraph' as const, 'sentence' as const, 'substring' as const),
      fc.boolean(),
      fc.boolean(),
      fc.record({ mode: fc.constantFrom('dedup' as const, 'none' as const), minDocs: fc.constantFrom(undefined, 1, 2), last: fc.constantFrom('\n', '', '\r') }),
      async (rows, unit, withId, bom, { mode, minDocs, last }) => {
        const input = path.join(tmp, `in${run}.jsonl`);
        const body = rows.map(([l, e], i) => l + (i + 1 < rows.length ? e : last)).join('');
        fs.writeFileSync(input, (bom ? '\ufeff' : '') + body);
        const spans = { unit, minDocs, minLength: unit === 'substring' ? 2 : undefined };
        const o: SpansFileOptions = { mode, spans, read: { fields: withId ? { id: 'id' } : {} } };
        const got = await outputs(input, o, false);
        assert.deepEqual(got, await outputs(input, o, true));
        if (got[0] !== 'error') same++;
      },
    ),
    { numRuns: 300, seed: 52 },
  );
  assert.ok(same > 30, `only ${same} runs without an error`);
});

test('invalid UTF-8 after records the scan took: the error of pass 1 over records', async () => {
  const input = path.join(tmp, 'bad.jsonl');
  const good = Buffer.from('{"text":"a\\nb"}\n{"text":"a"}\n');
  fs.writeFileSync(input, Buffer.concat([good, Buffer.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x0a])]));
  const o: SpansFileOptions = { spans: { unit: 'line' } };
  const got = await outputs(input, o, false);
  assert.equal(got[0], 'error');
  assert.match(got[1]!, /invalid UTF-8/);
  assert.deepEqual(got, await outputs(input, o, true));
});

test('the last record without its line break, decided from its bytes: written with one, as the reader route writes it', async () => {
  const o: SpansFileOptions = { spans: { unit: 'line' }, read: { fields: { id: 'id' } } };
  for (const last of ['', '\r', '\n', '\r\n']) {
    for (const tail of ['{"id":"b","text":"x\\nRead more\\nRead more"}', '{"id":"b","text":"Read more"}', '{"id":"b", "text":"Read\\u0020more\\ny"}']) {
      const input = path.join(tmp, `last${run}.jsonl`);
      fs.writeFileSync(input, `{"id":"a","text":"Read more\\nz"}\r\n${tail}${last}`);
      const got = await outputs(input, o, false);
      assert.notEqual(got[0], 'error');
      assert.deepEqual(got, await outputs(input, o, true));
    }
  }
});

test('a file of several read blocks, with a line longer than a block, a byte-order mark and CRLF: the same as the records route', async () => {
  const input = path.join(tmp, 'blocks.jsonl');
  const pieces = ['Accept all cookies.', 'Read more', 'é 😀 line', 'unique'];
  const parts = ['\ufeff'];
  let size = 0;
  for (let i = 0; size < 9.5e6; i++) {
    const text = i === 500 ? `${'x'.repeat(5e6)}\nRead more` : `${pieces[i % 4]} ${i % 7}\n${pieces[(i + 1) % 4]}\n\nline ${i} ${'w'.repeat(150 + (i % 50))}`;
    const rec = `{"id":"d${i}","text":${JSON.stringify(text)}}${i % 3 === 0 ? '\r\n' : '\n'}`;
    parts.push(rec);
    size += rec.length;
  }
  fs.writeFileSync(input, parts.join(''));
  for (const unit of ['line', 'paragraph'] as const) {
    const o: SpansFileOptions = { spans: { unit }, read: { fields: { id: 'id' } } };
    const got = await outputs(input, o, false);
    assert.notEqual(got[0], 'error', got[1]);
    assert.deepEqual(got, await outputs(input, o, true));
  }
});
