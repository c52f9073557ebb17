/**
 * Exactness of span deduplication (#50): with the unit hashes masked to a few bits by a test hook
 * (src/common/faults.ts), different units share a hash everywhere, and `dedupSpans` must still give
 * the brute-force oracle's answer (which compares texts, never hashes): the kept texts, the cuts,
 * the audit naming each kept occurrence, and the summary's counts and top units — every unit kind,
 * keep-first and `--min-docs`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { installFaultHooks } from '../../src/common/faults.js';
import { dedupSpans } from '../../src/spans/dedupSpans.js';
import { spansOracle } from '../helpers/spansOracle.js';
import { assertOracle, doc, optionsArb, wordsDoc } from '../helpers/spansCorpus.js';

/** Runs `fn` with unit hashes masked to `bits` bits in this process. */
function masked<T>(bits: number, fn: () => T): T {
  installFaultHooks({ spansHashBits: () => bits });
  try {
    return fn();
  } finally {
    installFaultHooks({ spansHashBits: undefined });
  }
}

test('hashes masked to 3–8 bits: dedupSpans equals the oracle (every unit, keep-first and --min-docs)', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(doc, wordsDoc), { minLength: 1, maxLength: 10 }), optionsArb, fc.integer({ min: 3, max: 8 }), (texts, o, bits) => {
      const opts = { ...o, window: o.unit === 'sentence' ? o.window : undefined, minLength: o.unit === 'substring' ? o.minLength : undefined };
      const ids = texts.map((_, i) => `d${i}`);
      const got = masked(bits, () => dedupSpans(texts.map((text, i) => ({ id: ids[i]!, text })), opts));
      assertOracle(got, spansOracle(texts, ids, opts));
    }),
    { numRuns: 400, seed: 5050 },
  );
});

test('a collision in a few bits: two different lines of one hash are two units, each kept at its own first occurrence', () => {
  // Eight lines in four hash values: some must share one.
  const lines = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
  const texts = lines.map((l, i) => `${l}\n${lines[(i + 1) % lines.length]}\n`);
  const ids = texts.map((_, i) => `d${i}`);
  for (const minDocs of [undefined, 2, 3]) {
    const got = masked(2, () => dedupSpans(texts.map((text, i) => ({ id: ids[i]!, text })), { unit: 'line', minDocs }));
    const want = spansOracle(texts, ids, { unit: 'line', minDocs });
    assertOracle(got, want);
    assert.equal(got.summary.distinctUnits, 8, 'eight lines, however few hashes');
  }
});
