/**
 * The run's recall estimate (#34 item 5) against brute force, at fixed seeds: on generated corpora
 * with planted copies and on the Kijiji ads, under bandings weak enough that recall is visibly
 * below 1. The criterion, per (corpus, banding), over 10 MinHash seeds:
 * - the estimate lies within 2 standard errors of the measured recall (LSH pairs / exact-join pairs
 *   at the threshold) in at least 9 of the 10 seeds;
 * - the standard error is not wildly conservative: the root mean square of the 10 errors in
 *   standard errors is at least 0.35 (a standard error at most ~3 times the observed spread).
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { dedup } from '../../src/dedup/dedup.js';
import { estimateRecall, RecallAccumulator } from '../../src/lsh/recallEstimate.js';
import { candidateProbability } from '../../src/lsh/params.js';
import fs from 'node:fs';
import path from 'node:path';
import { jsonl, plantedDocs, writeShards } from '../helpers/shards.js';
import { neardup, tmpDir } from '../cliUtil.js';
import { kijijiTexts } from '../helpers/kijiji.js';

const SEEDS = 10;
/** Exact-join pair counts by corpus and threshold (the Kijiji ads are the same corpus for every seed). */
const truths = new Map<string[], Map<number, number>>();

/** Runs LSH at (bands, rows) for each seed against the exact join's pair count; checks the criterion above. */
function check(name: string, corpus: (seed: number) => string[], threshold: number, bands: number, rows: number): void {
  const zs: number[] = [];
  const lines: string[] = [];
  let measuredSum = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const texts = corpus(seed);
    const known = truths.get(texts) ?? new Map<number, number>();
    truths.set(texts, known);
    const truth = known.get(threshold) ?? dedup(texts, { threshold, candidates: 'exact' }).stats.pairs;
    known.set(threshold, truth);
    const run = dedup(texts, { threshold, lsh: { bands, rows }, minhash: { seed } });
    const e = run.stats.recall;
    assert.ok(e, 'an LSH run verified exactly has a recall estimate');
    assert.equal(e.found, run.stats.pairs);
    const measured = run.stats.pairs / truth;
    measuredSum += measured;
    const z = (e.recall - measured) / e.stdError;
    zs.push(z);
    lines.push(
      `seed ${seed}: ${run.stats.pairs}/${truth} = ${measured.toFixed(4)}, estimate ${e.recall.toFixed(4)} ± ${e.stdError.toFixed(4)}, z ${z.toFixed(2)}`,
    );
  }
  const report = `${name} at t=${threshold}, ${bands}×${rows}:\n${lines.join('\n')}`;
  assert.ok(measuredSum / SEEDS < 0.995, `the banding must miss pairs for the test to mean anything\n${report}`);
  const within = zs.filter((z) => Math.abs(z) <= 2).length;
  const rms = Math.sqrt(zs.reduce((a, z) => a + z * z, 0) / zs.length);
  assert.ok(within >= 9, `only ${within} of ${SEEDS} seeds within 2 SE\n${report}`);
  assert.ok(rms >= 0.35, `the SE is far too conservative (RMS z ${rms.toFixed(2)})\n${report}`);
}

const planted = (seed: number): string[] => plantedDocs(3000, 0.4, seed).map((d) => d.text);
let ads: string[] | undefined;
const kijiji = (): string[] => (ads ??= kijijiTexts());

test('planted copies: within 2 SE of the measured recall in ≥ 9 of 10 seeds (2 bands × 4 rows, t = 0.8)', () => {
  check('planted', planted, 0.8, 2, 4);
});

test('planted copies: the same at 3 bands × 6 rows, t = 0.7', () => {
  check('planted', planted, 0.7, 3, 6);
});

test('Kijiji ads: within 2 SE of the measured recall in ≥ 9 of 10 seeds (2 × 4 at 0.8, 4 × 5 at 0.7)', () => {
  check('kijiji', kijiji, 0.8, 2, 4);
  check('kijiji', kijiji, 0.7, 4, 5);
});

