/** The worked examples of the seed articles, reproduced exactly. */
import test from 'node:test';
import assert from 'node:assert/strict';
import { charShingles } from '../../src/text/charShingles.js';
import { createShingler, fingerprintSet } from '../../src/text/shingler.js';
import { toSortedSet } from '../../src/text/fingerprintSet.js';
import { jaccard, intersectionSize } from '../../src/similarity/jaccard.js';
import { wordShingles } from '../../src/text/wordShingles.js';
import { tokens } from '../../src/text/tokens.js';

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
