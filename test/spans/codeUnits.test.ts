/**
 * The kernels of `neardup spans` that replaced loops in JavaScript, against those loops on random
 * texts (ASCII, blanks of every kind, CRLF, empty lines, non-ASCII, astral characters, lone
 * surrogates, characters the table leaves to the string path): `codeUnits` (lines and paragraphs
 * split, normalized and hashed by one call per document, src/spans/walker.ts's `eachCodes`) and
 * `sentenceUnits` (sentence windows from the code units, passes 1 and 2) against the units and hashes
 * of the string path (`each`, ./units.ts's `splitUnits`), `jsonQuote` against `JSON.stringify` and
 * UTF-8, and `utf8Offsets` (src/spans/offsets.ts's walk
 * in the hasher's kernel) against the cursor's walk in JavaScript.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { unitHash64Text } from '../../src/hash/unitHash64.js';
import { makeNormalizer } from '../../src/text/normalize.js';
import { OffsetCursor } from '../../src/spans/offsets.js';
import { resolveSpansOptions } from '../../src/spans/options.js';
import { SENTENCE_CLASSES, sentenceEnds } from '../../src/spans/sentences.js';
import { newUnits, splitUnits, type Units } from '../../src/spans/units.js';
import { UnitWalker } from '../../src/spans/walker.js';

/**
 * Pieces of text; Σ and the no-break space send a document (from there) to the string path. The
 * ASCII runs put single and double spaces at every lane of the kernels' blocks of eight (first,
 * last, before a line feed or a letter past ASCII), where a block is taken whole or refused; ÿ has
 * a sentence class and × none (`sentenceUnits` looks up sixteen bytes' classes by their nibbles).
 */
const PIECES = [
  'Accept all cookies.',
  'a b c d e f g h i',
  'abcdefg ',
  ' abcdefgh',
  'abcdefgh  ijk',
  'Zoë ÿ.',
  'a×b',
  'accept  ALL cookies.',
  'Read more',
  'x',
  '\n',
  '\r\n',
  '\n\n',
  '\r',
  ' ',
  '\t',
  '\u00a0',
  '\u3000',
  'é',
  'Σ',
  'ﬁ',
  '我喜欢猫。',
  '😀',
  '\ud800',
  '\udc00',
  'ÀÉÎ',
];
const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }).map((ps) => ps.join(''));
/** Now and then a text of over 1,024 lines (every other one blank: as many paragraphs, up to 1,300): the kernel stops at 1,024 units and goes on from there. */
const longText = fc.tuple(text, fc.integer({ min: 1025, max: 2600 }), fc.boolean()).map(([t, n, blanks]) =>
  Array.from({ length: n }, (_, i) => (blanks && i % 2 === 0 ? '' : `line ${i % 900} ${t}`)).join(n % 2 === 0 ? '\n' : '\r\n')
);

/** The first `count` units (a reused {@link Units} keeps older ones past its count). */
function unitsOf(u: Units): number[][] {
  return [u.start, u.end, u.textStart, u.textEnd].map((x) => x.slice(0, u.count));
}

/** What `each` (the string) or `eachCodes` (the text decoded from its JSON bytes) visits: unit index, hash, units. */
function visit(w: UnitWalker, t: string, codes: boolean): unknown[] {
  const seen: unknown[] = [];
  const each = (k: number): void => void seen.push([k, w.hash[0], w.hash[1]]);
  let count: number;
  if (codes) {
    const b = Buffer.from(JSON.stringify(t));
    const n = w.decodeJson(b, 1, b.length - 1);
    assert.equal(n, t.length);
    count = w.eachCodes(n, each);
  } else count = w.each(t, each);
  const u = w.units;
  seen.push(count, u.count, u.start.slice(0, u.count), u.end.slice(0, u.count), u.textStart.slice(0, u.count), u.textEnd.slice(0, u.count));
  return seen;
}

