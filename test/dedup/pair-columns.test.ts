import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PairColumns, pairColumnsOf, withLazyPairs } from '../../src/dedup/pairColumns.js';
import { sortPairs } from '../../src/similarity/sortPairs.js';
import { dedupStream } from '../../src/dedup/streamDedup.js';
import { dedup } from '../../src/dedup/dedup.js';

test('property: PairColumns.sort and sortPairs = a stable comparison sort of the same pairs as objects (ties kept in order), by counting and by comparison', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat({ max: 49 }), fc.nat({ max: 49 }), fc.double({ min: 0, max: 1, noNaN: true })), { maxLength: 300 }),
      fc.constantFrom(50, 100_000),
      (pairs, n) => {
        const columns = new PairColumns(1);
        for (const [a, b, s] of pairs) columns.add(a, b, s);
        const want = pairs.map(([a, b, similarity]) => ({ a, b, similarity }));
        const objects = want.map((p) => ({ ...p }));
        want.sort((x, y) => x.a - y.a || x.b - y.b);
        sortPairs(objects);
        columns.sort(n);
        assert.equal(columns.size, pairs.length);
        assert.deepEqual(columns.toPairs(), want);
        assert.deepEqual(objects, want);
      },
    ),
    { numRuns: 3001 },
  );
});

test('withLazyPairs: pairs read as objects when asked, enumerable, serialized, and replaceable (the columns are then forgotten)', () => {
  const columns = new PairColumns();
  columns.add(1, 2, 0.5);
  columns.add(3, 4, 1);
  const result = withLazyPairs({ clusters: [] as number[] }, columns);
  assert.equal(pairColumnsOf(result), columns);
  assert.ok(Object.keys(result).includes('pairs'));
  assert.deepEqual(result.pairs, [
    { a: 1, b: 2, similarity: 0.5 },
    { a: 3, b: 4, similarity: 1 },
  ]);
  assert.equal(result.pairs, result.pairs, 'made once');
  assert.deepEqual(JSON.parse(JSON.stringify(result)).pairs, result.pairs);
  assert.deepEqual({ ...result }.pairs, result.pairs);
  result.pairs = [];
  assert.deepEqual(result.pairs, []);
  assert.equal(pairColumnsOf(result), undefined);
});

test('dedupStream: its pairs (kept in columns) read as the same objects, in the same order, as dedup gives; pairs: false leaves none', async () => {
  // 20 unrelated documents of random words, each in three variants (an edit or two apart).
  let seed = 9;
  const word = (): string => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8).toString(36);
  };
  const base = Array.from({ length: 20 }, () => Array.from({ length: 40 }, word));
  const texts = base.flatMap((w) => [w.join(' '), [...w.slice(0, 38), word()].join(' '), [word(), ...w.slice(1)].join(' ')]);
  const want = dedup(texts, { threshold: 0.5 });
  assert.ok(want.pairs.length >= 40 && want.clusters.length >= 15, `${want.pairs.length} pairs, ${want.clusters.length} clusters`);
  for (const workers of [0, 2]) {
    const got = await dedupStream(() => [texts], { threshold: 0.5, workers });
    assert.ok(pairColumnsOf(got), 'the pairs are columns until read');
    assert.deepEqual(got.pairs, want.pairs);
    assert.deepEqual(got.clusters, want.clusters);
    assert.deepEqual(got.clusterOf, want.clusterOf);
    const none = await dedupStream(() => [texts], { threshold: 0.5, workers, pairs: false });
    assert.deepEqual(none.pairs, []);
    assert.equal(none.stats.pairs, want.stats.pairs);
  }
});
