/**
 * Removing documents from the online index: the bulk-delete path (`removeMany`, one store write and
 * one cluster split per batch) and the purge of expired documents built on it (src/online/expiry.ts).
 * Both run under the index's write lock.
 * @module
 */
import type { NearDupStore } from '../store/types.js';
import type { IndexChange } from './events.js';
import { isLive } from './expiry.js';
import type { WriteLock } from './writer.js';

/** Expired documents removed per store write by a purge. */
export const PURGE_BATCH = 1000;

/** What removals need from the index. */
export interface RemovalHost {
  /** The store itself, not the live view: expired documents are read (and removed) too. */
  readonly store: NearDupStore;
  now(): number;
  keysOfRecord(record: Uint8Array): Float64Array;
  /** Tells the index's observers (cluster upkeep) about the removal. */
  notify(change: IndexChange): Promise<void>;
}

/**
 * Removes `ids` (distinct; under the write lock) in one store write and splits their clusters. An
 * expired document is removed too. With `expiredOnly`, only documents expired now are, and ids
 * without a record are passed on as well, so that the store drops any expiry entry left for them.
 * Returns the removed ids and those of them that were live (not expired).
 */
export async function removeIds(host: RemovalHost, ids: string[], expiredOnly: boolean): Promise<{ gone: Set<string>; live: Set<string> }> {
  const recs = ids.length ? await host.store.get(ids) : [];
  const now = host.now();
  const none = new Float64Array(0);
  const entries = ids.flatMap((id, i) => {
    const r = recs[i];
    if (expiredOnly) return r && isLive(r, now) ? [] : [{ id, keys: r ? host.keysOfRecord(r) : none }];
    return r ? [{ id, keys: host.keysOfRecord(r) }] : [];
  });
  const removed = entries.length ? await host.store.removeMany(entries) : [];
  const gone = new Set(entries.filter((_, i) => removed[i]).map((e) => e.id));
  const live = new Set(ids.filter((id, i) => gone.has(id) && isLive(recs[i]!, now)));
  if (gone.size) await host.notify({ kind: 'remove', ids: [...gone] });
  return { gone, live };
}

/**
 * Removes every document expired by `host.now()`, {@link PURGE_BATCH} ids per store write (each
 * batch under the write lock, so adds and queries run between batches), found through the store's
 * expiry index; then `store.reclaim()`. Returns the removed ids.
 */
export async function purgeExpired(host: RemovalHost, lock: WriteLock): Promise<string[]> {
  const out: string[] = [];
  let last = '';
  for (;;) {
    const { ids, gone } = await lock.exclusive(async () => {
      const ids = await host.store.expiredIds(host.now(), PURGE_BATCH);
      return { ids, gone: ids.length ? (await removeIds(host, ids, true)).gone : new Set<string>() };
    });
    for (const id of ids) if (gone.has(id)) out.push(id);
    // Done when the index has no more; also when a batch comes back unchanged (entries the store
    // keeps listing without removing them), rather than looping.
    const key = ids.join('\n');
    if (ids.length < PURGE_BATCH || key === last) break;
    last = key;
  }
  if (out.length) await host.store.reclaim?.();
  return out;
}
