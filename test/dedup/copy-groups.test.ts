/**
 * Identical documents collapsed before LSH, pair-free clustering and the maxPairs limit: the results
 * must equal those of the plain pipeline (every document through LSH, every candidate verified).
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dedup, type DedupOptions, type DedupResult } from '../../src/dedup/dedup.js';
import { dedupStream } from '../../src/dedup/streamDedup.js';
import { decideRemoval } from '../../src/dedup/verifiedGraph.js';
import { clusterPairs } from '../../src/cluster/clusters.js';
import { CopyFinder, HashIndex } from '../../src/dedup/copyGroups.js';
import { TooManyPairsError } from '../../src/lsh/tooManyPairs.js';
import { chooseBands } from '../../src/lsh/params.js';
import { docMajorKeys, emptyCandidateStats, lshCandidates } from '../../src/lsh/candidates.js';
import { clusterBucketwise } from '../../src/dedup/bucketwise.js';
import { createTextSigner } from '../../src/sketch/textSigner.js';
import { SignatureMatrix } from '../../src/sketch/signatureMatrix.js';
import { jaccard } from '../../src/similarity/jaccard.js';
import type { ScoredPair } from '../../src/similarity/bruteForce.js';

/** The plain pipeline, written from its definition: no grouping, no limits. */
function reference(texts: string[], options: DedupOptions) {
  const threshold = options.threshold ?? 0.8;
  const verify = options.verify ?? 'exact';
  const signer = createTextSigner({ shingle: options.shingle, minhash: options.minhash });
  const bands = chooseBands(threshold, signer.numPerm, options.lsh);
  const sigs = new SignatureMatrix(signer.numPerm, texts.length);
  const sets = texts.map((t) => signer.set(t));
  const empty: number[] = [];
  texts.forEach((t, i) => {
    sigs.push();
    sigs.present[i] = signer.signInto(t, sigs.row(i)) ? 1 : 0;
    if (!sigs.present[i]) empty.push(i);
  });
  const { pairs: cand } = lshCandidates(sigs, bands.bands, bands.rows);
  const pairs: ScoredPair[] = [];
  for (let p = 0; p < cand.size; p++) {
    const a = cand.a[p]!;
    const b = cand.b[p]!;
    const s = verify === 'exact' ? jaccard(sets[a]!, sets[b]!) : sigs.estimate(a, b);
    if (verify === 'none' || s >= threshold) pairs.push({ a, b, similarity: s });
  }
  pairs.sort((x, y) => x.a - y.a || x.b - y.b);
  return { pairs, candidates: cand.size, empty, ...clusterPairs(texts.length, pairs) };
}

function assertSameAsReference(r: DedupResult, ref: ReturnType<typeof reference>, withPairs: boolean): void {
  assert.deepEqual(r.clusters, ref.clusters);
  assert.deepEqual([...r.clusterOf], [...ref.clusterOf]);
  assert.deepEqual(r.empty, ref.empty);
  assert.equal(r.stats.pairs, ref.pairs.length);
  assert.equal(r.stats.candidates, ref.candidates);
  if (withPairs) assert.deepEqual(r.pairs, ref.pairs);
  else assert.deepEqual(r.pairs, []);
}

const words = ['flat', 'rome', 'euro', 'two', 'rooms', 'bright', 'near', 'metro', 'kitchen', 'balcony', 'quiet', 'street'];
const base = Array.from({ length: 40 }, (_, i) => words[(i * 7) % words.length]).join(' ');
/** Texts drawn from a small pool: exact copies, copies that differ only in case and spacing (same set), near copies, unrelated texts, empty ones. */
const corpusArb = fc.array(
  fc.oneof(
    fc.constant(base),
    fc.constant(base.toUpperCase().replace(/ /g, '  ')),
    fc.integer({ min: 0, max: 5 }).map((k) => `${base} extra ${words[k]}`),
    fc.array(fc.constantFrom(...words), { minLength: 3, maxLength: 30 }).map((w) => w.join(' ')),
    fc.constantFrom('', '  ', '!!'),
  ),
  { minLength: 0, maxLength: 60 },
);

