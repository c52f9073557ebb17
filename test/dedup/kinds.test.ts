/**
 * The kinds of duplicates beyond Jaccard-LSH, through `dedup()` and the library: containment with
 * planted short-in-long copies in the Kijiji ads, exact duplicates, seed 002's sketch, the exact
 * join as candidates, and cluster policies on constructed chains.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { dedup } from '../../src/dedup/dedup.js';
import { exactDuplicates } from '../../src/dedup/exactDups.js';
import { createShingler } from '../../src/text/shingler.js';
import { bruteForcePairs, type ScoredPair } from '../../src/similarity/bruteForce.js';
import { bruteForceContainment } from '../../src/similarity/containment.js';
import { clusterWithPolicy } from '../../src/cluster/clusterPolicy.js';
import { sketchKeys } from '../../src/lsh/sketchCandidates.js';
import { makeNormalizer } from '../../src/text/normalize.js';
import { kijijiDocs } from '../helpers.js';

const key = (p: ScoredPair): string => `${p.a} ${p.b}`;
const all = kijijiDocs();

/**
 * The first 1,200 ads plus planted copies: for 60 long ads, an excerpt of 25–45% of the ad (a new
 * short document), and the excerpt of another ad embedded in new filler text 2–3 times its length.
 */
function planted(): { docs: string[]; excerpts: [number, number][] } {
  const docs = all.slice(0, 1200);
  let s = 15;
  const rnd = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const long = docs.map((d, i) => [d.length, i] as const).filter(([l]) => l > 400);
  const excerpts: [number, number][] = [];
  for (let k = 0; k < 60; k++) {
    const [len, i] = long[Math.floor(rnd() * long.length)]!;
    const part = Math.floor(len * (0.25 + 0.2 * rnd()));
    const from = Math.floor(rnd() * (len - part));
    const excerpt = docs[i]!.slice(from, from + part);
    excerpts.push([docs.length, i]);
    docs.push(excerpt);
    const filler = Array.from({ length: Math.ceil((part * (2 + rnd())) / 8) }, () => Math.floor(rnd() * 1e7).toString(36)).join(' ');
    const cut = Math.floor(rnd() * filler.length);
    docs.push(filler.slice(0, cut) + ' ' + excerpt + ' ' + filler.slice(cut));
  }
  return { docs, excerpts };
}

test('containment on Kijiji with planted short-in-long copies: exactly the brute-force pairs, directions and scores, where Jaccard-LSH misses the planted ones', () => {
  const { docs, excerpts } = planted();
  const sh = createShingler({ kind: 'char', k: 5 });
  const sets = docs.map((d) => sh.set(d));
  const t = 0.8;
  const truth = bruteForceContainment(sets, t);
  const r = dedup(docs, { threshold: t, measure: 'containment', candidates: 'auto' });
  assert.equal(r.stats.candidateMethod, 'exact');
  assert.equal(r.stats.measure, 'containment');
  // Recall 1 (and precision 1): the join is exact, so no statistical slack is needed.
  assert.deepEqual(
    r.pairs.map((p) => `${key(p)} ${p.similarity}`),
    truth.map((p) => `${key(p)} ${p.similarity}`),
  );
  // Every planted excerpt is found inside its source and inside its host, with the direction right.
  const found = new Set(r.pairs.map(key));
  for (const [e, src] of excerpts) {
    assert.ok(found.has(`${e} ${src}`), `excerpt ${e} inside ad ${src}`);
    assert.ok(found.has(`${e} ${e + 1}`), `excerpt ${e} inside host ${e + 1}`);
  }
  // The reason for the measure: Jaccard at the same threshold finds almost none of the planted pairs.
  const jac = new Set(dedup(docs, { threshold: t }).pairs.map(key));
  const plantedPairs = excerpts.flatMap(([e, src]) => [`${Math.min(e, src)} ${Math.max(e, src)}`, `${e} ${e + 1}`]);
  const jaccardHits = plantedPairs.filter((p) => jac.has(p)).length;
  assert.ok(jaccardHits < plantedPairs.length / 10, `Jaccard-LSH finds ${jaccardHits} of ${plantedPairs.length}`);
});

