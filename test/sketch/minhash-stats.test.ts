/**
 * Statistical tests of the MinHash estimators at fixed seeds: error bounds against exact Jaccard,
 * and LSH candidate rates against the S-curve.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { createMinHasher, estimateJaccard, type MinHashMethod } from '../../src/sketch/minhash.js';
import { candidateProbability, chooseBands } from '../../src/lsh/params.js';
import { bandKeys } from '../../src/lsh/bandKeys.js';
import { UniqueInts, pairWithJaccard } from '../helpers.js';

const TARGETS = [0.1, 0.3, 0.5, 0.8, 0.95];
const SIZES = [5, 50, 500, 5000];
const PAIRS = 200;
const K = 128;

for (const method of ['oph', 'classic'] as MinHashMethod[]) {
  test(`${method}: |mean error| ≤ 0.01 and RMSE ≤ 1.2·sqrt(J(1−J)/k) in every (J, size) cell`, () => {
    const gen = new UniqueInts(method === 'oph' ? 101 : 202);
    const report: string[] = [];
    for (const m of SIZES) {
      for (const target of TARGETS) {
        let sumErr = 0;
        let sumSq = 0;
        let jSum = 0;
        for (let p = 0; p < PAIRS; p++) {
          // A fresh seed per pair: the error is over both the sets and the hash functions.
          const h = createMinHasher({ method, numPerm: K, seed: m * 1000 + p });
          const { a, b, j } = pairWithJaccard(gen, m, target);
          const e = estimateJaccard(h.sign(a)!, h.sign(b)!);
          sumErr += e - j;
          sumSq += (e - j) ** 2;
          jSum += j;
        }
        const j = jSum / PAIRS; // all pairs of a cell share the same exact J
        const mean = sumErr / PAIRS;
        const rmse = Math.sqrt(sumSq / PAIRS);
        const bound = 1.2 * Math.sqrt((j * (1 - j)) / K);
        report.push(`m=${m} J=${j.toFixed(3)} mean=${mean.toFixed(4)} rmse=${rmse.toFixed(4)} bound=${bound.toFixed(4)}`);
        assert.ok(Math.abs(mean) <= 0.01, `mean error ${mean} at ${report.at(-1)}`);
        assert.ok(rmse <= bound, `RMSE over bound at ${report.at(-1)}`);
      }
    }
  });
}

test('signatures are deterministic for a seed, differ across seeds, and empty input has none', () => {
  for (const method of ['oph', 'classic'] as MinHashMethod[]) {
    const set = Uint32Array.from([1, 2, 3, 99, 12345]);
    const a = createMinHasher({ method, seed: 9 }).sign(set)!;
    const b = createMinHasher({ method, seed: 9 }).sign(set)!;
    const c = createMinHasher({ method, seed: 10 }).sign(set)!;
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.equal(a.length, 128);
    assert.equal(createMinHasher({ method }).sign(new Uint32Array(0)), null);
    // Order and repeats do not matter.
    assert.deepEqual(createMinHasher({ method, seed: 9 }).sign(Uint32Array.from([12345, 3, 3, 99, 1, 2, 1])), a);
  }
});

test('the measured candidate rate of pairs at similarity s matches P(s) within sampling error', () => {
  const choice = chooseBands(0.8, K);
  const { bands, rows } = choice;
  const N = 600;
  const hi1 = new Uint32Array(bands);
  const lo1 = new Uint32Array(bands);
  const hi2 = new Uint32Array(bands);
  const lo2 = new Uint32Array(bands);
  for (const method of ['oph', 'classic'] as MinHashMethod[]) {
    const gen = new UniqueInts(method === 'oph' ? 7 : 8);
    for (const target of [0.4, 0.6, 0.7, 0.8, 0.9]) {
      let hits = 0;
      let jSum = 0;
      for (let p = 0; p < N; p++) {
        const h = createMinHasher({ method, numPerm: K, seed: 5000 + p });
        const { a, b, j } = pairWithJaccard(gen, 200, target);
        jSum += j;
        bandKeys(h.sign(a)!, bands, rows, hi1, lo1);
        bandKeys(h.sign(b)!, bands, rows, hi2, lo2);
        let shared = false;
        for (let x = 0; x < bands && !shared; x++) shared = hi1[x] === hi2[x] && lo1[x] === lo2[x];
        if (shared) hits++;
      }
      const s = jSum / N;
      const expected = candidateProbability(s, bands, rows);
      const rate = hits / N;
      const sd = Math.sqrt((expected * (1 - expected)) / N);
      assert.ok(Math.abs(rate - expected) <= 4 * sd + 0.01, `${method} s=${s.toFixed(3)}: rate ${rate} vs P(s) ${expected.toFixed(4)} (sd ${sd.toFixed(4)})`);
    }
  }
});