test('property: dedup with identical documents collapsed equals the plain pipeline (exact, estimate, none; pairs on and off)', () => {
  fc.assert(
    fc.property(
      corpusArb,
      fc.constantFrom('exact', 'estimate', 'none') as fc.Arbitrary<'exact' | 'estimate' | 'none'>,
      fc.boolean(),
      (texts, verify, withPairs) => {
        const options: DedupOptions = { threshold: 0.7, verify, shingle: { k: 3 } };
        const ref = reference(texts, options);
        const r = dedup(texts, { ...options, pairs: withPairs });
        assertSameAsReference(r, ref, withPairs);
        assert.equal(r.stats.counts, 'all');
      },
    ),
    { numRuns: 150, seed: 20261122 },
  );
});

test('property: bucket-wise clustering (pairs off, more candidates than maxPairs) gives the same clusters', () => {
  let bucketwise = 0;
  fc.assert(
    fc.property(corpusArb, fc.constantFrom('exact', 'estimate') as fc.Arbitrary<'exact' | 'estimate'>, (texts, verify) => {
      const options: DedupOptions = { threshold: 0.7, verify, shingle: { k: 3 } };
      const ref = reference(texts, options);
      const r = dedup(texts, { ...options, pairs: false, maxPairs: 0, removal: 'cluster' });
      assert.deepEqual(r.clusters, ref.clusters);
      assert.deepEqual([...r.clusterOf], [...ref.clusterOf]);
      assert.deepEqual(r.pairs, []);
      if (r.stats.counts === 'verified') {
        bucketwise++;
        // Each kept pair joined two clusters, so there are fewer joins than documents in clusters.
        const inClusters = ref.clusters.reduce((s, c) => s + c.members.length, 0);
        assert.ok(r.stats.pairs <= Math.max(0, inClusters - ref.clusters.length));
        // A pair below the threshold is verified again in every band whose bucket it shares.
        assert.ok(r.stats.candidates <= r.bands.bands * ref.candidates);
      }
    }),
    { numRuns: 100, seed: 7 },
  );
  assert.ok(bucketwise > 30, `bucket-wise runs: ${bucketwise}`);
});

test('property: dedupStream (which folds identical texts) equals dedup (which folds identical sets), pairs on and off, with and without workers', async () => {
  await fc.assert(
    fc.asyncProperty(corpusArb, fc.boolean(), fc.constantFrom(0, 2), async (texts, withPairs, workers) => {
      const options: DedupOptions = { threshold: 0.7, shingle: { k: 3 }, pairs: withPairs };
      const want = dedup(texts, options);
      const got = await dedupStream(() => [texts], { ...options, workers });
      // What a deduplicated copy drops is decided alike.
      assert.deepEqual([...decideRemoval(got, 'verified', {}).keptBy], [...want.removal!.keptBy]);
      assert.deepEqual(got.pairs, want.pairs);
      assert.deepEqual(got.clusters, want.clusters);
      assert.deepEqual([...got.clusterOf], [...want.clusterOf]);
      assert.deepEqual(got.empty, want.empty);
      assert.equal(got.stats.pairs, want.stats.pairs);
      assert.equal(got.stats.candidates, want.stats.candidates);
    }),
    { numRuns: 80, seed: 11 },
  );
});

test('20,000 copies of one document streamed: folded before LSH as in memory, the same clusters and removal', async () => {
  const texts = [...Array.from({ length: 20_000 }, () => base), 'something else entirely, nothing like the rest'];
  for (const workers of [0, 2]) {
    const got = await dedupStream(() => [texts], { pairs: false, workers });
    const want = dedup(texts, { pairs: false });
    assert.deepEqual(got.clusters, want.clusters);
    assert.equal(got.stats.copies, 19_999);
    assert.equal(got.stats.candidates, want.stats.candidates);
    assert.equal(decideRemoval(got, 'verified', {}).dropped, 19_999);
  }
});

