import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, createShingler, jaccard, bruteForcePairs } from '../../src/index.js';
import { kijijiTexts } from '../helpers/kijiji.js';

const texts = kijijiTexts();
const KIJIJI = { shingle: { k: 10, normalize: { preset: 'seed000' as const } }, threshold: 0.8 };

test('add reports every brute-force pair of the Kijiji ads once, with exact Jaccard', async () => {
  const idx = await NearDupIndex.open(KIJIJI);
  const sh = createShingler(KIJIJI.shingle);
  const sets = texts.map((t) => sh.set(t));
  let pairs = 0;
  for (let i = 0; i < texts.length; i++) {
    const m = await idx.add(String(i), texts[i]!);
    for (const x of m) {
      const j = Number(x.id);
      assert.ok(j < i);
      assert.equal(x.similarity, jaccard(sets[i]!, sets[j]!));
      assert.ok(x.similarity >= 0.8);
      assert.ok(x.estimate >= 0 && x.estimate <= 1);
    }
    for (let k = 1; k < m.length; k++) assert.ok(m[k - 1]!.similarity >= m[k]!.similarity);
    pairs += m.length;
  }
  // The brute-force ground truth (HELPERS.md): 10,360 pairs.
  assert.equal(pairs, 10360);
  assert.equal(await idx.size(), texts.length);
  await idx.close();
});

test('query does not index; get, remove, replace, empty documents', async () => {
  const idx = await NearDupIndex.open({ k: 5 });
  const a = 'the quick brown fox jumps over the lazy dog near the river bank';
  const b = 'the quick brown fox jumps over the lazy dog near the river bank!';
  assert.deepEqual(await idx.add('a', a, { n: 1 }), []);
  const q = await idx.query(b);
  assert.equal(q.length, 1);
  assert.equal(q[0]!.id, 'a');
  assert.deepEqual(q[0]!.meta, { n: 1 });
  assert.equal(await idx.size(), 1);
  assert.deepEqual(await idx.query(b, { threshold: 1 }), []);
  assert.equal((await idx.add('b', b))[0]!.id, 'a');
  const got = await idx.get('a');
  assert.deepEqual(got!.meta, { n: 1 });
  assert.equal(got!.signature!.length, 128);
  assert.equal(await idx.get('zzz'), null);
  // Replacing "a" with an unrelated text: its old version disappears from lookups.
  assert.deepEqual(await idx.add('a', 'completely different words about cooking pasta with tomatoes'), []);
  assert.deepEqual(await idx.query(b, { threshold: 0.99 }), [{ id: 'b', similarity: 1, estimate: 1 }]);
  assert.equal((await idx.query(b)).length, 1);
  assert.equal(await idx.remove('b'), true);
  assert.equal(await idx.remove('b'), false);
  assert.deepEqual(await idx.query(b), []);
  assert.deepEqual(await idx.add('empty', ''), []);
  assert.deepEqual(await idx.add('empty2', ''), []);
  assert.equal(await idx.size(), 3);
  assert.equal(await idx.remove('empty'), true);
  await idx.close();
  await assert.rejects(() => idx.query(a), /closed/);
});

test('addMany equals adding one by one, including replacements inside the batch', async () => {
  const docs = texts.slice(0, 400).map((text, i) => ({ id: `d${i % 350}`, text, meta: { i } }));
  const seq = await NearDupIndex.open(KIJIJI);
  const want = [];
  for (const d of docs) want.push(await seq.add(d.id, d.text, d.meta));
  const bat = await NearDupIndex.open(KIJIJI);
  const got = [...(await bat.addMany(docs.slice(0, 350))), ...(await bat.addMany(docs.slice(350)))];
  assert.deepEqual(got, want);
  assert.equal(await bat.size(), 350);
  await assert.rejects(() => bat.addMany([{ id: 'x', text: 'a' }, { id: 'x', text: 'b' }]), /duplicate id "x" in batch \(items 0 and 1\)/);
});

