/**
 * The memory store's key table while it doubles a few entries per link (src/store/memory/keyTable.ts):
 * under random puts, replacements and removals of documents with mostly fresh keys (the table
 * grows from 1,024 entries past 65,536) and a few hot ones (chains whose head is in the old table
 * when it changes or empties), every lookup, every document's keys read back from the chains, the
 * key count and the spot check of every slot match a plain model, taken in the middle of growths
 * as well as between them; the full postings check and a checkpoint image (which finish a growth)
 * follow, and a table made from the image answers the same.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../../src/store/memory/store.js';
import { splitmix32 } from '../../../src/hash/mix.js';
import { assertPostingsMatch } from '../../helpers/postingModel.js';

const K = 6;
const HOT = 40;

/** Lookups, keys read back and counts of `store` against `docKeys`; whether the table was growing. */
async function agrees(store: MemoryStore, docKeys: Map<string, Float64Array>, at: string): Promise<boolean> {
  const growing = store.growing;
  await assertPostingsMatch(store, docKeys, at);
  assert.deepEqual(await store.lookup([new Float64Array([12345 * 2097152])], 10), [[]], `an absent key at ${at}`);
  assert.equal(store.spotCheck(Number.MAX_SAFE_INTEGER), true, `spot check at ${at}`);
  // None of these checks finishes a growth.
  assert.equal(store.growing, growing, `growing at ${at}`);
  return growing;
}

/** One random write: a removal of a document held, or a put of one with mostly fresh keys (distinct within it: key j of a hot pool of its own, or fresh). */
async function randomWrite(store: MemoryStore, rnd: () => number, docKeys: Map<string, Float64Array>): Promise<void> {
  const id = `d${rnd() % 12000}`;
  if (docKeys.has(id) && rnd() % 5 === 0) {
    assert.equal(await store.remove(id), true);
    docKeys.delete(id);
    return;
  }
  const keys = new Float64Array(K);
  for (let j = 0; j < K; j++) keys[j] = rnd() % 4 === 0 ? (j * HOT + (rnd() % HOT)) * 2097152 + 1 : rnd() * 2097152 + (rnd() % 2097152);
  if (new Set(keys).size < K) return;
  await store.put([{ id, record: new Uint8Array([1]), keys }]);
  docKeys.set(id, keys);
}

test('memory store: a key table doubling a slice at a time answers as a model does, mid-growth included', { timeout: 120000 }, async () => {
  const store = new MemoryStore();
  await store.open({ keysPerDoc: K });
  const rnd = splitmix32(7);
  const docKeys = new Map<string, Float64Array>();
  let checksMidGrowth = 0;
  let checks = 0;
  for (let step = 0; step < 16000; step++) {
    await randomWrite(store, rnd, docKeys);
    if (step % 61 === 0) {
      checks++;
      if (await agrees(store, docKeys, `step ${step}`)) checksMidGrowth++;
    }
  }
  assert.ok(Number((await store.stats()).keyTableSlots) >= 65536, 'the table grew past 65,536 entries');
  assert.ok(checksMidGrowth >= 5, `${checksMidGrowth} of ${checks} checks fell in the middle of a growth`);
  assert.deepEqual(store.postingErrors(), []);
  assert.equal(store.growing, false, 'the full check moves the rest over');
  await agrees(store, docKeys, 'the end');
  const copy = await MemoryStore.fromImage({ keysPerDoc: K }, store.image());
  await agrees(copy, docKeys, 'a table made from the image');
  assert.deepEqual(copy.postingErrors(), []);
});

test("memory store: growth slices held back (a restart's fold) and let go again, in stretches: the table answers as a model does throughout", {
  timeout: 120000,
}, async () => {
  const store = new MemoryStore();
  await store.open({ keysPerDoc: K });
  const rnd = splitmix32(11);
  const docKeys = new Map<string, Float64Array>();
  let held = false;
  let heldGrowths = 0;
  let lastSlots = 0;
  for (let step = 0; step < 16000; step++) {
    // Stretches of 0 to 1,500 puts held, then as many let go: holds start and end before, within and after 60 and 70 %.
    if (step % 750 === 0 && rnd() % 2 === 0) {
      held = !held;
      store.holdGrowth(held);
    }
    await randomWrite(store, rnd, docKeys);
    const slots = Number((await store.stats()).keyTableSlots);
    if (held && slots > lastSlots) heldGrowths++;
    lastSlots = slots;
    if (step % 97 === 0) await agrees(store, docKeys, `step ${step}${held ? ', held' : ''}`);
  }
  assert.ok(heldGrowths > 0, 'the table doubled while its slices were held back');
  store.holdGrowth(false);
  assert.ok(Number((await store.stats()).keyTableSlots) >= 65536, 'the table grew past 65,536 entries');
  assert.deepEqual(store.postingErrors(), []);
  await agrees(store, docKeys, 'the end');
});
