/**
 * Containment queries on the online index and over HTTP: scores are exact (checked against brute
 * force), directions right, and the recall of planted short-in-long copies is measured by size
 * ratio and asserted at a binomial lower bound.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { NearDupIndex } from '../../src/index.js';
import { buildApp } from '../../src/server/app.js';
import { createShingler } from '../../src/text/shingler.js';
import { intersectionSize } from '../../src/similarity/jaccard.js';
import { kijijiDocs } from '../helpers.js';

const all = kijijiDocs();

test('index.query with measure containment: exact scores and directions, planted excerpts found', async () => {
  const index = await NearDupIndex.open({ threshold: 0.8 });
  const docs = all.slice(0, 800);
  await index.addMany(docs.map((text, i) => ({ id: `d${i}`, text })));
  const sh = createShingler({ kind: 'char', k: 5 });
  const sets = docs.map((d) => sh.set(d));
  let s = 7;
  const rnd = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const long = docs.map((d, i) => [d.length, i] as const).filter(([l]) => l > 500);
  // Excerpts of 30–60% of an ad: Jaccard with the source ≈ 0.3–0.6, below the index threshold.
  let found = 0;
  let jaccardFound = 0;
  const trials = 80;
  for (let k = 0; k < trials; k++) {
    const [len, i] = long[Math.floor(rnd() * long.length)]!;
    const part = Math.floor(len * (0.3 + 0.3 * rnd()));
    const from = Math.floor(rnd() * (len - part));
    const q = docs[i]!.slice(from, from + part);
    const matches = await index.query(q, { measure: 'containment', threshold: 0.9 });
    const qs = sh.set(q);
    // Every match is a true one, with its exact score and direction.
    for (const m of matches) {
      const x = sets[Number(m.id.slice(1))]!;
      const inter = intersectionSize(qs, x);
      assert.equal(m.similarity, inter / Math.min(qs.length, x.length));
      assert.equal(m.contained, qs.length <= x.length ? 'query' : 'document');
      assert.ok(m.similarity >= 0.9);
    }
    if (matches.some((m) => m.id === `d${i}` && m.contained === 'query')) found++;
    if ((await index.query(q, { threshold: 0.8 })).some((m) => m.id === `d${i}`)) jaccardFound++;
  }
  // A pair of Jaccard ≥ 0.3 is a candidate with probability ≥ 1 − 0.7^8 ≈ 0.94 through the 8
  // single-slot forest prefixes alone; with 80 trials, fewer than 65 hits would be a 3-sigma miss.
  assert.ok(found >= 65, `recall ${found}/${trials}`);
  assert.ok(jaccardFound <= trials / 10, `Jaccard query finds ${jaccardFound}/${trials}`);
  // The document side: a long query containing an indexed ad finds it, marked as contained.
  const host = 'preambolo di prova con parole qualsiasi '.repeat(30) + docs[3]! + ' e poi altro testo ancora '.repeat(30);
  const m = await index.query(host, { measure: 'containment', threshold: 0.95 });
  assert.ok(m.some((x) => x.id === 'd3' && x.contained === 'document' && x.similarity >= 0.95), JSON.stringify(m.slice(0, 3)));
  await assert.rejects(index.query('x', { measure: 'cosine' as 'jaccard' }), /unknown measure/);
  await index.close();
  const est = await NearDupIndex.open({ verify: 'estimate' });
  await assert.rejects(est.query('abcdefgh', { measure: 'containment' }), /verify "exact"/);
  await est.close();
});

test('POST /v1/query with measure containment; bad combinations are 400', async () => {
  const index = await NearDupIndex.open({ k: 5 });
  const a = buildApp(index, {});
  const long = all[5]!;
  await a.inject({ method: 'POST', url: '/v1/documents', payload: { id: 'long', text: long } });
  const q = long.slice(0, Math.floor(long.length / 3));
  let r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: q, measure: 'containment', threshold: 0.9 } });
  assert.equal(r.statusCode, 200);
  const [hit] = r.json().matches;
  assert.equal(hit.id, 'long');
  assert.equal(hit.contained, 'query');
  assert.ok(hit.similarity >= 0.9 && hit.estimate < 0.5);
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: q } });
  assert.deepEqual(r.json().matches, [], 'Jaccard misses the third of a document');
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: q, measure: 'containment', topK: 3 } });
  assert.equal(r.statusCode, 400);
  r = await a.inject({ method: 'POST', url: '/v1/query', payload: { text: q, measure: 'overlap' } });
  assert.equal(r.statusCode, 400);
  assert.match(r.json().message, /measure/);
  await a.close();
});
