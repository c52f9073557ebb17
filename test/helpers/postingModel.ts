/**
 * A memory store's postings against a plain model (key → ids): every key's lookup, the key
 * count, and each document's keys read back from the chains, as the memory store tests check them.
 */
import assert from 'node:assert/strict';
import type { MemoryStore } from '../../src/store/memory/store.js';

/** Asserts that `store` holds exactly the documents and keys of `docKeys`; `at` names the moment. */
export async function assertPostingsMatch(store: MemoryStore, docKeys: Map<string, Float64Array>, at: string): Promise<void> {
  const model = new Map<number, Set<string>>();
  for (const [d, ks] of docKeys) for (const k of ks) (model.get(k) ?? model.set(k, new Set()).get(k)!).add(d);
  const all = [...model.keys()];
  const got = await store.lookup(
    all.map((k) => new Float64Array([k])),
    Number.MAX_SAFE_INTEGER,
  );
  all.forEach((k, i) => assert.deepEqual(new Set(got[i]!.map((x) => x.id)), model.get(k), `bucket ${k} at ${at}`));
  assert.equal((await store.stats()).distinctKeys, model.size, `distinct keys at ${at}`);
  for (const [d, ks] of docKeys) assert.deepEqual(store.keysOf(d), ks, `keys of ${d} at ${at}`);
}
