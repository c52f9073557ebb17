/** The batch pipeline: verification modes, clusters, empty documents, determinism, large buckets. */
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dedup } from '../../src/dedup/dedup.js';
import { clusterPairs, clustersOfPairs, UnionFind } from '../../src/cluster/clusters.js';
import { PairSet } from '../../src/lsh/pairSet.js';
import { BucketTable } from '../../src/lsh/bucketTable.js';
import { lshCandidates } from '../../src/lsh/candidates.js';
import { SignatureMatrix } from '../../src/sketch/signatureMatrix.js';
import { kijijiDocs } from '../helpers.js';

const base = 'the quick brown fox jumps over the lazy dog while the farmer sleeps under an old oak tree near the river';
const corpus = [
  base, // 0
  'something else entirely, about the weather in rome and the price of apartments', // 1
  base + ' today', // 2: near duplicate of 0
  '', // 3: empty
  base.replace('lazy', 'lazy'), // 4: exact copy of 0
  '   ', // 5: empty after normalization
  'a different text about cats and dogs living together in a small flat', // 6
];

test('exact verification keeps true pairs with exact Jaccard; clusters take the smallest id', () => {
  const r = dedup(corpus, { threshold: 0.8 });
  assert.deepEqual(r.pairs.map((p) => [p.a, p.b]), [[0, 2], [0, 4], [2, 4]]);
  assert.equal(r.pairs.find((p) => p.b === 4)!.similarity, 1);
  assert.deepEqual(r.clusters, [{ id: 0, members: [0, 2, 4] }]);
  assert.deepEqual(r.empty, [3, 5]);
  assert.equal(r.stats.emptyDocs, 2);
  assert.equal(r.clusterOf[4], 0);
  assert.equal(r.clusterOf[6], 6);
});

test('estimate and none modes; empty documents are never candidates', () => {
  const est = dedup(corpus, { threshold: 0.8, verify: 'estimate' });
  assert.deepEqual(est.pairs.map((p) => [p.a, p.b]), [[0, 2], [0, 4], [2, 4]]);
  assert.ok(est.pairs.every((p) => p.similarity >= 0.8));
  const none = dedup(corpus, { threshold: 0.8, verify: 'none' });
  assert.equal(none.pairs.length, none.stats.candidates);
  assert.ok(none.pairs.length >= 3, 'the three true pairs are candidates');
  for (const r of [est, none]) assert.ok(r.pairs.every((p) => p.a !== 3 && p.b !== 3 && p.a !== 5 && p.b !== 5));
  assert.throws(() => dedup(corpus, { verify: 'fuzzy' as never }), /verify/);
  assert.throws(() => dedup(corpus, { threshold: 1.5 }), /threshold/);
});

test('output is deterministic and independent of input container', () => {
  // The Kijiji ads (2,627, with many exact and near copies) plus the small corpus: more documents
  // than a non-array input pre-sizes for (1,024), so the generator and iterator inputs also take the
  // growth path. Everything but the timings must be identical: pairs, clusters, empties, stats.
  const docs = [...corpus, ...kijijiDocs()];
  const opts = { threshold: 0.7, minhash: { seed: 3 } };
  const strip = (r: ReturnType<typeof dedup>) => ({ ...r, stats: { ...r.stats, timings: undefined } });
  const a = strip(dedup(docs, opts));
  assert.ok(a.pairs.length > 1000 && a.clusters.length > 100, `a real workload: ${a.pairs.length} pairs, ${a.clusters.length} clusters`);
  assert.ok(a.empty.length >= 2);
  function* gen() {
    yield* docs;
  }
  assert.deepEqual(strip(dedup(gen(), opts)), a, 'generator input');
  assert.deepEqual(strip(dedup(docs.values(), opts)), a, 'iterator input');
  assert.deepEqual(strip(dedup([...docs], opts)), a, 'a second run on a copy of the array');
});

test('a large group of copies goes through LSH once, and every pair is still reported once', () => {
  const m = 60;
  const docs = [...Array.from({ length: m }, () => base), 'unrelated words here and there'];
  const r = dedup(docs, { threshold: 0.9 });
  assert.equal(r.pairs.length, (m * (m - 1)) / 2);
  assert.equal(new Set(r.pairs.map((p) => `${p.a},${p.b}`)).size, r.pairs.length);
  assert.equal(r.stats.copies, m - 1);
  assert.equal(r.stats.candidates, (m * (m - 1)) / 2, 'candidates counted per document pair');
  assert.equal(r.stats.buckets.sharedBuckets, 0, 'one distinct text per group: no shared bucket');
  assert.deepEqual(r.clusters.map((c) => c.members.length), [m]);
});

