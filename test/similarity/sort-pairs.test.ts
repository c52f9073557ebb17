/**
 * sortPairs (src/similarity/sortPairs.ts) against the comparison sort it replaces: the same objects
 * in the same order (stable for equal pairs), on the counting-sort route (many pairs for the largest
 * id) and the comparison route (few), sorted or not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sortPairs } from '../../src/similarity/sortPairs.js';

const reference = <T extends { a: number; b: number }>(xs: T[]): T[] => [...xs].sort((x, y) => x.a - y.a || x.b - y.b);

test('property: sortPairs puts the same objects in the same order as a stable comparison sort by (a, b)', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat({ max: 60 }), fc.nat({ max: 60 })), { maxLength: 400 }), fc.nat({ max: 100_000 }), (xs, spread) => {
      // spread widens the ids so that both routes run: dense (counting) and sparse (comparison).
      const pairs = xs.map(([a, b], k) => ({ a: a * (1 + (spread % 7)), b: b + (spread % 3 === 0 ? spread : 0), k }));
      const want = reference(pairs);
      sortPairs(pairs);
      assert.deepEqual(
        pairs.map((p) => p.k),
        want.map((p) => p.k),
      );
    }),
    { numRuns: 500 },
  );
});

test('sortPairs: a large shuffled list (counting route) and ids that are not small integers (comparison route)', () => {
  let s = 7;
  const rnd = (m: number): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) % m;
  const pairs = Array.from({ length: 200_000 }, (_, k) => ({ a: rnd(50_000), b: rnd(50_000), k }));
  const want = reference(pairs).map((p) => p.k);
  sortPairs(pairs);
  assert.deepEqual(
    pairs.map((p) => p.k),
    want,
  );
  const odd = [
    { a: 2 ** 40, b: 1 },
    { a: 0.5, b: 3 },
    { a: 0, b: 2 },
  ];
  sortPairs(odd);
  assert.deepEqual(odd, [
    { a: 0, b: 2 },
    { a: 0.5, b: 3 },
    { a: 2 ** 40, b: 1 },
  ]);
});
