/** Normalization, tokenization, word and spot shingles, multisets; the worked examples of the seed articles, reproduced exactly. */
import test from 'node:test';
import assert from 'node:assert/strict';
import { normalize } from '../../src/text/normalize.js';
import { countTokens, tokens, tokenHashes } from '../../src/text/tokens.js';
import { createShingler, fingerprintSet } from '../../src/text/shingler.js';
import { stopwordList } from '../../src/text/stopwords.js';
import { jaccard, intersectionSize } from '../../src/similarity/jaccard.js';
import { charShingles } from '../../src/text/charShingles.js';
import { toSortedSet } from '../../src/text/fingerprintSet.js';
import { wordShingles } from '../../src/text/wordShingles.js';

test('default normalization: NFKC, lowercase, whitespace runs to one space, trimmed', () => {
  assert.equal(normalize('  Ｈｅｌｌｏ\t\n WORLD  ﬁ '), 'hello world fi');
  assert.equal(normalize('Crème Brûlée', { stripDiacritics: true }), 'creme brulee');
  assert.equal(normalize('Hello, World!', { stripPunctuation: true }), 'hello world');
  assert.equal(normalize('Keep Case', { keepCase: true }), 'Keep Case');
  assert.equal(normalize('x', { custom: (s) => s + '!' }), 'x!');
  assert.equal(normalize('A  B\t\tC\n\n\nD', { preset: 'seed000' }), 'a b\t\tc d');
  assert.equal(normalize(' A ', { preset: 'none' }), ' A ');
  assert.throws(() => normalize('x', { preset: 'weird' as never }), /preset/);
});

test('countTokens counts as tokens does, up to its limit', () => {
  for (const t of ['', '  ', "l'appartamento è di 75 mq!", '東京都に住んでいます', 'ฉันรักภาษาไทย', 'a b c d e', '😀 — …', 'e\u0301 x']) {
    const n = tokens(t).length;
    for (const limit of [0, 1, 2, 3, 5, 100]) assert.equal(countTokens(t, limit), Math.min(n, limit), `${JSON.stringify(t)} ${limit}`);
  }
});

test('tokens: letters and digits, Unicode-aware, segmenter for scripts without spaces', () => {
  assert.deepEqual(tokens("l'appartamento è di 75 mq!"), ['l', 'appartamento', 'è', 'di', '75', 'mq']);
  // Segment boundaries come from ICU and vary across its versions: check coverage, not exact cuts.
  const ja = tokens('東京都に住んでいます');
  assert.ok(ja.length >= 4 && ja[0] === '東京', ja.join('|'));
  assert.equal(ja.join(''), '東京都に住んでいます');
  assert.ok(tokens('ฉันรักภาษาไทย').length >= 3);
  assert.equal(tokenHashes('東京都に住んでいます', 0).length, tokens('東京都に住んでいます').length);
  assert.equal(tokenHashes('a 😀 b', 0).length, 2, 'an emoji is not a letter');
});

test('word shingles: order matters, repeats count once unless multiset', () => {
  const w = { kind: 'word' as const, k: 2 };
  assert.equal(jaccard(fingerprintSet('a rose is a rose is a rose', w), fingerprintSet('a rose is a rose', w)), 1);
  assert.equal(fingerprintSet('a rose is a rose is a rose', { kind: 'word', k: 4 }).length, 3, 'the IIR textbook example');
  assert.equal(fingerprintSet('a rose is a rose is a rose', { kind: 'word', k: 4, multiset: true }).length, 5);
});

test('spot shingles start at stopwords and span w words', () => {
  const sh = createShingler({ kind: 'spot', k: 3, stopwords: { words: ['the', 'a'] } });
  const t = 'the cat sat on a mat by the door';
  // anchors: "the cat sat", "a mat by"; the trailing "the door" is too short
  assert.equal(sh.set(t).length, 2);
  const expected = createShingler({ kind: 'word', k: 3 });
  const both = new Set([...expected.set('the cat sat'), ...expected.set('a mat by')]);
  assert.deepEqual(new Set(sh.set(t)), both);
  assert.equal(sh.set('no anchors here').length, 1, 'a text without anchors still gets one shingle');
  for (const lang of ['en', 'it', 'de', 'fr', 'es']) assert.ok(stopwordList(lang).length > 20, lang);
  assert.throws(() => stopwordList('xx'), /no stopword list/);
  assert.equal(createShingler({ kind: 'spot', stopwords: ['it'] }).set('il gatto nero sul tavolo').length, 1);
});