test('20,000 copies of one document: clusters without pairs at once; pairs past maxPairs are a TooManyPairsError', () => {
  // Unrelated texts: 30 words each from a vocabulary of 2,000, by a fixed-seed generator.
  let x = 12345;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 2000;
  const other = Array.from({ length: 200 }, () => Array.from({ length: 30 }, () => `w${next()}`).join(' '));
  const texts = [...Array.from({ length: 20_000 }, () => base), ...other];
  const r = dedup(texts, { pairs: false });
  assert.equal(r.stats.copies, 19_999);
  assert.equal(r.stats.pairs, (20_000 * 19_999) / 2, 'pairs are counted, not listed');
  assert.deepEqual(r.pairs, []);
  assert.equal(r.clusters[0]!.members.length, 20_000);
  assert.ok(r.stats.buckets.largestBucket < 100, `only distinct documents reach LSH (largest bucket ${r.stats.buckets.largestBucket})`);
  assert.throws(
    () => dedup(texts),
    (e: unknown) => e instanceof TooManyPairsError && e.what === 'pairs' && e.count === 199_990_000 && e.limit === 50_000_000 && e.largestBucket === 20_000,
  );
  const small = dedup(texts.slice(0, 100), { maxPairs: 4950 });
  assert.equal(small.pairs.length, 4950);
  assert.throws(() => dedup(texts.slice(0, 100), { maxPairs: 4949 }), TooManyPairsError);
});

test('near copies (distinct sets) in one huge bucket: candidate limit, then bucket-wise clustering when only clusters are asked for', async () => {
  const texts = Array.from({ length: 3000 }, (_, i) => `${base} reference ${i}`);
  assert.throws(
    () => dedup(texts, { maxPairs: 100_000 }),
    (e: unknown) => e instanceof TooManyPairsError && e.what === 'candidates' && e.largestBucket > 1000,
  );
  const r = dedup(texts, { maxPairs: 100_000, pairs: false, removal: 'cluster' });
  assert.equal(r.stats.counts, 'verified');
  assert.deepEqual(r.clusters.map((c) => c.members.length), [3000]);
  // One verification per document joins it; pairs already in one cluster are skipped, not verified.
  assert.ok(r.stats.candidates < 10_000, `verified ${r.stats.candidates}`);
  const full = dedup(texts, { pairs: false });
  assert.equal(full.stats.counts, 'all');
  assert.deepEqual(r.clusters, full.clusters);
  // The streaming pipeline cannot cluster bucket by bucket: it refuses at once.
  await assert.rejects(dedupStream(() => [texts], { maxPairs: 100_000, pairs: false, workers: 0 }), TooManyPairsError);
});

test('bucket-wise clustering: interleaved clusters sharing large buckets are told apart and each joined whole', () => {
  // Five clusters of 30 word-1-shingle documents: a shared 60-word body, a 12-word tail per cluster
  // and one word per document. Across clusters J ≈ 0.8 < 0.9, so buckets mix clusters.
  let x = 99;
  const next = (m: number) => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) % m;
  const shared = Array.from({ length: 60 }, () => `s${next(5000)}`).join(' ');
  const tails = Array.from({ length: 5 }, () => Array.from({ length: 12 }, () => `t${next(5000)}`).join(' '));
  const texts = Array.from({ length: 150 }, (_, i) => `${shared} ${tails[i % 5]} n${next(100000)}`);
  const options: DedupOptions = { threshold: 0.9, shingle: { kind: 'word', k: 1 } };
  const ref = reference(texts, options);
  assert.deepEqual(ref.clusters.map((c) => c.members.length), [30, 30, 30, 30, 30]);
  const r = dedup(texts, { ...options, pairs: false, maxPairs: 0, removal: 'cluster' });
  assert.equal(r.stats.counts, 'verified');
  assert.ok(r.stats.buckets.largestBucket > 20, `largest bucket ${r.stats.buckets.largestBucket}`);
  assert.deepEqual(r.clusters, ref.clusters);
  assert.ok(r.stats.candidates < ref.candidates, `verified ${r.stats.candidates} of ${ref.candidates} candidates`);
});

