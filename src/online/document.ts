/**
 * An indexed document as `index.get` returns it, and the signature of a stored record: both read a
 * record the same way (verify `exact` records hold the fingerprint set, and the signature is
 * recomputed from it).
 * @module
 */
import type { MinHasher } from '../sketch/minhash.js';
import { decodeRecord, type SetOfText } from './records/record.js';
import type { IndexedDocument } from './types.js';

/** What reading a record needs of the index: its signer, and its shingling for records that keep their text instead of their set. */
export interface RecordReading {
  readonly hasher: MinHasher;
  readonly setOfText: SetOfText;
}

/** The stored signature of a record, or the one recomputed from its fingerprints; null for an empty document. */
export function signatureOfRecord(bytes: Uint8Array, id: string, ix: RecordReading): Uint32Array | null {
  const rec = decodeRecord(bytes, `record of "${id}"`, ix.setOfText);
  return rec.signature ?? (rec.set ? ix.hasher.sign(rec.set) : null);
}

/** The document `id` stored as `bytes`: metadata, shingle count, signature and expiry. */
export function documentOfRecord<Meta>(id: string, bytes: Uint8Array, ix: RecordReading): IndexedDocument<Meta> {
  const { hasher } = ix;
  const rec = decodeRecord(bytes, `record of "${id}"`, ix.setOfText);
  return {
    id,
    ...(rec.meta !== undefined ? { meta: rec.meta as Meta } : {}),
    ...(rec.set ? { shingles: rec.set.length } : {}),
    signature: rec.signature ?? (rec.set ? hasher.sign(rec.set) : null),
    ...(rec.expiresAt !== undefined ? { expiresAt: rec.expiresAt } : {}),
  };
}