test('containment needs exact candidates; unknown measures and methods are rejected', () => {
  assert.throws(() => dedup(['a b c d e f'], { measure: 'containment', candidates: 'lsh' }), /containment needs exact/);
  assert.throws(() => dedup(['a b c d e f'], { measure: 'containment', candidates: 'sketch' }), /containment needs exact/);
  assert.throws(() => dedup(['a b c d e f'], { measure: 'cosine' as 'jaccard' }), /unknown measure/);
  assert.throws(() => dedup(['a b c d e f'], { candidates: 'magic' as 'lsh' }), /unknown candidate method/);
  assert.throws(() => dedup(['a b c d e f'], { candidates: 'exact', verify: 'estimate' }), /applies to LSH candidates only/);
});

for (const t of [0.5, 0.8, 0.9]) {
  test(`dedup with exact candidates at t = ${t} equals brute force on Kijiji; auto picks lsh for char shingles, exact for word shingles of the ads`, () => {
    const docs = all;
    const sh = createShingler({ kind: 'char', k: 5 });
    const truth = bruteForcePairs(docs.map((d) => sh.set(d)), t);
    const r = dedup(docs, { threshold: t, candidates: 'exact' });
    assert.equal(r.stats.candidateMethod, 'exact');
    assert.deepEqual(r.pairs.map((p) => `${key(p)} ${p.similarity}`), truth.map((p) => `${key(p)} ${p.similarity}`));
    const auto = dedup(docs, { threshold: t, candidates: 'auto' });
    assert.equal(auto.stats.candidateMethod, 'lsh', 'the ads are long (~530 characters)');
    const titles = docs.map((d) => d.slice(0, 60));
    // Char shingles keep LSH even for short texts (bench/RESULTS.md: 90-character generated
    // documents join 4.9× slower at t = 0.5); the join itself still agrees with itself there.
    assert.equal(dedup(titles, { threshold: t, candidates: 'auto' }).stats.candidateMethod, 'lsh');
    const short = dedup(titles, { threshold: t, candidates: 'auto', shingle: { kind: 'word', k: 3 } });
    assert.equal(short.stats.candidateMethod, 'exact');
    assert.deepEqual(short.pairs, dedup(titles, { threshold: t, candidates: 'exact', shingle: { kind: 'word', k: 3 } }).pairs);
    assert.equal(dedup(docs, { threshold: t, candidates: 'auto', shingle: { kind: 'word', k: 3 } }).stats.candidateMethod, 'exact', '~80 word shingles per ad');
  });
}

test('sketch keys are the per-bucket minima of hash mod n, as seed 002 describes', () => {
  const set = Uint32Array.from([3, 7, 10, 12, 21, 30]);
  const { hi, lo, present } = sketchKeys([set, new Uint32Array(0)], 4);
  // Buckets by h mod 4: 0 → {12}, 1 → {21}, 2 → {10, 30}, 3 → {3, 7}.
  assert.deepEqual([...hi.subarray(0, 4)], [0, 1, 2, 3]);
  assert.deepEqual([...lo.subarray(0, 4)], [12, 21, 10, 3]);
  assert.deepEqual([...present], [1, 0]);
  const gap = sketchKeys([Uint32Array.from([4, 8])], 4);
  assert.equal(gap.hi[1], 0xffffffff, 'an empty bucket matches nothing');
  assert.throws(() => sketchKeys([set], 0), /buckets/);
});

test('sketch candidates on Kijiji: every verified pair is a true pair, recall is high, more candidates with more buckets', () => {
  const sh = createShingler({ kind: 'char', k: 5 });
  const truth = new Set(bruteForcePairs(all.map((d) => sh.set(d)), 0.8).map(key));
  let prev = 0;
  for (const buckets of [4, 25]) {
    const r = dedup(all, { threshold: 0.8, candidates: 'sketch', buckets });
    assert.equal(r.stats.candidateMethod, 'sketch');
    assert.ok(r.pairs.every((p) => truth.has(key(p))));
    // P(candidate) ≥ 1 − (1 − 0.8)^n for a pair at 0.8: ≥ 0.998 at n = 4 (bucket minima are not
    // independent, so allow a margin).
    assert.ok(r.pairs.length / truth.size >= 0.99, `recall ${r.pairs.length}/${truth.size} with ${buckets} buckets`);
    assert.ok(r.stats.candidates > prev);
    prev = r.stats.candidates;
  }
});

