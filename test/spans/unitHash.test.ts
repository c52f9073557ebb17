/**
 * The per-character normalizing hash of span units (src/spans/unitHash.ts) against the string path
 * it replaces (`unitHash64Text` of the normalized slice), and its table against Unicode's compositions.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { unitHash64Text } from '../../src/hash/unitHash64.js';
import { makeNormalizer, type NormalizeOptions } from '../../src/text/normalize.js';
import { UnitHasher } from '../../src/spans/unitHash.js';

/** Pieces with every kind of code unit the table sorts: ASCII, Latin-1, marks, jamo, Σ, İ, NBSP, ligatures, fullwidth, CJK, astral, lone surrogates. */
const PIECES = [
  'a',
  'B',
  'z',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\v',
  '\f',
  'é',
  'É',
  'e\u0301',
  '\u0301',
  'à',
  'ñ',
  'Ç',
  'ß',
  'ẞ',
  'Σ',
  'ΣΑ',
  'σ',
  'İ',
  'ı',
  '\u00a0',
  '\u2003',
  '\u3000',
  '\ufeff',
  '\u2028',
  'ﬁ',
  'Ａ',
  '①',
  '가',
  '\u1100',
  '\u1161',
  '\u11a8',
  'ㄱ',
  '猫',
  'の',
  'ｶ',
  '😀',
  '𝒜',
  '\ud800',
  '\udc00',
  'Ω',
  'Ω',
  'K',
  'Å',
  '.',
  ',',
  '—',
  '’',
  '…',
  '™',
  'ǅ',
  'Ǆ',
  'Ⅸ',
  '\u0345',
  'ω\u0345',
  'Ꭰ',
  'ꭰ',
  'Ǳ',
  '0',
  '9',
  '\u00ad',
  '\u200b',
];

const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 14 }).map((p) => p.join(''));

const OPTIONS: NormalizeOptions[] = [{}, { keepCase: true }, { preset: 'none' }, { preset: 'lowercase-collapse' }, { stripPunctuation: true }, {
  stripDiacritics: true,
}, { preset: 'none', custom: (t) => t.trim() }];

test('the unit hash and normalized text equal unitHash64Text of the normalized slice, for every preset and option, unit by unit or from the document normalized once', () => {
  for (const wholeDocs of [false, true]) {
    for (const o of OPTIONS) {
      const h = new UnitHasher(o);
      h.wholeDocs = wholeDocs;
      const norm = makeNormalizer(o);
      const got = new Uint32Array(2);
      const want = new Uint32Array(2);
      fc.assert(
        fc.property(text, fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 }), (s, ranges) => {
          // Several units of one document, as the walker hashes them.
          for (const [x, y] of ranges) {
            const a = s.length === 0 ? 0 : x % (s.length + 1);
            const b = a + (s.length === a ? 0 : y % (s.length - a + 1));
            const t = norm(s.slice(a, b));
            unitHash64Text(t, want);
            const what = JSON.stringify({ s, a, b, o, wholeDocs });
            assert.equal(h.hash(s, a, b, got), t.length, what);
            assert.deepEqual([...got], [...want], what);
            assert.equal(String.fromCharCode(...h.copyLast(new Uint16Array(0), 0, t.length).subarray(0, t.length)), t, what);
          }
        }),
        { numRuns: 2000, seed: 50 },
      );
    }
  }
});

test('every BMP code unit hashes alone and beside its neighbours as the string path does', () => {
  for (const o of [{}, { keepCase: true }]) {
    const h = new UnitHasher(o);
    const norm = makeNormalizer(o);
    const got = new Uint32Array(2);
    const want = new Uint32Array(2);
    for (let c = 0; c < 0x10000; c++) {
      const s = `x${String.fromCharCode(c)}Y ${String.fromCharCode(c)}`;
      unitHash64Text(norm(s), want);
      h.hash(s, 0, s.length, got);
      assert.deepEqual([...got], [...want], `U+${c.toString(16)} ${JSON.stringify(o)}`);
    }
  }
});