test('lines and paragraphs split, normalized and hashed by one kernel call per document: the units and hashes of the string path', () => {
  const walkers = new Map<string, UnitWalker[]>();
  fc.assert(
    fc.property(
      fc.oneof({ weight: 9, arbitrary: text }, { weight: 1, arbitrary: longText }),
      fc.constantFrom('line' as const, 'paragraph' as const),
      fc.constantFrom(0, 2),
      fc.boolean(),
      (t, unit, words, keepCase) => {
        // Word counts of long paragraphs left out: Intl.Segmenter's words of a long CJK paragraph take memory past a test's (either route).
        const min = t.length > 2000 ? 0 : words;
        const key = `${unit}${min}${keepCase}`;
        if (!walkers.has(key)) {
          // keepCase: the kernel's runs of eight ASCII code units lowercase or not, as the table does.
          const o = resolveSpansOptions({ unit, minUnitWords: min, normalize: { keepCase } });
          // One walker per route, reused as a pass reuses it (the table's entries filled as met).
          walkers.set(key, [new UnitWalker(o), new UnitWalker(o)]);
          if (min === 0) walkers.get(key)![0]!.ahead = (hi, lo) => hi ^ lo;
        }
        const [a, b] = walkers.get(key)!;
        // Compared as JSON: a diff of two long unit lists would take the test's memory.
        assert.ok(JSON.stringify(visit(a!, t, true)) === JSON.stringify(visit(b!, t, false)), JSON.stringify(t.slice(0, 200)));
      },
    ),
    { numRuns: 1500, seed: 53 },
  );
});

test("the offsets walked in the hasher's kernel are the cursor's in JavaScript, forward and starting over", () => {
  const w = new UnitWalker(resolveSpansOptions({ unit: 'line' }));
  fc.assert(
    fc.property(text, fc.array(fc.nat(), { maxLength: 12 }), (t, picks) => {
      const walk = w.offsetWalk(t);
      if (!process.env['NEARDUP_NO_WASM']) assert.ok(walk, 'no kernel walk');
      const js = new OffsetCursor().reset(t);
      const kernel = new OffsetCursor().reset(t, walk);
      // Mostly increasing indices, now and then a smaller one (the cursor starts over), any index up to the end.
      for (const p of picks) {
        const to = p % (t.length + 1);
        js.at(to);
        kernel.at(to);
        assert.deepEqual([kernel.cp, kernel.byte], [js.cp, js.byte], `${JSON.stringify(t)} at ${to}`);
      }
      js.at(t.length);
      kernel.at(t.length);
      assert.deepEqual([kernel.cp, kernel.byte], [js.cp, js.byte]);
      assert.equal(js.byte, Buffer.byteLength(t));
    }),
    { numRuns: 3000, seed: 54 },
  );
});

/** Sentence pieces: mostly the characters ./sentences.ts handles (the kernel's texts), now and then one it does not. */
const SENTENCE_PIECES = [
  'Hello world',
  'hello',
  'U.S. Army',
  '3.5',
  '1.',
  'a.B',
  'x. y',
  '...',
  '. ',
  '! ',
  '? ',
  '.',
  ',',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '\n\n',
  'Élan',
  'ßtraße',
  'ÿ',
  'ÀÉÎ',
  '×',
];
const RARE = ['"', '😀', 'Σ', '\u00a0', '。', '\ud800', ')', '÷', '@', '[', '`', '{', '/', ':', '\u00bf', '\u0100', '\u2029'];
const sentenceText = fc
  .array(fc.oneof({ weight: 30, arbitrary: fc.constantFrom(...SENTENCE_PIECES) }, { weight: 1, arbitrary: fc.constantFrom(...RARE) }), { maxLength: 16 })
  .map((ps) => ps.join(''));

