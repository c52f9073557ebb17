/**
 * Long texts are split into words and sentences by `Intl.Segmenter` in pieces
 * (src/text/segments.ts): Node 20's segmenter copies the whole input into every segment, so a
 * long text took time and memory quadratic in its length. The pieces' segments are the whole
 * text's: on random texts of 2,000–9,000 code units mixing Han, kana, Thai, Hangul, Latin, digits,
 * punctuation (MidNum, ideographic, sentence ends), whitespace and line breaks of every kind
 * (CRLF, U+2028, U+2029, U+0085), combining marks, joiners and emoji with modifiers, against one
 * call of the segmenter on the whole text. And a text of 200,000 code units is tokenized, counted
 * and hashed (it ran out of memory before).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countTokens, hasTokenIn, tokenHashes, tokens } from '../../src/text/tokens.js';
import { sentenceSegments, wordSegments } from '../../src/text/segments.js';
import '../helpers/fuzz.js';

const whole = (text: string, granularity: 'word' | 'sentence'): [number, number][] =>
  [...new Intl.Segmenter(undefined, { granularity }).segment(text)]
    .filter((s) => granularity === 'sentence' || s.isWordLike)
    .map((s) => [s.index, s.index + s.segment.length]);

const PIECES = [
  '東京都は日本の首都です',
  '中文文本测试',
  'カタカナ',
  'ภาษาไทยง่าย',
  '한국어 문장',
  'hello',
  'world',
  '3，000',
  '1.5',
  '。',
  '、',
  '！',
  '？',
  '，',
  ' ',
  '  ',
  '\n',
  '\r\n',
  '\t',
  '\u3000',
  '\u00a0',
  'e\u0301',
  '\u0301',
  '\u200d',
  '\u200b',
  '👍🏽',
  '👨‍👩‍👧',
  "can't",
  'Hello there. ',
  'Is it? ',
  '\u2028',
  '\u2029',
  '\u0085',
  'Mr. Smith ',
];

test('wordSegments and sentenceSegments: the segments of pieces are those of the whole text', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...PIECES), { minLength: 400, maxLength: 1500 }), (parts) => {
      const text = parts.join('');
      assert.deepEqual([...wordSegments(text)], whole(text, 'word'));
      assert.deepEqual([...sentenceSegments(text)], whole(text, 'sentence'));
    }),
    { numRuns: 25 },
  );
});

test('a text of 200,000 code units without spaces is tokenized, counted and hashed', () => {
  let text = '';
  for (let i = 0; text.length < 200_000; i++) text += PIECES[i % 4]! + (i % 7 === 0 ? '。' : '');
  const words = tokens(text);
  assert.ok(words.length > 50_000, String(words.length));
  assert.equal(countTokens(text, Infinity), words.length);
  assert.equal(countTokens(text, 3), 3);
  assert.equal(tokenHashes(text, 1).length, words.length);
  const lines = text.replace(/。/g, '。\n');
  assert.ok([...sentenceSegments(lines)].length > 3_000);
});

test("hasTokenIn: whether the text made of a text's ranges has a word, as countTokens of that text says, or undefined", () => {
  // Words, spaces, punctuation, marks alone, CJK, an astral letter and its halves apart: ranges cut between any two.
  const piece = fc.constantFrom('ab', ' ', '.', ', ', '\u0301', '猫', '\ud835\udc00', '\ud835', '\udc00', '3', '-', '\n', 'é');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 14 }), fc.array(fc.nat(), { maxLength: 8 }), (pieces, cuts) => {
      const text = pieces.join('');
      const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
      // Every other stretch between the cut points kept, from the start or not.
      const kept: number[] = [];
      const points = [0, ...at, text.length];
      for (let i = cuts.length % 2; i + 1 < points.length; i += 2) if (points[i + 1]! > points[i]!) kept.push(points[i]!, points[i + 1]!);
      let joined = '';
      for (let r = 0; r < kept.length; r += 2) joined += text.slice(kept[r], kept[r + 1]);
      const got = hasTokenIn(text, kept);
      if (got !== undefined) assert.equal(got, countTokens(joined, 1) > 0, JSON.stringify([text, kept]));
      // It tells whenever no range's edge touches a surrogate and no CJK is there.
      if (!/[\ud800-\udfff猫]/.test(text)) assert.notEqual(got, undefined);
    }),
    { numRuns: 3000, seed: 71 },
  );
});