test('estimateRecall: P = 1 pairs are certain, weights and units as documented', () => {
  const certain = estimateRecall([1, 1, 1], 2, 4);
  assert.deepEqual([certain.found, certain.estimatedPairs, certain.recall, certain.stdError], [3, 3, 1, 0]);
  const p = candidateProbability(0.8, 2, 4);
  const one = estimateRecall([0.8], 2, 4);
  assert.ok(Math.abs(one.estimatedPairs - 1 / p) < 1e-12);
  assert.ok(Math.abs(one.estimatedPairsStdError - Math.sqrt(1 - p) / p) < 1e-12);
  assert.ok(Math.abs(one.stdError - (one.recall * one.estimatedPairsStdError) / one.estimatedPairs) < 1e-12);
  // A count of 3 is one event: 3/P to the total and 3·√(1−P)/P to the error, as three pairs of one unit.
  const weighted = estimateRecall([0.8], 2, 4, { counts: [3] });
  const unit = estimateRecall([0.8, 0.8, 0.8], 2, 4, { units: [7, 7, 7] });
  const independent = estimateRecall([0.8, 0.8, 0.8], 2, 4);
  assert.ok(Math.abs(weighted.estimatedPairsStdError - unit.estimatedPairsStdError) < 1e-12);
  assert.ok(Math.abs(independent.estimatedPairsStdError - Math.sqrt(3) * one.estimatedPairsStdError) < 1e-12);
  const dense = new RecallAccumulator(2, 4, 8);
  for (const x of [0.8, 0.8, 0.8]) dense.add(x, 1, 7);
  assert.deepEqual(dense.result(), unit, 'units summed in an array as in a map');
  assert.ok(Number.isNaN(new RecallAccumulator(2, 4).result().recall), 'nothing found: nothing to estimate from');
  assert.throws(() => estimateRecall([0], 2, 4), /similarity must be in \(0, 1\]/);
  assert.throws(() => new RecallAccumulator(0, 4), /bands and rows/);
});

test('dedup: a recall estimate only where LSH found every candidate and verification was exact', () => {
  const texts = planted(5);
  const base = dedup(texts, { threshold: 0.8, lsh: { bands: 2, rows: 4 } });
  assert.ok(base.stats.recall && base.stats.recall.recall < 1);
  // Without the pair list the clusters are the same and so is the estimate.
  assert.deepEqual(dedup(texts, { threshold: 0.8, lsh: { bands: 2, rows: 4 }, pairs: false }).stats.recall, base.stats.recall);
  assert.equal(dedup(texts, { threshold: 0.8, verify: 'estimate' }).stats.recall, undefined);
  assert.equal(dedup(texts, { threshold: 0.8, candidates: 'exact' }).stats.recall, undefined);
  // Past maxPairs, clustered bucket by bucket: only the pairs that joined two clusters are kept.
  const bucketwise = dedup(texts, { threshold: 0.8, maxPairs: 10, pairs: false, removal: 'cluster' });
  assert.equal(bucketwise.stats.counts, 'verified');
  assert.equal(bucketwise.stats.recall, undefined);
});

test('CLI: dedup in memory, streamed and as a job print the same recall; exact join 1; --verify estimate says why not', async () => {
  const dir = tmpDir();
  try {
    const docs = plantedDocs(2000, 0.4, 9);
    fs.writeFileSync(path.join(dir, 'all.jsonl'), jsonl(docs));
    await writeShards(path.join(dir, 'shards'), docs, 3, ['jsonl', 'jsonl.gz']);
    const weak = ['--bands', '2', '--rows', '4'];
    const json = (args: string[]): { recall: { estimate: number; stdError: number; verifiedPairs: number } | null; recallNote?: string } => {
      const r = neardup([...args, '--json', '-o', path.join(dir, 'out.tsv')], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as ReturnType<typeof json>;
    };
    const memory = json(['dedup', 'all.jsonl', ...weak, '--no-stream']);
    const streamed = json(['dedup', 'all.jsonl', ...weak, '--stream']);
    const job = json(['job', 'dedup', 'shards', '--local', '--work-dir', 'work', ...weak]);
    assert.ok(memory.recall && memory.recall.estimate < 0.99 && memory.recall.stdError > 0);
    for (const other of [streamed, job]) {
      assert.equal(other.recall!.verifiedPairs, memory.recall.verifiedPairs);
      // Summed in another order: equal up to rounding.
      assert.ok(Math.abs(other.recall!.estimate - memory.recall.estimate) < 1e-12 && Math.abs(other.recall!.stdError - memory.recall.stdError) < 1e-12);
    }
    assert.deepEqual(json(['dedup', 'all.jsonl', '--candidates', 'exact']).recall?.estimate, 1);
    const estimated = json(['dedup', 'all.jsonl', '--verify', 'estimate']);
    assert.equal(estimated.recall, null);
    assert.match(estimated.recallNote!, /--verify estimate gives no exact similarities/);
    const human = neardup(['dedup', 'all.jsonl', ...weak, '-o', path.join(dir, 'p.tsv')], { cwd: dir });
    assert.match(
      human.stderr,
      new RegExp(
        `^recall      ~${memory.recall.estimate.toFixed(4)} ± ${
          memory.recall.stdError.toFixed(4)
        } estimated from the [\\d,]+ verified pairs \\(P\\(0\\.8\\) = 0\\.6514\\)$`,
        'm',
      ),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