test('exact duplicates: groups equal normalized texts, streamed in batches, same shapes as dedup', async () => {
  const texts = ['Hello  World', 'hello world', 'other', '', '  ', 'HELLO WORLD\n', 'other', 'else'];
  const r = await exactDuplicates([texts.slice(0, 3), texts.slice(3)]);
  assert.deepEqual(r.pairs.map(key), ['0 1', '0 5', '1 5', '2 6']);
  assert.ok(r.pairs.every((p) => p.similarity === 1));
  assert.deepEqual(r.clusters.map((c) => c.members), [[0, 1, 5], [2, 6]]);
  assert.deepEqual(r.empty, [3, 4]);
  assert.equal(r.clusterOf[5], 0);
  const none = await exactDuplicates([texts], { normalize: { preset: 'none' }, pairs: false });
  assert.deepEqual(none.clusters.map((c) => c.members), [[2, 6]]);
  assert.deepEqual(none.pairs, []);
});

test('exact duplicates on Kijiji equal grouping by the normalized text itself', async () => {
  const norm = makeNormalizer();
  const byText = new Map<string, number[]>();
  all.forEach((d, i) => {
    const t = norm(d);
    if (t) byText.set(t, [...(byText.get(t) ?? []), i]);
  });
  const expected = [...byText.values()].filter((g) => g.length > 1).sort((a, b) => a[0]! - b[0]!);
  const r = await exactDuplicates([all], { pairs: false });
  assert.deepEqual(r.clusters.map((c) => c.members), expected);
  // Every exact duplicate is a near duplicate at J = 1.
  const near = dedup(all, { threshold: 1 });
  assert.ok(r.clusters.every((c) => c.members.every((m) => near.clusterOf[m] === near.clusterOf[c.members[0]!])));
});

/** Pairs of a chain 0~1~2~…~(n−1) with similarity 0.9. */
const chain = (n: number): ScoredPair[] => Array.from({ length: n - 1 }, (_, i) => ({ a: i, b: i + 1, similarity: 0.9 }));

test('cluster policies on constructed chains: components join a chain, centre clusters keep members within t of the centre', () => {
  // a~b, b~c, not a~c: components put all three together; so do centre clusters, around b.
  const three = clusterWithPolicy(3, chain(3), { mode: 'centre', representative: 'central' });
  assert.deepEqual(three.clusters, [{ id: 0, members: [0, 1, 2], representative: 1 }]);
  // a chain of five: components give one cluster whose ends are unrelated; centre gives {0,1,2} around 1, then {3,4}.
  const comp = clusterWithPolicy(5, chain(5));
  assert.deepEqual(comp.clusters.map((c) => c.members), [[0, 1, 2, 3, 4]]);
  const centre = clusterWithPolicy(5, chain(5), { mode: 'centre', representative: 'central' });
  assert.deepEqual(centre.clusters, [
    { id: 0, members: [0, 1, 2], representative: 1 },
    { id: 3, members: [3, 4], representative: 3 },
  ]);
  assert.deepEqual([...centre.clusterOf], [0, 0, 0, 3, 3]);
  // Every member of a centre cluster is a pair with its centre.
  const pairSet = new Set(chain(5).map(key));
  for (const c of centre.clusters)
    for (const m of c.members) if (m !== c.representative) assert.ok(pairSet.has(`${Math.min(m, c.representative!)} ${Math.max(m, c.representative!)}`));
});

test('representative policies: first, longest, most central', () => {
  const pairs: ScoredPair[] = [
    { a: 0, b: 1, similarity: 0.8 },
    { a: 1, b: 2, similarity: 0.95 },
    { a: 0, b: 2, similarity: 0.85 },
    { a: 2, b: 3, similarity: 0.9 },
  ];
  const len = [10, 50, 20, 50];
  const rep = (representative: 'first' | 'longest' | 'central') =>
    clusterWithPolicy(4, pairs, { representative, lengthOf: (i) => len[i]! }).clusters[0]!.representative;
  assert.equal(rep('first'), 0);
  assert.equal(rep('longest'), 1, 'the longest; ties go to the lower index');
  assert.equal(rep('central'), 2, 'highest sum of similarities: 0.85 + 0.95 + 0.9');
  assert.throws(() => clusterWithPolicy(4, pairs, { representative: 'longest' }), /lengths/);
  assert.throws(() => clusterWithPolicy(4, pairs, { mode: 'stars' as 'centre' }), /unknown cluster mode/);
});

