/**
 * The memory store's posting table against a plain model (key → set of ids) under random puts,
 * replacements and removals with few distinct keys, so that buckets are long (past the 64 links
 * `keysOf` walks back before it fills a window) and documents leave them from the head, the middle
 * and the tail. The table is told no old keys (it keeps none): removals unlink by the links alone,
 * and each document's keys read back from the chains are the keys it was put with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../../src/store/memory/store.js';
import { splitmix32 } from '../../../src/hash/mix.js';
import { assertPostingsMatch } from '../../helpers/postingModel.js';

test('memory store: lookups match a model after 20,000 random puts, replacements and removals', { timeout: 30000 }, async () => {
  const K = 4;
  const store = new MemoryStore();
  await store.open({ keysPerDoc: K });
  const rnd = splitmix32(42);
  const docKeys = new Map<string, Float64Array>();
  const record = new Uint8Array([1]);
  for (let step = 0; step < 20000; step++) {
    const id = `d${rnd() % 300}`;
    const old = docKeys.get(id);
    if (old && rnd() % 4 === 0) {
      assert.equal(await store.remove(id), true);
      docKeys.delete(id);
      continue;
    }
    // Keys from a small pool (hot buckets), distinct within a document.
    // 0 to K keys: a replacement may link fewer or more postings than the version it replaces.
    const keys = new Float64Array(rnd() % 8 === 0 ? rnd() % K : K);
    // Key 0 from 2 values: chains of ~100, most postings deeper than keysOf walks back.
    for (let j = 0; j < keys.length; j++) keys[j] = (j * 1000 + (rnd() % (j === 0 ? 2 : 12))) * 2097152 + (rnd() % (j === 0 ? 1 : 3));
    await store.put([{ id, record, keys }]);
    docKeys.set(id, keys);
    if (step % 997 === 0 || step === 19999) {
      await assertPostingsMatch(store, docKeys, `step ${step}`);
      assert.equal(await store.size(), docKeys.size);
      assert.equal(store.keysOf('absent'), null);
      assert.deepEqual(store.postingErrors(), []);
    }
  }
});

test('memory store: past its first slots and arena bytes, the arrays grow keeping every posting, and records read before still read the same', async () => {
  const K = 3;
  const store = new MemoryStore();
  await store.open({ keysPerDoc: K });
  const docKeys = new Map<string, Float64Array>();
  const recordOf = (i: number) => new Uint8Array(200).fill(i % 251);
  const early: Uint8Array[] = [];
  // 1024 slots and 64 KiB of records at first: 5,000 documents of 200 bytes outgrow both several times.
  for (let i = 0; i < 5000; i++) {
    const keys = new Float64Array(K).map((_, j) => (j * 7919 + (i % 97)) * 2097152 + j);
    await store.put([{ id: `d${i}`, record: recordOf(i), keys }]);
    docKeys.set(`d${i}`, keys);
    if (i % 1000 === 0) early.push(...((await store.get([`d${i}`])) as Uint8Array[]));
  }
  early.forEach((r, n) => assert.deepEqual(r, recordOf(n * 1000), `record of d${n * 1000}, read before the growth`));
  await assertPostingsMatch(store, docKeys, 'after growth');
  assert.deepEqual(store.postingErrors(), []);
});