test('clusterBucketwise: one bucket whose clusters never sit next to each other; pairs already joined are not verified', () => {
  // 40 documents in one bucket in band 0 (alone in band 1); near duplicates iff same residue mod 4.
  const n = 40;
  const bands = 2;
  const hi = new Uint32Array(n * bands);
  const lo = new Uint32Array(n * bands);
  for (let d = 0; d < n; d++) {
    hi[d * bands] = 7;
    lo[d * bands] = 9;
    hi[d * bands + 1] = d + 100;
  }
  const asked: string[] = [];
  const kept: [number, number][] = [];
  const stats = emptyCandidateStats();
  const verified = clusterBucketwise(docMajorKeys({ hi, lo, present: new Uint8Array(n).fill(1), n, bands }), stats, {
    score: (a, b) => (asked.push(`${a},${b}`), a % 4 === b % 4 ? 1 : -1),
    kept: (a, b) => kept.push([a, b]),
  });
  assert.equal(verified, asked.length);
  assert.equal(new Set(asked).size, asked.length, 'no pair verified twice');
  assert.equal(kept.length, n - 4, 'one join per document beyond the first of its cluster');
  const { clusters } = clusterPairs(n, kept.map(([a, b]) => ({ a, b })));
  assert.deepEqual(clusters.map((c) => c.members), [0, 1, 2, 3].map((r) => Array.from({ length: n / 4 }, (_, k) => r + 4 * k)));
  // Every pair across residues is verified once (they never join); within residues only the joins.
  assert.equal(verified, (n * (n - 1)) / 2 - 4 * ((10 * 9) / 2) + (n - 4));
  assert.equal(stats.largestBucket, n);
});

test('documents with equal signatures but different sets are not copies under exact verification', () => {
  // A long shared text (~3,000 distinct words) with one distinct word at the end: that word rarely
  // wins a slot, so many signatures coincide while the sets (word 1-shingles) never do.
  let x = 4242;
  const long = Array.from({ length: 3000 }, () => `w${(x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 50000}`).join(' ');
  const texts = Array.from({ length: 150 }, (_, i) => `${long} ref ${i}`);
  const signer = createTextSigner({ shingle: { kind: 'word', k: 1 } });
  const sigs = texts.map((t) => {
    const row = new Uint32Array(signer.numPerm);
    signer.signInto(t, row);
    return row.join(',');
  });
  assert.ok(new Set(sigs).size < texts.length / 2, `signatures should coincide (${new Set(sigs).size} distinct)`);
  const options: DedupOptions = { threshold: 0.7, shingle: { kind: 'word', k: 1 } };
  const r = dedup(texts, options);
  assert.equal(r.stats.copies, 0, 'no two documents have the same set');
  assert.deepEqual(r.pairs, reference(texts, options).pairs);
  assert.ok(r.pairs.some((p) => p.similarity < 1));
  // Estimate verification: equal signatures are equal estimates, so those documents are one group.
  const est = dedup(texts, { ...options, verify: 'estimate' });
  assert.equal(est.stats.copies, texts.length - new Set(sigs).size);
  assert.deepEqual(est.pairs, reference(texts, { ...options, verify: 'estimate' }).pairs);
});

test('options: maxPairs must be a number ≥ 0', () => {
  assert.throws(() => dedup(['a'], { maxPairs: -1 }), /maxPairs/);
  assert.throws(() => dedup(['a'], { maxPairs: Number.NaN }), /maxPairs/);
});

test('CopyFinder and HashIndex', () => {
  const g = new CopyFinder(2);
  for (const x of [0, 1, 0, 2, 1, 0, 2])
    if (x === g.groups) g.startGroup();
    else g.join(x);
  const r = g.result();
  assert.equal(r.groups, 3);
  assert.deepEqual([...r.start], [0, 3, 5, 7]);
  assert.deepEqual([...r.members], [0, 2, 5, 1, 4, 3, 6]);
  // Equal hashes with different content stay apart; the table grows past its first size.
  const f = new CopyFinder(2);
  const index = new HashIndex(2);
  const repOf: number[] = [];
  const content = Array.from({ length: 500 }, (_, i) => i % 97);
  const groups = content.map((c) => {
    const g = index.find(c % 3, (x) => repOf[x] === c);
    if (g !== -1) return f.join(g);
    const n = f.startGroup();
    repOf[n] = c;
    index.insert(c % 3, n);
    return n;
  });
  assert.equal(f.groups, 97);
  assert.equal(index.find(1, () => false), -1);
  for (let i = 0; i < content.length; i++) assert.equal(groups[i], groups[content.indexOf(content[i]!)]);
});