test('dedup with a centre policy: on Kijiji every member is a verified near duplicate of its centre', () => {
  const r = dedup(all, { threshold: 0.8, clusters: 'centre', representative: 'central', removal: 'cluster' });
  const comp = dedup(all, { threshold: 0.8 });
  const pairSet = new Set(r.pairs.map(key));
  assert.equal(r.pairs.length, comp.pairs.length, 'the pairs do not depend on the cluster policy');
  for (const c of r.clusters) {
    const centre = c.representative!;
    for (const m of c.members) if (m !== centre) assert.ok(pairSet.has(`${Math.min(m, centre)} ${Math.max(m, centre)}`));
  }
  assert.ok(r.clusters.length >= comp.clusters.length);
  const longest = dedup(all, { threshold: 0.8, representative: 'longest', pairs: false });
  assert.deepEqual(longest.pairs, []);
  for (const c of longest.clusters) assert.ok(c.members.every((m) => all[m]!.length <= all[c.representative!]!.length));
});

test('the exact-mode text hash: one pass over ASCII equals hashing the normalized text; equal iff the normalized texts are equal', async () => {
  const { createTextHasher } = await import('../../src/dedup/textHash.js');
  const fc = (await import('fast-check')).default;
  const norm = makeNormalizer();
  const h = createTextHasher();
  const key = (t: string): string => {
    const out = new Uint32Array(2);
    return h(t, out) ? `${out[0]} ${out[1]}` : 'empty';
  };
  const chars = fc.constantFrom(
    'a',
    'B',
    'z',
    ' ',
    '\t',
    '\n',
    '\r',
    '\v',
    'é',
    'É',
    'ﬁ',
    '\u00a0',
    '\u2003',
    'x',
    'Q',
    'Þ',
    '×',
    'ß',
    'ÿ',
    'À',
    '\u0301',
    '\u00b2',
  );
  const text = fc.array(chars, { maxLength: 12 }).map((a) => a.join(''));
  fc.assert(
    fc.property(text, text, (x, y) => {
      assert.equal(key(x), key(norm(x)));
      assert.equal(key(x) === 'empty', norm(x) === '');
      assert.equal(key(x) === key(y), norm(x) === norm(y), `${JSON.stringify(x)} vs ${JSON.stringify(y)}`);
    }),
    { numRuns: 3000, seed: 15 },
  );
});

test('exact candidates collapse identical documents: 3,000 copies cost one set, pairs and clusters as without collapsing', () => {
  const base = all.slice(0, 40);
  const docs = [...base, ...Array.from({ length: 3000 }, () => all[7]!), ...base.slice(0, 5)];
  const clustersOnly = dedup(docs, { candidates: 'exact', pairs: false, maxPairs: 100_000 });
  assert.deepEqual(clustersOnly.pairs, []);
  assert.equal(clustersOnly.stats.copies >= 3004, true);
  const big = clustersOnly.clusters.find((c) => c.members.includes(7))!;
  assert.ok(big.members.length >= 3001);
  // With pairs, on a small corpus: the same as the brute force over every document.
  const small = [...base, all[7]!, all[7]!, ...base.slice(0, 3)];
  const sh = createShingler({ kind: 'char', k: 5 });
  for (const measure of ['jaccard', 'containment'] as const) {
    const truth = measure === 'jaccard' ? bruteForcePairs(small.map((d) => sh.set(d)), 0.8) : bruteForceContainment(small.map((d) => sh.set(d)), 0.8);
    const got = dedup(small, { threshold: 0.8, candidates: 'exact', measure });
    assert.deepEqual(got.pairs.map((p) => `${key(p)} ${p.similarity}`), truth.map((p) => `${key(p)} ${p.similarity}`), measure);
    assert.ok(got.stats.copies > 0);
  }
});
