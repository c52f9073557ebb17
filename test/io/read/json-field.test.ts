/**
 * The byte route of verification's JSONL re-read (`plainStringField`, src/io/read/jsonLine.ts) against JSON.parse, on lines
 * built to trip it: escaped and duplicated names, the name inside nested values and inside other
 * strings, non-string values, escapes in the value, non-ASCII text, every kind of JSON whitespace.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { lineHasBackslash, plainStringField } from '../../../src/io/read/jsonLine.js';

const KEY = Buffer.from('text');

/** JSON whitespace, sometimes none. */
const ws = fc.constantFrom('', ' ', '  ', '\t', '\r\n', '\n ');
/** A string value (written by JSON.stringify: escapes where JSON needs them). */
const str = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('text', '"text"', 'a\\b', 'é', '中文', '\u0000', '😀', '{"text":"x"}', ''),
).map((s) => JSON.stringify(s));
/** A name: plain, the field itself, or the field spelled with escapes. */
const name = fc.oneof(
  { arbitrary: fc.constantFrom('"text"'), weight: 3 },
  { arbitrary: fc.constantFrom('"t\\u0065xt"', '"te\\u0078t"', '"text "', '"Text"', '"id"', '"texts"', '"tex"'), weight: 2 },
  { arbitrary: fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)), weight: 2 },
);
const scalar = fc.oneof(str, fc.constantFrom('1', '-2.5e3', 'true', 'false', 'null', '0'));
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, scalar, scalar, tie('obj'), tie('arr')),
  obj: fc.array(fc.tuple(name, ws, ws, tie('v') as fc.Arbitrary<string>), { maxLength: 4 }).map((kv) =>
    `{${kv.map(([k, a, b, v]) => `${a}${k}${b}:${a}${v}`).join(',')}}`
  ),
  arr: fc.array(tie('v') as fc.Arbitrary<string>, { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
})).v as fc.Arbitrary<string>;
/** A top-level object line. */
const line = fc
  .tuple(fc.array(fc.tuple(name, ws, ws, fc.oneof(value, str, str)), { maxLength: 5 }), ws, ws)
  .map(([kv, a, b]) => `${a}{${kv.map(([k, x, y, v]) => `${x}${k}${y}:${x}${v}`).join(',')}${b}}${a}`);

test('plainStringField: whenever it answers, the bytes are the UTF-8 of what JSON.parse gives for the field, unescaped', () => {
  let answered = 0;
  fc.assert(
    fc.property(line, fc.string({ maxLength: 8 }), (l, pad) => {
      // The line sits inside a larger buffer (the joined batch), at an offset.
      const before = Buffer.from(pad.replace(/[\n]/g, ' ') + '\n');
      const buf = Buffer.concat([before, Buffer.from(l), Buffer.from('\n{"text":"next"}\n')]);
      const start = before.length;
      const end = start + Buffer.byteLength(l);
      const out = new Int32Array(2);
      const obj = JSON.parse(l) as Record<string, unknown>;
      const own = Object.prototype.hasOwnProperty.call(obj, 'text') ? obj['text'] : undefined;
      const answer = plainStringField(buf, start, end, KEY, out);
      // With what lineHasBackslash tells (the batch route): the same answer and span.
      const out2 = new Int32Array(2);
      const has = lineHasBackslash(buf);
      has(0, start);
      assert.equal(plainStringField(buf, start, end, KEY, out2, has(start, end)), answer);
      if (!answer) return;
      assert.deepEqual(out2, out);
      answered++;
      assert.ok(start <= out[0]! && out[0]! <= out[1]! && out[1]! <= end);
      const bytes = buf.subarray(out[0], out[1]);
      assert.ok(bytes.every((b) => b !== 0x5c), 'without escapes');
      assert.equal(typeof own, 'string');
      assert.equal(bytes.toString('utf8'), own);
    }),
    { numRuns: 3000, seed: 23 },
  );
  assert.ok(answered > 150, `the byte route answers often enough to be tested (${answered})`);
});

test('plainStringField: the lines JSON.stringify writes for a field it needs no escapes for are answered, whatever else the object holds (names written without escapes)', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string({ maxLength: 30 }), fc.string({ maxLength: 30, unit: 'grapheme' })).filter((s) => JSON.stringify(s) === `"${s}"`),
      // Top-level names that JSON writes with escapes make the route decline (one could spell the field).
      fc.dictionary(fc.string({ maxLength: 5 }).filter((k) => k !== 'text' && /^[^"\\\x00-\x1f]*$/.test(k)), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
      fc.boolean(),
      (text, rest, first) => {
        const l = JSON.stringify(first ? { text, ...rest } : { ...rest, text });
        const buf = Buffer.from(l);
        const out = new Int32Array(2);
        assert.ok(plainStringField(buf, 0, buf.length, KEY, out), l);
        assert.equal(buf.subarray(out[0], out[1]).toString('utf8'), text);
      },
    ),
    { numRuns: 500, seed: 24 },
  );
});

test('plainStringField: declines duplicated and escaped names, non-string and escaped values, and non-objects; answers for UTF-8 text', () => {
  const no = [
    '{"text":"a","text":"b"}',
    '{"t\\u0065xt":"a"}',
    '{"text":"a","t\\u0065xt":"b"}',
    '{"text":1}',
    '{"text":null}',
    '{"text":["a"]}',
    '{"text":"a\\nb"}',
    '{"text":"a\\"b"}',
    '{"text":"\\u00e9"}',
    '["text","a"]',
    '"text"',
    '{"other":"a"}',
    '{"a":{"text":"x"}}',
  ];
  const out = new Int32Array(2);
  for (const l of no) {
    const buf = Buffer.from(l);
    assert.equal(plainStringField(buf, 0, buf.length, KEY, out), false, l);
  }
  const buf = Buffer.from(' {"a":{"text":"inner"},"b":"text","text" : "outer é 中文 😀", "c":[{"text":"x"}]} ');
  assert.ok(plainStringField(buf, 0, buf.length, KEY, out));
  assert.equal(buf.subarray(out[0], out[1]).toString(), 'outer é 中文 😀');
});

test('lineHasBackslash: line by line, whether each line holds a backslash', () => {
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[ab\\"]{0,6}$/), { maxLength: 12 }), (lines) => {
      const buf = Buffer.from(lines.map((l) => l + '\n').join(''));
      const has = lineHasBackslash(buf);
      let s = 0;
      for (const l of lines) {
        assert.equal(has(s, s + l.length), l.includes('\\'));
        s += l.length + 1;
      }
    }),
    { numRuns: 300, seed: 25 },
  );
});
