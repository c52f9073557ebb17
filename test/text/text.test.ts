/** Normalization, tokenization, word and spot shingles, multisets. */
import test from 'node:test';
import assert from 'node:assert/strict';
import { normalize } from '../../src/text/normalize.js';
import { tokens, tokenHashes } from '../../src/text/tokens.js';
import { createShingler, fingerprintSet } from '../../src/text/shingler.js';
import { stopwordList } from '../../src/text/stopwords.js';
import { jaccard } from '../../src/similarity/jaccard.js';
import { charShingles } from '../../src/text/charShingles.js';

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
