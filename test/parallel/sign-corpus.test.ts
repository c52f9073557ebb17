/**
 * Worker-thread signing and the streaming two-pass pipeline give the same output as the
 * single-threaded batch path, for any number of workers and any memory budget.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signCorpusParallel } from '../../src/parallel/signCorpus.js';
import { dedupStream } from '../../src/dedup/streamDedup.js';
import { dedup } from '../../src/dedup/dedup.js';
import { readLineBatches } from '../../src/dedup/lineSource.js';
import { createShingler } from '../../src/text/shingler.js';
import { createMinHasher } from '../../src/sketch/minhash.js';
import { CorpusGenerator } from '../../bench/gen.js';

/** A small corpus with planted near duplicates, some empty and some non-ASCII documents. */
function corpus(n: number): string[] {
  const gen = new CorpusGenerator(3);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 37 === 5) out.push('');
    else if (i % 10 === 3 && i > 10) out.push(gen.render(gen.edit(gen.original(i - 3).subarray(0, 60), (i % 4) * 0.03, i), (i - 3) * 31 + 1));
    else if (i % 53 === 7) out.push('Ünïcödé ΣΊΣΥΦΟΣ e\u0301 ﬁ… 😀 ' + gen.render(gen.original(i), i));
    else out.push(gen.render(gen.original(i).subarray(0, 60), i * 31 + 1));
  }
  return out;
}

/** Index of the first difference of two arrays, or -1 (assert.deepEqual diffs of long arrays are slow). */
function firstDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

test('signCorpusParallel: identical signatures for 0, 1, 2 and 3 workers and equal to the reference', async () => {
  const texts = corpus(300);
  for (const method of ['oph', 'classic'] as const) {
    const options = { minhash: { method }, batchSize: 17 };
    const ref = await signCorpusParallel(texts, { ...options, workers: 0 });
    const shingler = createShingler();
    const hasher = createMinHasher({ method });
    for (let i = 0; i < texts.length; i++) {
      const want = hasher.sign(shingler.set(texts[i]!));
      assert.equal(ref.present[i], want ? 1 : 0);
      if (want) assert.equal(firstDiff(ref.row(i), want), -1, `${method} doc ${i}`);
    }
    for (const workers of [1, 2, 3]) {
      const got = await signCorpusParallel(texts, { ...options, workers });
      assert.equal(got.count, ref.count);
      for (let i = 0; i < ref.count; i++) {
        assert.equal(got.present[i], ref.present[i], `present ${i}`);
        // Rows of documents without shingles are unused; compare signatures only.
        if (ref.present[i]) assert.equal(firstDiff(got.row(i), ref.row(i)), -1, `${method}, ${workers} workers, doc ${i}`);
      }
    }
  }
});

test('dedupStream = dedup() for any worker count and memory budget (multi-pass verification)', async () => {
  const texts = corpus(400);
  const want = dedup(texts, { threshold: 0.7 });
  assert.ok(want.pairs.length > 20, 'the corpus has planted pairs');
  const source = () => texts;
  const shingler = createShingler();
  const maxSetBytes = Math.max(...texts.map((t) => shingler.set(t).byteLength));
  for (
    const [workers, memoryBudget, batchSize] of [
      [0, 1 << 30, 1024],
      [1, 1 << 30, 7],
      [2, 1, 50],
      [3, 20000, 33],
    ] as const
  ) {
    const got = await dedupStream(source, { threshold: 0.7, workers, memoryBudget, batchSize });
    assert.deepEqual(got.pairs, want.pairs, `workers ${workers}, budget ${memoryBudget}`);
    assert.deepEqual(got.clusters, want.clusters);
    assert.deepEqual(got.empty, want.empty);
    // A budget below one set holds one set at a time (and still verifies everything).
    if (memoryBudget === 1) assert.ok(got.extra.peakSetBytes <= maxSetBytes, `peak ${got.extra.peakSetBytes} > ${maxSetBytes}`);
  }
  const est = await dedupStream(source, { threshold: 0.7, workers: 2, verify: 'estimate' });
  assert.deepEqual(est.pairs, dedup(texts, { threshold: 0.7, verify: 'estimate' }).pairs);
});

test('dedupStream reads a file through readLineBatches and rejects a source that changes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'neardup-stream-'));
  try {
    const texts = corpus(120);
    const file = join(dir, 'docs.txt');
    writeFileSync(file, texts.join('\r\n') + '\n');
    const got = await dedupStream(() => readLineBatches(file, { chunkBytes: 1000 }), { workers: 2 });
    assert.deepEqual(got.pairs, dedup(texts).pairs);
    let pass = 0;
    await assert.rejects(
      dedupStream(() => (pass++ === 0 ? texts : texts.slice(1)), { workers: 0 }),
      /source changed between passes/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