test('sentence windows from the code units (pass 1) and from the text loaded in the kernel (pass 2): the units and hashes of the string path', () => {
  const walkers = new Map<string, UnitWalker[]>();
  let viaKernel = 0;
  fc.assert(
    fc.property(sentenceText, fc.constantFrom(1, 2, 3), fc.constantFrom(0, 2), fc.boolean(), (t, window, min, keepCase) => {
      const key = `${window}${min}${keepCase}`;
      if (!walkers.has(key)) {
        // Windows of 2 and 3 hash from the document normalized once (normalizeDoc, its ASCII runs lowercased or not).
        const o = resolveSpansOptions({ unit: 'sentence', window, minUnitWords: min, normalize: { keepCase } });
        walkers.set(key, [new UnitWalker(o), new UnitWalker(o), new UnitWalker(o)]);
        // Hashes handed ahead (a table's peek): every window hashed before the callbacks, in the same order.
        walkers.get(key)![0]!.ahead = (hi, lo) => hi ^ lo;
      }
      const [a, b, c] = walkers.get(key)!;
      const want = JSON.stringify(visit(b!, t, false));
      // Pass 1: −1 (nothing walked) sends the text to the string path, as SpanDeduper.observeJson does.
      const seen: unknown[] = [];
      const buf = Buffer.from(JSON.stringify(t));
      const n = a!.decodeJson(buf, 1, buf.length - 1);
      const got = a!.eachCodes(n, (k) => void seen.push([k, a!.hash[0], a!.hash[1]]));
      // The kernel takes exactly the texts ./sentences.ts handles (its output has room for these).
      if (!process.env['NEARDUP_NO_WASM']) assert.equal(got >= 0, sentenceEnds(t, []), JSON.stringify(t));
      if (got >= 0) {
        viaKernel++;
        // And each window's hash is unitHash64Text of its text normalized as a string (the string path shares the kernels).
        const norm = makeNormalizer({ keepCase });
        for (const x of seen) {
          const [k, h0, h1] = x as number[];
          const want = new Uint32Array(2);
          unitHash64Text(norm(t.slice(a!.units.textStart[k!], a!.units.textEnd[k!])), want);
          assert.deepEqual([h0, h1], [...want], JSON.stringify(t));
        }
        const u = a!.units;
        seen.push(got, u.count, u.start.slice(0, u.count), u.end.slice(0, u.count), u.textStart.slice(0, u.count), u.textEnd.slice(0, u.count));
        assert.ok(JSON.stringify(seen) === want, JSON.stringify(t));
      } else assert.equal(seen.length, 0);
      // Pass 2: split, then each unit hashed alone.
      c!.split(t);
      assert.deepEqual(unitsOf(c!.units), unitsOf(splitUnits(t, 'sentence', window, newUnits())), JSON.stringify(t));
    }),
    { numRuns: 3000, seed: 55 },
  );
  if (!process.env['NEARDUP_NO_WASM']) assert.ok(viaKernel > 1500, `only ${viaKernel} texts split by the kernel`);
});

test('the JSON of a text made by the kernel (jsonQuote) is the UTF-8 of JSON.stringify of it: escapes, controls, lone surrogates, pairs, long ASCII runs', () => {
  const w = new UnitWalker(resolveSpansOptions({ unit: 'line' }));
  const pieces = [...PIECES, '"', '\\', '\b\f', '\u0000', '\u001f', '\u007f', '\u2028', 'a long run of plain ASCII text, forty code units', '\ud83d', '\ude00'];
  const anyText = fc.oneof(
    fc.array(fc.constantFrom(...pieces), { maxLength: 12 }).map((ps) => ps.join('')),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );
  fc.assert(
    fc.property(anyText, (t) => {
      const got = w.jsonOf(t);
      if (process.env['NEARDUP_NO_WASM']) return assert.equal(got, undefined);
      assert.ok(got && Buffer.from(got).equals(Buffer.from(JSON.stringify(t))), JSON.stringify(t));
    }),
    { numRuns: 3000, seed: 56 },
  );
});

test('the sentence kernel takes a code unit exactly when it has a sentence class: each of 0–255 and one past, sixteen at once and alone', () => {
  if (process.env['NEARDUP_NO_WASM']) return;
  const w = new UnitWalker(resolveSpansOptions({ unit: 'sentence', window: 1 }));
  for (let c = 0; c <= 256; c++) {
    const has = c < 256 && SENTENCE_CLASSES[c]! !== 0;
    // A block of sixteen of it (the kernel's sixteen-at-once check), and then one alone after 16 letters (its one-at-a-time check).
    for (const t of [`${String.fromCharCode(c).repeat(16)} abc.`, `abcdefghijklmnop${String.fromCharCode(c)}`]) {
      const b = Buffer.from(JSON.stringify(t));
      const n = w.decodeJson(b, 1, b.length - 1);
      assert.equal(w.eachCodes(n, () => {}) !== -1, has, `code unit ${c} in ${JSON.stringify(t)}`);
    }
  }
});
