/**
 * Issue 7, fuzzing: normalization, shingling and MinHash driven by random Unicode (lone surrogates,
 * zero-width characters, RTL marks, combining marks, NUL, quotes, line breaks): nothing throws, and
 * the results are well formed and deterministic.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { normalize, type NormalizePreset } from '../../src/text/normalize.js';
import { createShingler, type ShingleKind } from '../../src/text/shingler.js';
import { createMinHasher } from '../../src/sketch/minhash.js';
import { RUNS, nasty } from '../helpers/fuzz.js';

test('normalization: never throws, returns well-formed output for the same input, and default is idempotent', () => {
  fc.assert(
    fc.property(
      nasty(80),
      fc.constantFrom<NormalizePreset>('default', 'seed000', 'none'),
      fc.boolean(),
      fc.boolean(),
      (s, preset, stripPunctuation, stripDiacritics) => {
        const n = normalize(s, { preset, stripPunctuation, stripDiacritics });
        assert.equal(typeof n, 'string');
        assert.equal(normalize(s, { preset, stripPunctuation, stripDiacritics }), n);
        if (preset === 'default' && !stripDiacritics && !stripPunctuation) {
          assert.equal(normalize(n), n, `not idempotent on ${JSON.stringify(s)}`);
          assert.ok(!/\s\s|^\s|\s$/.test(n), 'whitespace collapsed and trimmed');
        }
      },
    ),
    { numRuns: RUNS * 3 },
  );
});

test('shingling and MinHash: any string gives a sorted unique fingerprint set and a stable signature', () => {
  const hashers = [createMinHasher({ method: 'classic', numPerm: 32 }), createMinHasher({ method: 'oph', numPerm: 32 })];
  fc.assert(
    fc.property(nasty(120), fc.constantFrom<ShingleKind>('char', 'word', 'spot'), fc.integer({ min: 1, max: 8 }), (s, kind, k) => {
      const sh = createShingler({ kind, k });
      const set = sh.set(s);
      for (let i = 1; i < set.length; i++) assert.ok(set[i]! > set[i - 1]!, 'sorted and unique');
      assert.deepEqual(sh.set(s), set, 'deterministic');
      for (const h of hashers) {
        const sig = h.sign(set);
        if (set.length === 0) assert.equal(sig, null);
        else {
          assert.equal(sig!.length, 32);
          assert.deepEqual(h.sign(set), sig);
        }
      }
    }),
    { numRuns: RUNS * 3 },
  );
});
