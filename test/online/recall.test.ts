/**
 * Honest per-query thresholds (issue #35): on an index built for 0.8, queries at 0.5 and 0.6 are
 * measured against brute force on examples/ads.tsv (the pairs ≥ t, each queried from its first
 * document). The recall warning's number, p(t) = 1 − (1 − t^r)^b, must be a lower bound of the
 * measured recall, and the recall of the pairs in [t, 0.8), averaged over 16 MinHash seeds, must
 * agree with the S-curve's prediction for them (the mean of p(s) over their similarities s).
 * Deterministic: fixed seeds, fixed data.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { NearDupIndex, bruteForcePairs, createShingler, openInput } from '../../src/index.js';
import { candidateProbability } from '../../src/lsh/params.js';
import { buildApp } from '../../src/server/app.js';
import { repoRoot } from '../cliUtil.js';

async function ads(): Promise<string[]> {
  const input = await openInput(path.join(repoRoot, 'examples/ads.tsv'), { columns: { text: ['Title', 'Short Description'] } });
  const out: string[] = [];
  for await (const r of input.records) out.push(r.text);
  return out;
}

test("queries at 0.5 and 0.6 on an index built for 0.8: measured recall against brute force, at least the warning's p(t), as the S-curve predicts", async () => {
  const texts = await ads();
  assert.equal(texts.length, 400);
  const shingler = createShingler({ k: 5 });
  const sets = texts.map((t) => shingler.set(t));
  const lines: string[] = [];
  for (const t of [0.5, 0.6]) {
    const truth = bruteForcePairs(sets, t);
    // The pairs the index's own threshold does not promise: in [t, 0.8).
    const below = truth.filter((p) => p.similarity < 0.8);
    const perSeed: number[] = [];
    let overall = 0;
    let predicted = 0;
    let pt = 0;
    // One index per MinHash seed: the recall of one index varies (near copies make pairs fall
    // together), its mean over seeds is what the S-curve predicts.
    for (let seed = 1; seed <= 16; seed++) {
      const index = await NearDupIndex.open({ threshold: 0.8, seed });
      await index.addMany(texts.map((text, i) => ({ id: String(i), text })));
      const { bands, rows } = index.manifest;
      const found = async (p: { a: number; b: number; similarity: number }) => {
        const ms = await index.query(texts[p.a]!, { threshold: t });
        const m = ms.find((x) => x.id === String(p.b));
        if (m) assert.ok(Math.abs(m.similarity - p.similarity) < 1e-9, 'the index scores exactly, as brute force does');
        // Exact verification: nothing below t is ever returned.
        for (const x of ms) assert.ok(x.similarity >= t);
        return m !== undefined;
      };
      let f = 0;
      for (const p of below) if (await found(p)) f++;
      perSeed.push(f / below.length);
      if (seed === 1) {
        let all = 0;
        for (const p of truth) if (await found(p)) all++;
        overall = all / truth.length;
        for (const p of below) predicted += candidateProbability(p.similarity, bands, rows) / below.length;
        const warning = index.recallAt(t)!;
        pt = warning.atThreshold;
        assert.equal(pt, candidateProbability(t, bands, rows));
        assert.ok(overall >= pt, `recall ${overall} at ${t} is below the warning's lower bound ${pt}`);
      }
      await index.close();
    }
    const mean = perSeed.reduce((a, b) => a + b, 0) / perSeed.length;
    lines.push(
      `# threshold ${t}, index for 0.8 (16×6): ${truth.length} true pairs, recall ${overall.toFixed(3)} (seed 1); `
        + `the ${below.length} pairs in [${t}, 0.8): recall ${mean.toFixed(3)} (mean of 16 seeds, ${Math.min(...perSeed).toFixed(3)}–${
          Math.max(...perSeed).toFixed(3)
        }), `
        + `S-curve ${predicted.toFixed(3)}, warning p(${t}) = ${pt.toFixed(3)}`,
    );
    assert.ok(mean >= pt, `mean recall of the pairs in [${t}, 0.8) is below p(${t})`);
    assert.ok(Math.abs(mean - predicted) < 0.06, `pairs in [${t}, 0.8): measured ${mean}, S-curve ${predicted}`);
  }
  console.log(lines.join('\n'));
  const index = await NearDupIndex.open({ threshold: 0.8 });
  assert.equal(index.recallAt(0.8), null);
  assert.equal(index.recallAt(0.9), null);
  assert.throws(() => index.recallAt(0), RangeError);
  await index.close();
});

test("http: a query or duplicates request below the index's threshold carries the recall warning; at or above it, none", async () => {
  const texts = (await ads()).slice(0, 50);
  const index = await NearDupIndex.open({ threshold: 0.8 });
  await index.addMany(texts.map((text, i) => ({ id: String(i), text })));
  const app = buildApp(index);
  let r = await app.inject({ method: 'POST', url: '/v1/query', payload: { text: texts[0], threshold: 0.5, fields: ['id'] } });
  const recall = r.json().recall;
  assert.deepEqual({ ...recall, message: undefined }, {
    threshold: 0.5,
    indexThreshold: 0.8,
    bands: 16,
    rows: 6,
    atThreshold: candidateProbability(0.5, 16, 6),
    message: undefined,
  });
  assert.match(recall.message, /^The threshold 0\.5 is below the index’s 0\.8: its LSH bands \(16 × 6\) were chosen for 0\.8, .*found with probability 22%/);
  r = await app.inject({ method: 'GET', url: '/v1/documents/0/duplicates?threshold=0.6' });
  assert.equal(r.json().recall.threshold, 0.6);
  for (const payload of [{ text: texts[0] }, { text: texts[0], threshold: 0.8 }, { text: texts[0], threshold: 0.5, topK: 3 }]) {
    r = await app.inject({ method: 'POST', url: '/v1/query', payload });
    assert.equal(r.json().recall, undefined, JSON.stringify(payload));
  }
  await app.close();
  await index.close();
});
