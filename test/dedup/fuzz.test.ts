/** Issue 7, fuzzing: batch dedup of random Unicode documents never crashes and gives valid pairs and clusters. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dedup } from '../../src/dedup/dedup.js';
import { RUNS, nasty } from '../helpers/fuzz.js';

test('dedup of random Unicode documents: no crash, every document is in exactly one cluster or alone, pairs are valid', () => {
  fc.assert(
    fc.property(fc.array(nasty(60), { maxLength: 40 }), (docs) => {
      // Duplicate some documents so there are pairs to find.
      const texts = [...docs, ...docs.slice(0, 5)];
      const r = dedup(texts, { threshold: 0.5, shingle: { k: 3 } });
      for (const p of r.pairs) {
        assert.ok(p.a >= 0 && p.a < texts.length && p.b >= 0 && p.b < texts.length && p.a !== p.b);
        assert.ok(p.similarity >= 0.5 && p.similarity <= 1);
      }
      const inCluster = new Set<number>();
      for (const c of r.clusters)
        for (const m of c.members) {
          assert.ok(!inCluster.has(m), 'a document is in one cluster');
          inCluster.add(m);
        }
    }),
    { numRuns: RUNS },
  );
});