test('short and empty documents, invalid options', () => {
  assert.equal(charShingles('', 5).length, 0);
  assert.equal(fingerprintSet('abc', { k: 5 }).length, 1);
  assert.deepEqual(fingerprintSet('abc', { k: 5 }), fingerprintSet('abc', { k: 3 }), 'short text: one shingle of the whole text');
  assert.equal(fingerprintSet('   ', { k: 5 }).length, 0);
  assert.throws(() => createShingler({ k: 0 }), /k must be/);
  assert.throws(() => createShingler({ kind: 'line' as never }), /shingle kind/);
});

// The worked examples of the seed articles, reproduced exactly.

const fp = (s: string, k: number): number => charShingles(s, k)[0]!;

test('seed 003: the 2-shingles of "abcab" are {ab, bc, ca}', () => {
  const set = fingerprintSet('abcab', { k: 2 });
  assert.deepEqual([...set], [fp('ab', 2), fp('bc', 2), fp('ca', 2)].sort((x, y) => x - y));
  // As a multiset, "ab" counts twice.
  assert.equal(fingerprintSet('abcab', { k: 2, multiset: true }).length, 4);
});

test('seed 003: collapsing whitespace keeps "touch down" apart from "touchdown"', () => {
  const d1 = 'The plane was ready for touch down';
  const d2 = 'The quarterback scored a touchdown';
  const touchdown = fp('touchdown', 9);
  const withSpaces = (t: string): Uint32Array => fingerprintSet(t, { k: 9 });
  const noSpaces = (t: string): Uint32Array => fingerprintSet(t, { k: 9, normalize: { custom: (s) => s.replace(/ /g, '') } });
  assert.ok(!withSpaces(d1).includes(touchdown), 'with single spaces, d1 has no "touchdown" 9-shingle');
  assert.ok(withSpaces(d2).includes(touchdown));
  assert.equal(intersectionSize(withSpaces(d1), withSpaces(d2)), 0);
  assert.ok(noSpaces(d1).includes(touchdown), 'with whitespace ignored both contain "touchdown"');
  assert.ok(noSpaces(d2).includes(touchdown));
});

test('seed 004: Jack London bigrams, J(D1,D2) = 3/8 and J(D1,D3) = 0', () => {
  const opts = { kind: 'word' as const, k: 2, normalize: { keepCase: true } };
  const d1 = fingerprintSet('Jack London travelled to Oakland', opts);
  const d2 = fingerprintSet('Jack London travelled to the city of Oakland', opts);
  const d3 = fingerprintSet('Jack travelled from Oakland to London', opts);
  assert.equal(jaccard(d1, d2), 3 / 8);
  assert.equal(jaccard(d1, d3), 0);
  assert.deepEqual(tokens('Jack London travelled to Oakland'), ['Jack', 'London', 'travelled', 'to', 'Oakland']);
});

test('seed 001: the cat and the red cat, char shingles of 2 to 5', () => {
  const s1 = 'The cat sat on the mat.';
  const s2 = 'The red cat sat on the mat.';
  // Exact values of the seed's own definition (all k-substrings, case kept, no normalization).
  const expected: Record<number, number> = { 2: 17 / 21, 3: 18 / 24, 4: 18 / 26, 5: 16 / 26 };
  for (const k of [2, 3, 4, 5]) {
    const sh = createShingler({ k, normalize: { preset: 'none' } });
    assert.equal(jaccard(sh.set(s1), sh.set(s2)), expected[k], `k=${k}`);
  }
  // The seed's headline numbers: ~0.81 at k=2 and ~0.62 at k=5.
  assert.equal(expected[2]!.toFixed(2), '0.81');
  assert.equal(expected[5]!.toFixed(2), '0.62');
});

test('seed 000: a 10-shingle set of its pizza example under the seed000 preset has 25 shingles', () => {
  const sh = createShingler({ k: 10, normalize: { preset: 'seed000' } });
  const set = sh.set('I love pizza Margherita! xd 1111@\n\n\n\n\n\n\n\n\n\n\n\n\n\n');
  assert.equal(set.length, 25);
  assert.equal(sh.normalize('I love  pizza\n\nX'), 'i love pizza x');
});

test('word shingles: short and empty documents', () => {
  assert.equal(wordShingles('', 3).length, 0);
  assert.equal(wordShingles('!!! ...', 3).length, 0);
  assert.equal(wordShingles('two words', 3).length, 1);
  assert.equal(toSortedSet(wordShingles('a b a b a b', 2)).length, 2);
});
