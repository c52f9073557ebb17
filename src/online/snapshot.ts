/**
 * Snapshot files of the online index (format: src/online/records/snapshotFormat.ts, docs/formats.md):
 * writing every record of a store atomically (temp file + rename), reading one back, the index
 * options a snapshot implies, and writing its records into a store.
 * @module
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { NearDupStore, PutEntry } from '../store/types.js';
import { decodeIndexSnapshot, encodeIndexSnapshot } from './records/snapshotFormat.js';
import { recordExpiresAt } from './records/record.js';
import type { IndexManifest, NearDupIndexOptions } from './types.js';

/** Writes a snapshot of `store` (documents in id order) to `path`, atomically; returns the number of documents. */
export async function writeSnapshotFile(store: NearDupStore, manifest: IndexManifest, path: string): Promise<number> {
  const docs: { id: string; record: Uint8Array }[] = [];
  for await (const d of store.scan()) docs.push({ id: d.id, record: d.record.slice() });
  docs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const bytes = encodeIndexSnapshot({ manifest: manifest as unknown as Record<string, unknown>, docs });
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  await writeFile(tmp, bytes);
  await rename(tmp, path);
  return docs.length;
}

/** A snapshot read from a file. */
export interface SnapshotContent {
  manifest: IndexManifest;
  docs: { id: string; record: Uint8Array }[];
}

/** Reads and checks a snapshot file (a FormatError names the file and the problem). */
export async function readSnapshotFile(path: string): Promise<SnapshotContent> {
  const snap = decodeIndexSnapshot(await readFile(path), path);
  return { manifest: snap.manifest as unknown as IndexManifest, docs: snap.docs };
}

/** The index options a snapshot's manifest implies, overridden by the caller's `options`. */
export function snapshotOptions(m: IndexManifest, options: NearDupIndexOptions): NearDupIndexOptions {
  return {
    threshold: m.threshold,
    verify: m.verify,
    shingle: { ...m.shingle, normalize: { ...m.shingle.normalize, custom: options.shingle?.normalize?.custom } },
    numPerm: m.minhash.numPerm,
    method: m.minhash.method,
    seed: m.minhash.seed,
    bands: m.bands,
    rows: m.rows,
    forest: m.forest ?? false,
    ...(m.ensemble ? { ensemble: m.ensemble } : {}),
    ...(m.setSource !== undefined ? { setSource: m.setSource } : {}),
    ...options,
  };
}

/**
 * Writes a snapshot's records into a store, 1,000 per call, with the keys (and screen) `entryOf`
 * gives each, and each record's expiry, for the store's expiry index.
 */
export async function putSnapshotDocs(
  store: NearDupStore,
  docs: SnapshotContent['docs'],
  entryOf: (record: Uint8Array) => Pick<PutEntry, 'keys' | 'screen'>,
): Promise<void> {
  const batch: PutEntry[] = [];
  for (const d of docs) {
    const expiresAt = recordExpiresAt(d.record);
    batch.push({ id: d.id, record: d.record, ...entryOf(d.record), ...(expiresAt !== undefined ? { expiresAt } : {}) });
    if (batch.length === 1000) await store.put(batch.splice(0));
  }
  if (batch.length) await store.put(batch);
}
