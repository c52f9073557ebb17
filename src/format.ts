/**
 * The binary formats of neardup (spec: docs/formats.md), gathered for the public API's `format`
 * namespace (src/index.ts). Each part lives with what owns it: the byte reader and writer,
 * fingerprint sets and signature blobs in the sketch layer (src/sketch/format.ts), document records
 * and index snapshots with the online index (src/online/records/record.ts, src/online/records/snapshotFormat.ts).
 * @module
 */
export {
  FORMAT_VERSION,
  SIGNATURE_SPEC,
  FormatError,
  ByteWriter,
  ByteReader,
  writeFingerprintSet,
  encodeFingerprintSet,
  readFingerprintSet,
  decodeFingerprintSet,
  encodeSignature,
  decodeSignature,
  type SignatureBlob,
} from './sketch/format.js';
export {
  REC_SET,
  REC_SIG,
  REC_META,
  REC_EXPIRES,
  REC_SIG16,
  REC_TEXT,
  encodeRecord,
  decodeRecord,
  readRecordSketch,
  readRecordMeta,
  recordExpiresAt,
  withExpiry,
  type IndexRecord,
  type SetOfText,
} from './online/records/record.js';
import type { IndexRecord } from './online/records/record.js';
/** @deprecated Renamed {@link IndexRecord} (the top-level `DocRecord` is the batch input record); this alias goes in the next minor release. */
export type DocRecord = IndexRecord;
export { encodeIndexSnapshot, decodeIndexSnapshot, type IndexSnapshot } from './online/records/snapshotFormat.js';