test('topK ranks distinct texts by exact similarity and finds the true top 5 (similarity >= 0.2), also below the threshold', async () => {
  const idx = await NearDupIndex.open(KIJIJI);
  const n = 1000;
  await idx.addMany(texts.slice(0, n).map((text, i) => ({ id: String(i), text })));
  const sh = createShingler(KIJIJI.shingle);
  const sets = texts.slice(0, n).map((t) => sh.set(t));
  // Each set's key once, not once per query: joining 1,000 sets for each of 200 queries was most of this test's ~40 s.
  const keys = sets.map((s) => s.join(','));
  let hit = 0;
  let total = 0;
  let below = 0;
  for (let q = 1000; q < 1200; q++) {
    const qs = sh.set(texts[q]!);
    // Copies (the same fingerprint set) are one text: topK lists them under one hit.
    const truth = [...new Map(sets.map((s, i) => [keys[i]!, jaccard(qs, s)])).values()].sort((a, b) => b - a).slice(0, 5);
    const top = await idx.topK(texts[q]!, 5);
    for (let k = 1; k < top.length; k++) assert.ok(top[k - 1]!.similarity >= top[k]!.similarity);
    for (const m of top) for (const x of [m, ...m.copies]) assert.equal(x.similarity, jaccard(qs, sets[Number(x.id)]!));
    // Value recall: rank r is right when it is as similar as the true r-th (ties are interchangeable).
    truth.forEach((s, r) => {
      if (s < 0.2) return;
      total++;
      if (top[r] && top[r]!.similarity >= s) hit++;
    });
    below += top.filter((m) => m.similarity < 0.8).length;
  }
  const recall = hit / total;
  assert.ok(total >= 100 && recall >= 0.9, `topK recall@5 ${recall} over ${total}`);
  assert.ok(below > 0, 'topK returns documents below the threshold');
  const noForest = await NearDupIndex.open({ forest: false });
  await assert.rejects(() => noForest.topK('x', 3), /forest/);
});

test('verify=estimate keeps signatures only and scores by the estimate', async () => {
  const idx = await NearDupIndex.open({ ...KIJIJI, verify: 'estimate' });
  const docs = texts.slice(0, 300);
  const found = await idx.addMany(docs.map((text, i) => ({ id: String(i), text })));
  for (const m of found.flat()) {
    assert.equal(m.similarity, m.estimate);
    assert.ok(m.similarity >= 0.8);
  }
  const exact = bruteForcePairs(docs.map((t) => createShingler(KIJIJI.shingle).set(t)), 0.8);
  assert.ok(Math.abs(found.flat().length - exact.length) <= exact.length * 0.1 + 5, `${found.flat().length} vs ${exact.length}`);
  const got = await idx.get('0');
  assert.equal(got!.shingles, undefined);
  assert.equal(got!.signature!.length, 128);
});

test('snapshots round-trip; reopening with contradicting parameters fails clearly', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-snap-'));
  try {
    const idx = await NearDupIndex.open(KIJIJI);
    await idx.addMany(texts.slice(0, 200).map((text, i) => ({ id: String(i), text, meta: { i } })));
    const file = path.join(dir, 'index.ndix');
    assert.equal(await idx.save(file), 200);
    const back = await NearDupIndex.load(file);
    assert.deepEqual(back.manifest, idx.manifest);
    assert.equal(await back.size(), 200);
    for (let i = 150; i < 260; i++) assert.deepEqual(await back.query(texts[i]!), await idx.query(texts[i]!));
    assert.deepEqual(await back.get('7'), await idx.get('7'));
    await assert.rejects(() => NearDupIndex.load(file, { numPerm: 64 }), /numPerm|minhash|differ/);
    const db = path.join(dir, 'x.db');
    const s = await NearDupIndex.open({ ...KIJIJI, store: `sqlite:${db}` });
    await s.close();
    await assert.rejects(() => NearDupIndex.open({ store: `sqlite:${db}`, k: 5 }), /different parameters \(shingle: stored/);
    const again = await NearDupIndex.open({ store: `sqlite:${db}` });
    assert.equal(again.manifest.shingle.k, 10);
    await again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bad options and inputs are clear errors', async () => {
  await assert.rejects(() => NearDupIndex.open({ threshold: 0 }), /threshold must be in \(0, 1\]/);
  await assert.rejects(() => NearDupIndex.open({ verify: 'none' as never }), /verify must be exact or estimate/);
  await assert.rejects(() => NearDupIndex.open({ store: 'mongo://x' }), /unknown store "mongo:\/\/x"/);
  await assert.rejects(() => NearDupIndex.open({ forest: { trees: 100, depths: [4] } }), /trees·depth ≤ numPerm/);
  const idx = await NearDupIndex.open();
  await assert.rejects(() => idx.add('', 'x'), /non-empty string/);
  await assert.rejects(() => idx.topK('x', 0), /positive integer/);
});

test('concurrent adds are group-committed but answer as if sequential', async () => {
  const idx = await NearDupIndex.open({ k: 5 });
  const a = 'the quick brown fox jumps over the lazy dog near the river bank';
  const b = 'the quick brown fox jumps over the lazy dog near the river bank!';
  const [r1, r2, r3, r4] = await Promise.all([idx.add('a', a), idx.add('b', b), idx.add('a', b), idx.add('c', 'unrelated text about cooking pasta')]);
  assert.deepEqual(r1, []);
  assert.deepEqual(r2.map((m) => m.id), ['a']);
  // "a" replaced by b's text: its old version is not reported, b is (similarity 1).
  assert.deepEqual(r3.map((m) => [m.id, m.similarity]), [['b', 1]]);
  assert.deepEqual(r4, []);
  assert.equal(await idx.size(), 3);
  await assert.rejects(() => idx.add('', 'x'), /non-empty/);
});
