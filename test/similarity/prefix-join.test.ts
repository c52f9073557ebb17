/**
 * The exact prefix-filtering join (src/similarity/prefixJoin.ts) against brute force: on the
 * Kijiji ads at t = 0.5, 0.8, 0.9 for Jaccard and containment, and on random corpora (fast-check)
 * built to hold many pairs near the threshold, where an off-by-one in a prefix length shows.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createShingler } from '../../src/text/shingler.js';
import { bruteForcePairs, type ScoredPair } from '../../src/similarity/bruteForce.js';
import { bruteForceContainment } from '../../src/similarity/containment.js';
import { prefixJoin, prefixJoin64 } from '../../src/similarity/prefixJoin.js';
import { createSet64 } from '../../src/text/fingerprint64.js';
import { kijijiDocs } from '../helpers.js';

const key = (p: ScoredPair): string => `${p.a} ${p.b} ${p.similarity}`;

const docs = kijijiDocs();
const sh = createShingler({ kind: 'char', k: 5 });
const sets = docs.map((d) => sh.set(d));

/**
 * Brute-force containment pairs of the Kijiji sets at `t`: computed once at the lowest threshold
 * and filtered for the others (it was most of their time). Its scores are exact intersections over
 * the smaller size (intersectionAtLeast counts to the end once a pair can reach its bound), so a
 * pair's score is the same at any threshold it passes.
 */
const containmentTruth = (() => {
  let lowest: ScoredPair[] | undefined;
  return (t: number): ScoredPair[] => (lowest ??= bruteForceContainment(sets, 0.5)).filter((p) => p.similarity >= t);
})();

for (const t of [0.5, 0.8, 0.9]) {
  test(`Kijiji, Jaccard ≥ ${t}: the join gives exactly the brute-force pairs and scores`, () => {
    const truth = bruteForcePairs(sets, t);
    const got = prefixJoin(sets, t).pairs;
    assert.ok(truth.length > 1000, `enough pairs to mean something (${truth.length})`);
    assert.deepEqual(got.map(key), truth.map(key));
  });
  test(`Kijiji, containment ≥ ${t}: the join gives exactly the brute-force pairs, direction and scores`, () => {
    const truth = containmentTruth(t);
    const r = prefixJoin(sets, t, { measure: 'containment' });
    assert.ok(truth.length > 1000);
    assert.deepEqual(r.pairs.map(key), truth.map(key));
    // The filters prune: fewer verifications than pairs of documents.
    assert.ok(r.stats.candidates < (sets.length * (sets.length - 1)) / 2, `${r.stats.candidates} candidates`);
  });
}

/** Random corpora: a few base sets, each copied with a random fraction of its tokens dropped or replaced. */
const corpus = fc
  .record({
    bases: fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 6 }),
    edits: fc.array(
      fc.record({
        base: fc.nat(),
        keep: fc.double({ min: 0.3, max: 1, noNaN: true }),
        extra: fc.uniqueArray(fc.integer({ min: 0, max: 400 }), { maxLength: 20 }),
        seed: fc.nat(),
      }),
      {
        maxLength: 30,
      },
    ),
  })
  .map(({ bases, edits }) => {
    const out: Uint32Array[] = bases.map((b) => Uint32Array.from(b).sort());
    for (const e of edits) {
      const base = bases[e.base % bases.length]!;
      let s = e.seed;
      const kept = base.filter(() => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32) < e.keep);
      out.push(Uint32Array.from(new Set([...kept, ...e.extra])).sort());
    }
    return out;
  });

test('random corpora: Jaccard join equals brute force at any threshold', () => {
  fc.assert(
    fc.property(corpus, fc.double({ min: 0.05, max: 1, noNaN: true }), (sets, t) => {
      assert.deepEqual(prefixJoin(sets, t).pairs.map(key), bruteForcePairs(sets, t).map(key));
    }),
    { numRuns: 400, seed: 15 },
  );
});

test('random corpora: containment join equals brute force at any threshold', () => {
  fc.assert(
    fc.property(corpus, fc.double({ min: 0.05, max: 1, noNaN: true }), (sets, t) => {
      assert.deepEqual(prefixJoin(sets, t, { measure: 'containment' }).pairs.map(key), bruteForceContainment(sets, t).map(key));
    }),
    { numRuns: 400, seed: 15 },
  );
});

test('thresholds of exactly representable ratios keep the pairs exactly at the threshold', () => {
  // |a∩b| = 4, |a∪b| = 5: J = 0.8 exactly; a ⊂ b with 4 of 5: containment 0.8.
  const a = Uint32Array.from([1, 2, 3, 4]);
  const b = Uint32Array.from([1, 2, 3, 4, 5]);
  assert.deepEqual(prefixJoin([a, b], 0.8).pairs, [{ a: 0, b: 1, similarity: 0.8 }]);
  assert.deepEqual(prefixJoin([b, a], 1, { measure: 'containment' }).pairs, [{ a: 1, b: 0, similarity: 1 }]);
  assert.deepEqual(prefixJoin([a, new Uint32Array(0), b], 0.8).pairs, [{ a: 0, b: 2, similarity: 0.8 }]);
  assert.throws(() => prefixJoin([a], 0), /threshold/);
  assert.throws(() => prefixJoin([a], 0.5, { measure: 'cosine' as 'jaccard' }), /unknown measure/);
});

/** Jaccard of two sorted unique 64-bit sets, by merge. */
function jaccard64(a: BigUint64Array, b: BigUint64Array): number {
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      n++;
      i++;
      j++;
    } else if (a[i]! < b[j]!) i++;
    else j++;
  }
  return n / (a.length + b.length - n);
}

test('64-bit fingerprints: the join over 64-bit sets equals brute force over them, and the 32-bit pairs on Kijiji', () => {
  const set64 = createSet64({ kind: 'char', k: 5 });
  const docs = kijijiDocs().slice(0, 700);
  const s64 = docs.map((d) => set64(d));
  // Same shingles, so the same set sizes as the 32-bit sets unless two shingles of a doc collide in 32 bits.
  assert.ok(s64.every((s, i) => s.length >= sets[i]!.length));
  // Brute force once for both thresholds (it was most of this test's ~20 s, run once per threshold).
  const sim: { pair: string; j: number }[] = [];
  for (let i = 0; i < s64.length; i++)
    for (let j = i + 1; j < s64.length; j++) if (s64[i]!.length && s64[j]!.length) sim.push({ pair: `${i} ${j}`, j: jaccard64(s64[i]!, s64[j]!) });
  for (const t of [0.5, 0.9]) {
    const truth = sim.filter((x) => x.j >= t).map((x) => x.pair);
    const got = prefixJoin64(s64, t).pairs;
    assert.deepEqual(got.map((p) => `${p.a} ${p.b}`), truth);
    assert.deepEqual(got.map((p) => `${p.a} ${p.b}`), prefixJoin(sets.slice(0, 700), t).pairs.map((p) => `${p.a} ${p.b}`));
  }
  assert.throws(() => createSet64({ multiset: true }), /multiset/);
});
