/**
 * The set screen (src/similarity/setScreen.ts) is exact: its bound is never below the Jaccard
 * similarity verification computes, so a candidate it rejects is one verification rejects, for
 * sets of every size (every level, shifted counts, sets of two levels compared), overlapping or
 * not, and thresholds near the similarity itself. And it is useful: at a fixed seed, the share of
 * unrelated sets of the online index's sizes it rejects at 0.8, an exact count.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isScreen, MAX_SCREEN_BYTES, screenBound, screenOf, ScreenQuery } from '../../src/similarity/setScreen.js';
import { jaccard, jaccardAtLeast } from '../../src/similarity/jaccard.js';
import { RUNS } from '../helpers/fuzz.js';

const sorted = (xs: Iterable<number>) => Uint32Array.from(new Set(xs)).sort();

/** `n` fingerprints from seed `seed` (fast-check's own arrays stay short: sets must reach thousands); `crowded`: few top bits used (full buckets, shifted counts). */
function values(n: number, seed: number, crowded: boolean): number[] {
  let x = seed | 1;
  return Array.from({ length: n }, () => {
    x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5;
    const v = (x ^ (x >>> 13)) >>> 0;
    return crowded ? v >>> 5 : v;
  });
}

const size = fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 4000 }));

/** Two sets sharing `common` fingerprints, each with its own on top. */
const pair = fc.record({ common: size, a: size, b: size, seed: fc.integer(), crowded: fc.boolean() }).map(({ common, a, b, seed, crowded }) => {
  const shared = values(common, seed, crowded);
  return { a: sorted([...shared, ...values(a, seed + 1, crowded)]), b: sorted([...shared, ...values(b, seed + 2, crowded)]) };
});

test('set screen: the bound is never below the Jaccard similarity, and a rejected candidate fails verification', () => {
  fc.assert(
    fc.property(pair, fc.double({ min: 0.05, max: 1, noNaN: true }), ({ a, b }, t) => {
      const [sa, sb] = [screenOf(a), screenOf(b)];
      assert.ok(isScreen(sa) && isScreen(sb) && sa.length <= MAX_SCREEN_BYTES);
      const j = a.length && b.length ? jaccard(a, b) : 0;
      assert.ok(screenBound(sa, sb) >= j && screenBound(sb, sa) >= j, `bound ${screenBound(sa, sb)} < ${j}`);
      // At the similarity itself, and around it: a rejection is always verification's rejection too.
      for (const min of [t, j, j + 1e-12, Math.max(1e-9, j - 1e-12)]) {
        if (!new ScreenQuery(sa, min).admits(sb)) assert.ok(jaccardAtLeast(a, b, min) < 0, `screen rejects J=${j} at ${min}`);
        if (!new ScreenQuery(sb, min).admits(sa)) assert.ok(jaccardAtLeast(b, a, min) < 0, `screen rejects J=${j} at ${min}`);
      }
    }),
    { numRuns: RUNS * 4 },
  );
});

test('set screen: a set against itself and against its subsets (two levels apart, counts shifted): never below J', () => {
  const nested = fc
    .record({ n: size, seed: fc.integer(), keep: fc.double({ min: 0.3, max: 1, noNaN: true }), crowded: fc.boolean() })
    .map(({ n, seed, keep, crowded }) => {
      const big = sorted(values(n + 1, seed, crowded));
      // Spread over the set, so that both halves of each bucket lose some.
      const a = big.filter((_, i) => (i * 0.618033988749895) % 1 < keep);
      return { a: a.length ? a : big.subarray(0, 1), b: big };
    });
  fc.assert(
    fc.property(nested, ({ a, b }) => {
      const j = jaccard(a, b);
      const [sa, sb] = [screenOf(a), screenOf(b)];
      assert.equal(screenBound(sb, sb), 1);
      assert.ok(screenBound(sa, sb) >= j && screenBound(sb, sa) >= j, `levels ${sa[0]}/${sb[0]}: bound ${screenBound(sa, sb)} < ${j}`);
      assert.ok(new ScreenQuery(sa, j).admits(sb) && new ScreenQuery(sb, j).admits(sa));
    }),
    { numRuns: RUNS * 4 },
  );
});

test('set screen: identical sets are admitted at 1, and bytes that are not a screen admit everything', () => {
  const s = sorted(Array.from({ length: 500 }, (_, i) => Math.imul(i + 1, 0x9e3779b1) >>> 0));
  assert.equal(screenBound(screenOf(s), screenOf(s)), 1);
  assert.ok(new ScreenQuery(screenOf(s), 1).admits(screenOf(s)));
  for (const junk of [new Uint8Array(0), new Uint8Array(5), Uint8Array.of(9, 0, 0, 0, 0, 0, 1), Uint8Array.of(3, 0, 1, 0, 0, 0)])
    assert.ok(new ScreenQuery(screenOf(s), 0.99).admits(junk));
});

test('set screen: unrelated sets of 150 to 250 fingerprints, seed 51: how many of 200 pairs it rejects from 0.5 to 0.8', () => {
  let x = 51;
  const rand = () => ((x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5), (x ^ (x >>> 13)) >>> 0);
  const sets = Array.from({ length: 400 }, () => sorted(Array.from({ length: 150 + (rand() % 101) }, rand)));
  const screens = sets.map(screenOf);
  const rejected = (min: number) => {
    let n = 0;
    for (let i = 0; i < 200; i++) if (!new ScreenQuery(screens[i]!, min).admits(screens[i + 200]!)) n++;
    return n;
  };
  // Exact counts at this seed. The sizes alone (J ≤ min/max) reject 58 of the 200 pairs at 0.8.
  assert.deepEqual([0.5, 0.6, 0.7, 0.8].map(rejected), [72, 197, 200, 200]);
});
