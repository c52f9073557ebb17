/** chooseBands and the S-curve. */
import test from 'node:test';
import assert from 'node:assert/strict';
import { candidateProbability, chooseBands, falseNegativeArea, falsePositiveArea } from '../../src/lsh/params.js';
import { bandKeys, bandKey53 } from '../../src/lsh/bandKeys.js';

test('P(s) = 1 − (1 − s^r)^b, as in the lecture notes (20 bands of 5 rows)', () => {
  assert.ok(Math.abs(candidateProbability(0.8, 20, 5) - (1 - 0.00035)) < 0.0001);
  assert.ok(Math.abs(candidateProbability(0.4, 20, 5) - 0.186) < 0.001);
  assert.equal(candidateProbability(1, 7, 3), 1);
  assert.equal(candidateProbability(0, 7, 3), 0);
});

test('the areas integrate the S-curve (checked against a fine Riemann sum)', () => {
  const riemann = (f: (s: number) => number, lo: number, hi: number): number => {
    const n = 100000;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += f(lo + ((i + 0.5) * (hi - lo)) / n);
    return (sum * (hi - lo)) / n;
  };
  for (const [b, r] of [[16, 6], [10, 5], [2, 50], [128, 1]] as const) {
    assert.ok(Math.abs(falsePositiveArea(0.8, b, r) - riemann((s) => candidateProbability(s, b, r), 0, 0.8)) < 1e-6);
    assert.ok(Math.abs(falseNegativeArea(0.8, b, r) - riemann((s) => 1 - candidateProbability(s, b, r), 0.8, 1)) < 1e-6);
  }
});

test('chooseBands: reaches the recall with the smallest false-positive area of all (b, r)', () => {
  for (const [t, k, rec] of [[0.8, 128, 0.99], [0.5, 128, 0.99], [0.9, 64, 0.95], [0.8, 50, 0.999], [0.3, 256, 0.99]] as const) {
    const c = chooseBands(t, k, { minRecallAtThreshold: rec });
    assert.ok(c.bands * c.rows <= k);
    assert.ok(c.recallAtThreshold >= rec, `P(t)=${c.recallAtThreshold}`);
    for (let b = 1; b <= k; b++) {
      for (let r = 1; b * r <= k; r++) {
        if (candidateProbability(t, b, r) >= rec)
          assert.ok(falsePositiveArea(t, b, r) >= c.falsePositiveArea - 1e-12, `(${b},${r}) beats (${c.bands},${c.rows})`);
      }
    }
    assert.equal(c.curve.length, 10);
    assert.equal(c.rule, 'min-recall');
  }
  assert.deepEqual([chooseBands(0.8, 128).bands, chooseBands(0.8, 128).rows], [16, 6]);
});

// The choice compares every (b, r) coarsely first and only a shortlist at full precision: it must
// pick what a plain scan of every (b, r) at full precision picks (the first least one in order).
test('chooseBands picks what a full-precision scan of every (b, r) picks, over a grid of thresholds, lengths, recalls and weights', () => {
  const scanRecall = (t: number, k: number, rec: number): [number, number] | undefined => {
    let best: { b: number; r: number; a: number } | undefined;
    for (let r = 1; r <= k; r++) {
      let b = 1;
      while (b <= Math.floor(k / r) && candidateProbability(t, b, r) < rec) b++;
      if (b > Math.floor(k / r)) continue;
      const a = falsePositiveArea(t, b, r);
      if (!best || a < best.a - 1e-15) best = { b, r, a };
    }
    return best && [best.b, best.r];
  };
  for (const k of [1, 2, 3, 5, 16, 50, 64, 128, 256]) {
    for (let i = 1; i <= 19; i += k > 64 ? 3 : 1) {
      const t = i / 20;
      for (const rec of [0.5, 0.9, 0.99, 0.999]) {
        const want = scanRecall(t, k, rec);
        const c = chooseBands(t, k, { minRecallAtThreshold: rec });
        if (want) assert.deepEqual([c.bands, c.rows, c.rule], [...want, 'min-recall'], `t=${t} k=${k} rec=${rec}`);
        else assert.equal(c.rule, 'best-effort', `t=${t} k=${k} rec=${rec}`);
      }
    }
  }
  for (const k of [4, 16, 48]) {
    for (const t of [0.3, 0.5, 0.7, 0.9]) {
      for (const [fp, fn] of [[1, 1], [1, 0], [0, 1], [0.2, 0.8], [0.9, 0.1]] as const) {
        let best = { b: 1, r: 1, cost: Infinity };
        for (let b = 1; b <= k; b++) {
          for (let r = 1; b * r <= k; r++) {
            const cost = fp * falsePositiveArea(t, b, r) + fn * falseNegativeArea(t, b, r);
            if (cost < best.cost - 1e-15) best = { b, r, cost };
          }
        }
        const c = chooseBands(t, k, { weights: { fp, fn } });
        assert.deepEqual([c.bands, c.rows], [best.b, best.r], `t=${t} k=${k} weights ${fp}/${fn}`);
      }
    }
  }
});

test('chooseBands: weights minimise the weighted areas; explicit bands and rows win', () => {
  const c = chooseBands(0.7, 64, { weights: { fp: 0.5, fn: 0.5 } });
  const cost = (b: number, r: number): number => 0.5 * falsePositiveArea(0.7, b, r) + 0.5 * falseNegativeArea(0.7, b, r);
  for (let b = 1; b <= 64; b++) for (let r = 1; b * r <= 64; r++) assert.ok(cost(b, r) >= cost(c.bands, c.rows) - 1e-12);
  assert.equal(c.rule, 'weights');
  const e = chooseBands(0.8, 50, { bands: 10 });
  assert.deepEqual([e.bands, e.rows, e.rule], [10, 5, 'explicit']);
  assert.throws(() => chooseBands(0.8, 50, { bands: 10, rows: 6 }), /numPerm/);
  assert.throws(() => chooseBands(0, 50), /threshold/);
  const hard = chooseBands(0.5, 2, { minRecallAtThreshold: 0.9999 });
  assert.equal(hard.rule, 'best-effort');
});

test('band keys: equal bands give equal keys, different bands or positions give different keys', () => {
  const sig = Uint32Array.from({ length: 12 }, (_, i) => (i % 3) * 1000);
  const hi = new Uint32Array(4);
  const lo = new Uint32Array(4);
  bandKeys(sig, 4, 3, hi, lo); // four bands with identical slot values
  const keys = new Set([0, 1, 2, 3].map((b) => bandKey53(hi[b]!, lo[b]!)));
  assert.equal(keys.size, 4, 'the band index is part of the key');
  const sig2 = sig.slice();
  sig2[4] = 7;
  const hi2 = new Uint32Array(4);
  const lo2 = new Uint32Array(4);
  bandKeys(sig2, 4, 3, hi2, lo2);
  assert.deepEqual([hi2[0], hi2[2], hi2[3]], [hi[0], hi[2], hi[3]]);
  assert.notEqual(hi2[1], hi[1]);
  assert.ok(bandKey53(0xffffffff, 0xffffffff) <= Number.MAX_SAFE_INTEGER);
});