test('lshCandidates visits a member list repeated in every band once', () => {
  const m = 60;
  const sigs = new SignatureMatrix(128, m);
  for (let i = 0; i < m; i++) {
    const row = sigs.row(sigs.push());
    for (let k = 0; k < 128; k++) row[k] = k * 7919;
    sigs.present[i] = 1;
  }
  const { pairs, stats } = lshCandidates(sigs, 16, 8);
  assert.equal(pairs.size, (m * (m - 1)) / 2);
  assert.equal(stats.repeatedBuckets, 15, 'the same member list in every band is visited once');
});

test('union-find, pair set and bucket table basics', () => {
  const uf = new UnionFind(5);
  uf.union(4, 3);
  uf.union(3, 1);
  assert.equal(uf.find(4), 1);
  const { clusters } = clusterPairs(6, [{ a: 4, b: 5 }, { a: 1, b: 2 }, { a: 2, b: 5 }]);
  assert.deepEqual(clusters, [{ id: 1, members: [1, 2, 4, 5] }]);
  const ps = new PairSet(2);
  for (let i = 0; i < 1000; i++) ps.add(i % 37, 1000 + (i % 91));
  assert.equal(ps.size, 37 * 91 > 1000 ? new Set(Array.from({ length: 1000 }, (_, i) => `${i % 37},${i % 91}`)).size : 0);
  assert.equal(ps.add(0, 1000), false);
  const bt = new BucketTable(2);
  for (let d = 0; d < 100; d++) bt.add(d % 7, 99, d);
  let total = 0;
  for (let k = 0; k < bt.bucketCount; k++) total += bt.sizeAt(k);
  assert.equal(total, 100);
  assert.equal(bt.bucketCount, 7);
});

test('property: PairSet = a set of "a,b" strings, any order of a and b, 0 included; first occurrences kept in order across growth', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat({ max: 40 }), fc.nat({ max: 40 })), { maxLength: 600 }), fc.integer({ min: 1, max: 64 }), (pairs, expected) => {
      const ps = new PairSet(expected);
      const seen = new Set<string>();
      const order: [number, number][] = [];
      for (const [a, b] of pairs) {
        const key = `${a},${b}`;
        assert.equal(ps.add(a, b), !seen.has(key));
        if (!seen.has(key)) order.push([a, b]);
        seen.add(key);
      }
      assert.equal(ps.size, order.length);
      assert.deepEqual(Array.from({ length: ps.size }, (_, i) => [ps.a[i], ps.b[i]]), order);
    }),
    { numRuns: 200, seed: 17 },
  );
});

test('property: clusterPairs = connected components of size ≥ 2 (by a search written here), sorted by id, members ascending; clusterOf names each component by its smallest member', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 60 }), fc.array(fc.tuple(fc.nat({ max: 59 }), fc.nat({ max: 59 })), { maxLength: 80 }), (n, edges) => {
      const pairs = edges.filter(([a, b]) => a < n && b < n && a !== b).map(([a, b]) => ({ a: Math.min(a, b), b: Math.max(a, b) }));
      const adj: number[][] = Array.from({ length: n }, () => []);
      for (const { a, b } of pairs) (adj[a]!.push(b), adj[b]!.push(a));
      const seen = new Uint8Array(n);
      const want: { id: number; members: number[] }[] = [];
      const owner = Array.from({ length: n }, (_, i) => i);
      for (let s = 0; s < n; s++) {
        if (seen[s]) continue;
        const members: number[] = [];
        const stack = [s];
        seen[s] = 1;
        while (stack.length > 0) {
          const x = stack.pop()!;
          members.push(x);
          for (const y of adj[x]!) if (!seen[y]) (seen[y] = 1, stack.push(y));
        }
        members.sort((x, y) => x - y);
        for (const m of members) owner[m] = members[0]!;
        if (members.length >= 2) want.push({ id: members[0]!, members });
      }
      const got = clusterPairs(n, pairs);
      assert.deepEqual(got.clusters, want);
      assert.deepEqual(Array.from(got.clusterOf), owner);
    }),
    { numRuns: 300 },
  );
});

test('property: clustersOfPairs (union-find over the clustered documents only, any numbers below 2^53) = clusterPairs over all documents, same clusters in the same order', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 60 }),
      fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 80 }),
      fc.constantFrom(1, 7, 2 ** 40),
      (n, raw, scale) => {
        const pairs = raw.map(([x, y]) => ({ a: x % n, b: y % n })).filter((p) => p.a !== p.b);
        const want = clusterPairs(n, pairs).clusters.map((c) => c.members);
        // Document numbers spread out (and past 2^32): only their order may matter.
        const a = Float64Array.from(pairs, (p) => p.a * scale);
        const b = Float64Array.from(pairs, (p) => p.b * scale);
        const got = clustersOfPairs(a, b, pairs.length);
        const clusters: number[][] = [];
        for (let k = 0; k + 1 < got.start.length; k++)
          clusters.push(Array.from(got.order.subarray(got.start[k]!, got.start[k + 1]!), (p) => got.docs[p]! / scale));
        assert.deepEqual(clusters, want);
      },
    ),
    { numRuns: 300, seed: 36 },
  );
});
