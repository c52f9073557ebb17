/** The CLI's number formatting equals `toLocaleString('en-US')`, which it avoids for start-up time. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { int } from '../../src/cli/report.js';

test('int() formats like toLocaleString("en-US") for every safe integer and for fractions it rounds', () => {
  fc.assert(
    fc.property(fc.oneof(fc.maxSafeInteger(), fc.integer(), fc.double({ min: -1e15, max: 1e15, noNaN: true })), (n) => {
      const expected = Math.round(n).toLocaleString('en-US');
      // Math.round(-0.4) is -0, which toLocaleString prints as "-0"; a count of zero reads "0".
      assert.equal(int(n), expected === '-0' ? '0' : expected);
    }),
    { numRuns: 20000, seed: 17 },
  );
  for (const x of [0, 999, 1000, -1000, 1234567, 2 ** 53 + 10, NaN, Infinity]) assert.equal(int(x), Math.round(x).toLocaleString('en-US'));
});
