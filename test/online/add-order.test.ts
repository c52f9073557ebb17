/**
 * `addMany` batches in flight at once (as `neardup index add` keeps two, and the file-store bench)
 * insert in call order, whatever order their preparation ends in: with two prepare workers, a
 * batch sent later can be prepared first. The answers and the stored records equal those of the
 * same batches added one after another on the main thread; metadata that is the text alone (sent
 * to the workers without serializing it) and other metadata give the same records.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NearDupIndex, type NearDupIndexOptions } from '../../src/index.js';
import { kijijiTexts } from '../helpers/kijiji.js';
import { WORKER_MIN_BATCH } from '../../src/online/preparer.js';

const OPTS: NearDupIndexOptions = { shingle: { k: 5 }, threshold: 0.7, setSource: 'text' };

test('addMany: batches in flight on two workers insert in call order; the same answers and records as one after another', async () => {
  const texts = kijijiTexts();
  // Big and small batches (each big enough for the workers), every one after the first repeating
  // texts of the batch before it, edited, so that answers cross batches.
  const sizes = [300, WORKER_MIN_BATCH, 300, WORKER_MIN_BATCH, 300, WORKER_MIN_BATCH];
  let at = 0;
  const batches = sizes.map((n, b) => {
    const from = at;
    at += n;
    return Array.from({ length: n }, (_, i) => {
      const text = b > 0 && i % 3 === 0 ? `${texts[from - 1 - (i % sizes[b - 1]!)]!} again` : texts[from + i]!;
      const meta = i % 4 === 0 ? { text } : i % 4 === 1 ? { text, title: `t${i}` } : i % 4 === 2 ? undefined : { text: 'other' };
      return { id: `b${b}-${i}`, text, meta };
    });
  });
  const seq = await NearDupIndex.open(OPTS);
  const par = await NearDupIndex.open({ ...OPTS, workers: 2 });
  try {
    const want: Awaited<ReturnType<typeof seq.addMany>>[] = [];
    for (const b of batches) want.push(await seq.addMany(b));
    // A small batch on the second worker is prepared before the big one called before it.
    const got = await Promise.all(batches.map((b) => par.addMany(b)));
    // Compared as JSON: a diff of two large nested arrays takes minutes to print.
    const differ = got.findIndex((g, b) => JSON.stringify(g) !== JSON.stringify(want[b]));
    assert.equal(differ, -1, `batch ${differ} answered differently`);
    assert.ok(want.flat().filter((m) => m.length > 0).length >= 50, 'answers cross batches');
    const ids = batches.flat().map((d) => d.id);
    const [a, b] = [await par.store.get(ids), await seq.store.get(ids)];
    assert.equal(ids.filter((_, i) => !Buffer.from(a[i]!).equals(Buffer.from(b[i]!))).length, 0, 'the same records');
  } finally {
    await seq.close();
    await par.close();
  }
});
