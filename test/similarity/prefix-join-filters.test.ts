/**
 * Property tests of the prefix join's filters (src/similarity/prefixJoin.ts, tokenRank.ts) against
 * brute force, aimed at their edge cases: thresholds hit exactly by some pair (the threshold is
 * taken from a pair's own score), sets of equal sizes, identical sets (duplicates), tokens found in
 * one set only (never indexed or probed), fingerprints over the whole 32-bit range (every radix
 * pass), and the resumed verification after the prefixes, for Jaccard and containment, 32 and 64 bits.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bruteForcePairs, type ScoredPair } from '../../src/similarity/bruteForce.js';
import { bruteForceContainment, containment } from '../../src/similarity/containment.js';
import { jaccard } from '../../src/similarity/jaccard.js';
import { prefixJoin, prefixJoin64 } from '../../src/similarity/prefixJoin.js';

const key = (p: ScoredPair): string => `${p.a} ${p.b} ${p.similarity}`;

/**
 * A corpus over a pool of tokens spread across the uint32 range: sets of a few sizes only (so many
 * equal sizes), some repeated verbatim (duplicates), some with private tokens (singles).
 */
const corpus = fc
  .record({
    pool: fc.uniqueArray(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 8, maxLength: 60 }),
    sizes: fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 3 }),
    sets: fc.array(
      fc.record({ size: fc.nat(), picks: fc.array(fc.nat(), { maxLength: 12 }), dup: fc.boolean(), privates: fc.nat({ max: 4 }), salt: fc.nat() }),
      {
        minLength: 2,
        maxLength: 25,
      },
    ),
  })
  .map(({ pool, sizes, sets }) => {
    const out: Uint32Array[] = [];
    for (const s of sets) {
      if (s.dup && out.length > 0) {
        out.push(out[s.salt % out.length]!.slice());
        continue;
      }
      const want = sizes[s.size % sizes.length]!;
      const chosen = new Set<number>();
      for (const p of s.picks) if (chosen.size < want) chosen.add(pool[p % pool.length]!);
      // Private tokens: distinct from the pool and from every other set's.
      for (let k = 0; k < s.privates && chosen.size < want + 2; k++) chosen.add((0x9e3779b9 * (out.length * 8 + k + 1)) >>> 0 | 1);
      out.push(Uint32Array.from(chosen).sort());
    }
    return out;
  });

/** A threshold some pair of the corpus hits exactly (its own score), or `fallback` if none share anything. */
function exactThreshold(sets: Uint32Array[], pick: number, score: (a: Uint32Array, b: Uint32Array) => number, fallback: number): number {
  const scores: number[] = [];
  for (let i = 0; i < sets.length; i++)
    for (let j = i + 1; j < sets.length; j++) {
      const s = score(sets[i]!, sets[j]!);
      if (s > 0) scores.push(s);
    }
  return scores.length === 0 ? fallback : scores[pick % scores.length]!;
}

const to64 = (s: Uint32Array): BigUint64Array => BigUint64Array.from([...s].map((v) => (BigInt(v) << 20n) | 0xabcn)).sort();

test('Jaccard: join equals brute force at a threshold some pair hits exactly', () => {
  fc.assert(
    fc.property(corpus, fc.nat(), fc.double({ min: 0.05, max: 1, noNaN: true }), (sets, pick, fallback) => {
      const t = exactThreshold(sets, pick, jaccard, fallback);
      const truth = bruteForcePairs(sets, t).map(key);
      assert.deepEqual(prefixJoin(sets, t).pairs.map(key), truth);
      assert.deepEqual(prefixJoin64(sets.map(to64), t).pairs.map(key), truth);
    }),
    { numRuns: 600, seed: 1517 },
  );
});

test('containment: join equals brute force at a threshold some pair hits exactly', () => {
  const score = (a: Uint32Array, b: Uint32Array): number => Math.max(containment(a, b), containment(b, a));
  fc.assert(
    fc.property(corpus, fc.nat(), fc.double({ min: 0.05, max: 1, noNaN: true }), (sets, pick, fallback) => {
      const t = exactThreshold(sets, pick, score, fallback);
      const truth = bruteForceContainment(sets, t).map(key);
      assert.deepEqual(prefixJoin(sets, t, { measure: 'containment' }).pairs.map(key), truth);
      assert.deepEqual(prefixJoin64(sets.map(to64), t, { measure: 'containment' }).pairs.map(key), truth);
    }),
    { numRuns: 600, seed: 1518 },
  );
});

test('duplicates, equal sizes and singles by hand: every pair found, nothing extra', () => {
  const a = Uint32Array.from([5, 9, 0xfffffff0, 0x80000000]);
  // Three copies of a, one with a private token more (J = 4/5 exactly), one disjoint set of equal size.
  const sets = [a, a.slice(), Uint32Array.from([5, 9, 77, 0xfffffff0, 0x80000000]), a.slice(), Uint32Array.from([1, 2, 3, 4])];
  const got = prefixJoin(sets, 0.8).pairs.map(key);
  assert.deepEqual(got, bruteForcePairs(sets, 0.8).map(key));
  assert.equal(got.length, 6);
  // Only private tokens: nothing can pair, and nothing is indexed.
  const lonely = [Uint32Array.from([1, 2]), Uint32Array.from([3, 4]), Uint32Array.from([5, 6])];
  const r = prefixJoin(lonely, 0.1);
  assert.deepEqual(r.pairs, []);
  assert.equal(r.stats.indexed, 0);
});
