/**
 * Real data: seed 000's setup on the Kijiji rental ads (data/, shipped in the repo). The expected pair set was
 * computed independently in Python with string shingles (test/fixtures/kijiji-ground-truth.py).
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { createShingler } from '../../src/text/shingler.js';
import { bruteForcePairs } from '../../src/similarity/bruteForce.js';
import { dedup } from '../../src/dedup/dedup.js';
import { kijijiDocs, repoRoot } from '../helpers.js';

const docs = kijijiDocs();
const shingle = { kind: 'char' as const, k: 10, normalize: { preset: 'seed000' as const } };
const expected = gunzipSync(readFileSync(path.join(repoRoot, 'test/fixtures/kijiji-bruteforce-pairs.tsv.gz')))
  .toString('utf8')
  .trim()
  .split('\n')
  .map((l) => l.replace('\t', ' '));

test('the file has 2,627 documents', () => {
  assert.equal(docs.length, 2627);
});

test('brute force finds exactly the 10,360 pairs with J ≥ 0.8 (10,358 without the last document, as seed 000 counted)', () => {
  const sh = createShingler(shingle);
  const pairs = bruteForcePairs(docs.map((d) => sh.set(d)), 0.8);
  assert.equal(pairs.length, 10360);
  assert.deepEqual(pairs.map((p) => `${p.a} ${p.b}`), expected);
  assert.equal(pairs.filter((p) => p.b < docs.length - 1).length, 10358);
});

for (const method of ['oph', 'classic'] as const) {
  test(`dedup (${method}, exact verification) finds ≥ 99.9% of the brute-force pairs and none below 0.8`, () => {
    const r = dedup(docs, { threshold: 0.8, shingle, minhash: { method } });
    const truth = new Set(expected);
    const found = r.pairs.filter((p) => truth.has(`${p.a} ${p.b}`)).length;
    assert.ok(found / truth.size >= 0.999, `recall ${found}/${truth.size}`);
    assert.ok(r.pairs.every((p) => p.similarity >= 0.8 && p.a < p.b));
    assert.equal(r.pairs.length, found, 'every verified pair is a true pair');
    assert.equal(r.stats.emptyDocs, 0);
    assert.ok(r.bands.recallAtThreshold >= 0.99);
  });
}
