/**
 * Text in scripts written without spaces is split into words by `Intl.Segmenter` in pieces
 * (src/text/tokens.ts, `wordSegments`): Node 20's segmenter copies the whole input into every
 * segment, so a long text took time and memory quadratic in its length. The pieces' segments are
 * the whole text's: on random texts of 2,000–9,000 code units mixing Han, kana, Thai, Hangul,
 * Latin, digits, punctuation (MidNum and ideographic), whitespace of every kind, combining marks,
 * joiners and emoji with modifiers, against one call of the segmenter on the whole text. And a
 * text of 200,000 code units is tokenized, counted and hashed (it ran out of memory before).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countTokens, tokenHashes, tokens, wordSegments } from '../../src/text/tokens.js';
import '../helpers/fuzz.js';

const whole = (text: string): [number, number][] =>
  [...new Intl.Segmenter(undefined, { granularity: 'word' }).segment(text)].filter((s) => s.isWordLike).map((s) => [s.index, s.index + s.segment.length]);

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
];

test('wordSegments: the segments of pieces are those of the whole text', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...PIECES), { minLength: 400, maxLength: 1500 }), (parts) => {
      const text = parts.join('');
      assert.deepEqual([...wordSegments(text)], whole(text));
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
});