test('no character the table normalizes alone composes with the character before it (the condition of the module comment)', () => {
  // Every character that follows the first one in some canonical decomposition may compose with what precedes it.
  const second = new Set<number>();
  for (let c = 0; c < 0x10000; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const d = String.fromCharCode(c).normalize('NFD');
    for (let i = 1; i < d.length; i++) second.add(d.charCodeAt(i));
  }
  const out = new Uint32Array(2);
  const fast: number[] = [];
  // Both tables: lowercased (the default) and with the case kept, which maps more characters.
  for (const h of [new UnitHasher({}), new UnitHasher({ keepCase: true })]) {
    for (let c = 0x80; c < 0x10000; c++) {
      const s = String.fromCharCode(c);
      // A unit of this one character takes the table path exactly when it is not normalized by the string path (spied below).
      let slow = false;
      const spy = h as unknown as { slow: (t: string, a: number, b: number, o: Uint32Array) => number };
      const real = spy.slow;
      spy.slow = (...args) => ((slow = true), real.apply(h, args));
      h.hash(s, 0, 1, out);
      spy.slow = real;
      if (!slow) fast.push(c);
    }
  }
  assert.ok(fast.length > 1000, `${fast.length} characters on the table path`);
  for (const c of fast) {
    const s = String.fromCharCode(c);
    assert.ok(!second.has(c), `U+${c.toString(16)} composes with the character before it`);
    const first = s.normalize('NFKD').charCodeAt(0);
    assert.ok(!second.has(first), `U+${c.toString(16)} decomposes to a character that composes backwards`);
    // Canonical ordering: a combining class other than 0 (of the decomposition's first character) would swap it with one of these marks (classes 1 and 240).
    const x = String.fromCharCode(first);
    assert.equal(`${x}\u0334`.normalize('NFD'), `${x}\u0334`, `U+${c.toString(16)} has a combining class`);
    assert.equal(`\u0345${x}`.normalize('NFD'), `\u0345${x}`, `U+${c.toString(16)} has a combining class`);
  }
});

test('the WebAssembly kernels are in use (unless NEARDUP_NO_WASM), and their memory grows for a long document: hashes as the string path, unit by unit or from the document normalized once', () => {
  for (const whole of [false, true]) {
    const h = new UnitHasher({});
    h.wholeDocs = whole;
    if (!process.env['NEARDUP_NO_WASM']) assert.ok((h as unknown as { kernel?: object }).kernel, 'the unitHash kernel is not in use');
    const norm = makeNormalizer({});
    const out = new Uint32Array(2);
    const want = new Uint32Array(2);
    // Unit by unit, every other line with characters the table leaves to the string path (Σ, fullwidth, an emoji, a no-break space); none in a document normalized once (it would take that path whole).
    const line = (i: number): string => (i % 2 || whole ? 'Ünïcödé  LINE\twith ß and é here ' : 'Ünïcödé LINE with Σ and ＡＢＣ, 😀 here\u00a0too ');
    for (const n of [3, 400000, 5]) {
      const text = Array.from({ length: n }, (_, i) => `${line(i)}${i}`).join('\n');
      for (let a = 0, k = 0; a < text.length && k < 50; k++) {
        const nl = text.indexOf('\n', a);
        const b = nl < 0 ? text.length : nl;
        const len = h.hash(text, a, b, out);
        const t = norm(text.slice(a, b));
        unitHash64Text(t, want);
        assert.equal(len, t.length);
        assert.deepEqual([...out], [...want]);
        a = nl < 0 ? text.length : text.indexOf('\n', a + Math.floor(text.length / 60)) + 1 || text.length;
      }
    }
  }
});

test('without WebAssembly (NEARDUP_NO_WASM): this file on the JavaScript loop', { skip: process.env['NEARDUP_NO_WASM'] !== undefined }, () => {
  // A fresh process: the kernels are chosen once per process.
  const r = spawnSync(process.execPath, ['--test', fileURLToPath(import.meta.url)], { env: { ...process.env, NEARDUP_NO_WASM: '1' }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
