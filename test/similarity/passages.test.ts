/** Shared passages: compare's k-gram runs (similarity/passages.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createShingler } from '../../src/text/shingler.js';
import { shingleRuns } from '../../src/similarity/passages.js';
import { sharedPassages } from '../../src/cli/commands/compare.js';

test("shingleRuns: maximal runs of a's k-grams found anywhere in b (gathered from two places), longest first, with coverage", () => {
  const sh = createShingler({ kind: 'char', k: 3, normalize: { preset: 'none' } });
  // "abcdef" in a: "abcd" and "cdef" occur in b at two different places, so the run spans all of a.
  const a = 'abcdef-zz';
  const b = 'xxabcdxx cdefyy';
  const { runs, coverage } = shingleRuns(sh.fingerprints(a), sh.set(b), 3, a.length);
  assert.deepEqual(runs, [{ start: 0, length: 6 }]);
  assert.equal(coverage, 6 / 9);
  assert.deepEqual(shingleRuns(sh.fingerprints('ab'), sh.set(b), 3, 2), { runs: [], coverage: 0 });
  // compare's sharedPassages is these runs with their text.
  const shared = sharedPassages('aaaa xyz bbbb', 'bbbb qq aaaa', 4, 'default');
  assert.deepEqual(shared.passages, [
    { start: 0, length: 4, text: 'aaaa' },
    { start: 9, length: 4, text: 'bbbb' },
  ]);
});
