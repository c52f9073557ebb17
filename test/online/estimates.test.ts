/**
 * The estimate each match carries (its signature against the query's) when many matches are copies
 * of one text: `Scorer.finish` signs each distinct stored text once per call (src/online/scoring.ts).
 * Oracle: the same query against an index holding that match's text alone, where nothing is shared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NearDupIndex, type NearDupIndexOptions } from '../../src/index.js';

const WORDS = 'red blue green bike sofa lamp desk chair table phone case cover new used cheap mint boxed local pickup only'.split(' ');

/** A text of `n` words drawn from `seed`, deterministic. */
function text(seed: number, n = 40): string {
  let x = seed * 2654435761;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x ^ (x >>> 15), 2246822519) + i) >>> 0;
    out.push(`${WORDS[x % WORDS.length]}${x % 7}`);
  }
  return out.join(' ');
}

/** `t` with its words at positions `at` replaced. */
function edit(t: string, at: number[]): string {
  const w = t.split(' ');
  for (const i of at) w[i] = `edited${i}`;
  return w.join(' ');
}

/** The estimate of `query` against `doc` in an index holding `doc` alone (threshold 0: always a match). */
async function aloneEstimate(options: NearDupIndexOptions, doc: string, query: string): Promise<number> {
  const one = await NearDupIndex.open({ ...options, threshold: 0.05 });
  await one.add('x', doc);
  const [m] = await one.query(query, { threshold: 0.05 });
  await one.close();
  assert.ok(m, 'the lone document matches');
  return m.estimate;
}

for (const setSource of ['text', 'record'] as const) {
  test(`estimates of copies and near copies, as each alone gives them (sets from the ${setSource})`, async () => {
    const options: NearDupIndexOptions = { shingle: { k: 3 }, threshold: 0.3, ...(setSource === 'text' ? { setSource: 'text' } : {}) };
    const base = text(1);
    const docs = new Map<string, string>();
    for (let c = 0; c < 5; c++) docs.set(`copy${c}`, base);
    for (let v = 0; v < 3; v++) {
      const near = edit(base, [3 + v, 11 + 2 * v, 20 + v]);
      for (let c = 0; c < 3; c++) docs.set(`near${v}-${c}`, near);
    }
    for (let u = 0; u < 5; u++) docs.set(`other${u}`, text(100 + u));
    const idx = await NearDupIndex.open(options);
    for (const [id, t] of docs) await idx.add(id, t, { text: t });
    const query = edit(base, [7, 30]);
    const matches = await idx.query(query);
    assert.ok(matches.length >= 14, `${matches.length} matches`);
    const want = new Map<string, number>();
    for (const t of new Set(matches.map((m) => docs.get(m.id)!))) want.set(t, await aloneEstimate(options, t, query));
    for (const m of matches) assert.equal(m.estimate, want.get(docs.get(m.id)!), m.id);
    // The same from a stored record (no query text), and through topK's groups of copies.
    const dups = (await idx.duplicatesOf('near0-0'))!;
    const near0 = docs.get('near0-0')!;
    for (const m of dups) assert.equal(m.estimate, await aloneEstimate(options, docs.get(m.id)!, near0), `duplicatesOf: ${m.id}`);
    const top = await idx.topK(query, 3);
    for (const m of top) {
      assert.equal(m.estimate, want.get(docs.get(m.id)!), `topK: ${m.id}`);
      for (const c of m.copies) assert.equal(c.estimate, m.estimate, `topK copy ${c.id}`);
    }
    await idx.close();
  });
}
