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

test('memory store: a key table doubling a slice at a time answers as a model does, mid-growth included', { timeout: 120000 }, async () => {
  const store = new MemoryStore();
  await store.open({ keysPerDoc: K });
  const rnd = splitmix32(7);
  const docKeys = new Map<string, Float64Array>();
  const record = new Uint8Array([1]);
  let checksMidGrowth = 0;
  let checks = 0;
  for (let step = 0; step < 16000; step++) {
    const id = `d${rnd() % 12000}`;
    if (docKeys.has(id) && rnd() % 5 === 0) {
      assert.equal(await store.remove(id), true);
      docKeys.delete(id);
    } else {
      const keys = new Float64Array(K);
      // Distinct within a document: key j of a hot pool of its own, or fresh.
      for (let j = 0; j < K; j++) keys[j] = rnd() % 4 === 0 ? (j * HOT + (rnd() % HOT)) * 2097152 + 1 : rnd() * 2097152 + (rnd() % 2097152);
      if (new Set(keys).size < K) continue;
      await store.put([{ id, record, keys }]);
      docKeys.set(id, keys);
    }
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

test('memory store: a batch of many keys, linked at once in the order of their homes, makes the chains of a document at a time', { timeout: 120000 }, async () => {
  const K2 = 32;
  const DOCS = 10000; // 320,000 keys a batch: past BULK_MIN (262,144)
  const one = new MemoryStore();
  const many = new MemoryStore();
  await one.open({ keysPerDoc: K2 });
  await many.open({ keysPerDoc: K2 });
  const rnd = splitmix32(11);
  const docKeys = new Map<string, Float64Array>();
  const batchOf = (first: number, replaced: number) => {
    const out: { id: string; record: Uint8Array; keys: Float64Array }[] = [];
    for (let i = 0; i < DOCS; i++) {
      // The first `replaced` ids are earlier documents put again with other keys; a few documents have fewer keys.
      const id = i < replaced ? `d${(i * 7) % first}` : `d${first + i}`;
      const n = rnd() % 50 === 0 ? 1 + (rnd() % K2) : K2;
      const keys = new Float64Array(n);
      // Hot keys (chains across batches and within one) and fresh ones; distinct within a document.
      for (let j = 0; j < n; j++) keys[j] = rnd() % 3 === 0 ? (j * 64 + (rnd() % 64)) * 2097152 + 5 : rnd() * 2097152 + (rnd() % 2097152);
      if (new Set(keys).size < n) continue;
      out.push({ id, record: new Uint8Array([i & 255]), keys });
    }
    return out;
  };
  let first = 0;
  for (let b = 0; b < 4; b++) {
    const batch = batchOf(first, b === 0 ? 0 : 3000);
    first += DOCS;
    for (const e of batch) await one.put([e]);
    await many.put(batch);
    for (const e of batch) docKeys.set(e.id, e.keys);
    if (b === 1) {
      // Removals between batches: chains whose heads come off.
      for (let i = 0; i < 500; i++) {
        const id = `d${(i * 13) % first}`;
        assert.equal(await one.remove(id), docKeys.has(id));
        assert.equal(await many.remove(id), docKeys.has(id));
        docKeys.delete(id);
      }
    }
  }
  assert.ok(Number((await many.stats()).keyTableSlots) >= 1 << 19, 'the table doubled within the batches');
  await assertPostingsMatch(many, docKeys, 'the batches put at once');
  assert.deepEqual(many.postingErrors(), []);
  assert.equal(many.spotCheck(Number.MAX_SAFE_INTEGER), true);
  // Every chain in the same order (newest first): the hot keys and a sample of the others.
  const keys = [...new Set([...docKeys.values()].flatMap((ks) => [...ks]))].filter((k, i) => k % 2097152 === 5 || i % 17 === 0);
  const queries = keys.map((k) => new Float64Array([k]));
  const [got, want] = await Promise.all([many.lookup(queries, Number.MAX_SAFE_INTEGER), one.lookup(queries, Number.MAX_SAFE_INTEGER)]);
  const ids = (xs: { id: string }[]) => xs.map((x) => x.id).join(' ');
  const differs = want.findIndex((w, i) => ids(w) !== ids(got[i]!));
  assert.equal(differs, -1, differs < 0 ? '' : `key ${keys[differs]}: ${ids(got[differs]!).slice(0, 200)} against ${ids(want[differs]!).slice(0, 200)}`);
});
