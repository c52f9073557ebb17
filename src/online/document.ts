/**
 * An indexed document as `index.get` returns it, and the signature of a stored record: both read a
 * record the same way (verify `exact` records hold the fingerprint set, and the signature is
 * recomputed from it).
 * @module
 */
import type { MinHasher } from '../sketch/minhash.js';
import { decodeRecord } from './records/record.js';
import type { IndexedDocument } from './types.js';

/** The stored signature of a record, or the one recomputed from its fingerprints; null for an empty document. */
export function signatureOfRecord(bytes: Uint8Array, id: string, hasher: MinHasher): Uint32Array | null {
  const rec = decodeRecord(bytes, `record of "${id}"`);
  return rec.signature ?? (rec.set ? hasher.sign(rec.set) : null);
}

/** The document `id` stored as `bytes`: metadata, shingle count, signature and expiry. */
export function documentOfRecord<Meta>(id: string, bytes: Uint8Array, hasher: MinHasher): IndexedDocument<Meta> {
  const rec = decodeRecord(bytes, `record of "${id}"`);
  return {
    id,
    ...(rec.meta !== undefined ? { meta: rec.meta as Meta } : {}),
    ...(rec.set ? { shingles: rec.set.length } : {}),
    signature: rec.signature ?? (rec.set ? hasher.sign(rec.set) : null),
    ...(rec.expiresAt !== undefined ? { expiresAt: rec.expiresAt } : {}),
  };
}
