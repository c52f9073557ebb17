/** Property-based tests of the set and shingle invariants (fast-check). */
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jaccard } from '../../src/similarity/jaccard.js';
import { toSortedSet } from '../../src/text/fingerprintSet.js';
import { charShingles } from '../../src/text/charShingles.js';
import { createShingler } from '../../src/text/shingler.js';
import { wordShingles } from '../../src/text/wordShingles.js';

const setArb = fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 30 }).map((xs) => toSortedSet(Uint32Array.from(xs)));

test('Jaccard is symmetric, in [0, 1], and 1 exactly when the (non-empty) sets are equal', () => {
  fc.assert(
    fc.property(setArb, setArb, (a, b) => {
      const j = jaccard(a, b);
      assert.equal(j, jaccard(b, a));
      assert.ok(j >= 0 && j <= 1);
      const equal = a.length === b.length && a.every((v, i) => v === b[i]);
      if (a.length > 0 && b.length > 0) assert.equal(j === 1, equal);
      else assert.equal(j, 0);
    }),
    { numRuns: 500, seed: 42 },
  );
});

/** Reference: one fingerprint per window of k code points, each hashed as a whole short text. */
function referenceCharSet(text: string, k: number): number[] {
  const cps = Array.from(text); // code points; a lone surrogate stays one element
  if (cps.length === 0) return [];
  if (cps.length <= k) return [charShingles(text, k)[0]!];
  const out = new Set<number>();
  for (let i = 0; i + k <= cps.length; i++) out.add(charShingles(cps.slice(i, i + k).join(''), k)[0]!);
  return [...out].sort((x, y) => x - y);
}

test('char shingling of any Unicode string never throws and never splits a surrogate pair', () => {
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }), // includes lone surrogates
    fc.string({ unit: fc.constantFrom('a', 'b', ' ', '😀', '\uD83D', '\uDE00', 'é', '\u0301', '中'), maxLength: 40 }),
  );
  fc.assert(
    fc.property(text, fc.integer({ min: 1, max: 6 }), (t, k) => {
      const got = [...toSortedSet(charShingles(t, k))];
      assert.deepEqual(got, referenceCharSet(t, k));
    }),
    { numRuns: 1000, seed: 7 },
  );
});

test('every shingle kind accepts any string and normalization never throws', () => {
  const kinds = [
    createShingler({ kind: 'char' }),
    createShingler({ kind: 'word' }),
    createShingler({ kind: 'spot' }),
    createShingler({ kind: 'char', multiset: true }),
  ];
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (t) => {
      for (const s of kinds) {
        const set = s.set(t);
        for (let i = 1; i < set.length; i++) assert.ok(set[i - 1]! < set[i]!, 'sorted and unique');
      }
      wordShingles(t, 2);
    }),
    { numRuns: 300, seed: 11 },
  );
});
