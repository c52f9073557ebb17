/**
 * The index snapshot format (spec: docs/formats.md, "Index snapshots"): an index's manifest and
 * every document record in one checksummed file, written by `NearDupIndex.save` and read by
 * `NearDupIndex.load` (file handling in src/online/snapshot.ts).
 * @module
 */
import { crc32 } from 'node:zlib';
import { ByteReader, ByteWriter, FORMAT_VERSION, FormatError } from '../../sketch/format.js';

const utf8 = new TextEncoder();
const utf8d = new TextDecoder('utf-8', { fatal: true });

const IDX_MAGIC = [0x4e, 0x44, 0x49, 0x58]; // "NDIX"

/** The parsed content of an index snapshot. */
export interface IndexSnapshot {
  /** The index manifest (parameters), as JSON. */
  manifest: Record<string, unknown>;
  /** Documents in file order. */
  docs: { id: string; record: Uint8Array }[];
}

/**
 * Writes an index snapshot: "NDIX", uint16 version, uint16 flags (0), uint32 manifest length +
 * UTF-8 JSON manifest, uint32 document count, per document varint id length + UTF-8 id + varint
 * record length + record, then the CRC-32 (IEEE) of every preceding byte as uint32.
 */
export function encodeIndexSnapshot(snap: IndexSnapshot): Uint8Array {
  const w = new ByteWriter(1 << 16);
  for (const c of IDX_MAGIC) w.u8(c);
  w.u16(FORMAT_VERSION);
  w.u16(0);
  const m = utf8.encode(JSON.stringify(snap.manifest));
  w.u32(m.length);
  w.bytes(m);
  w.u32(snap.docs.length);
  for (const d of snap.docs) {
    const id = utf8.encode(d.id);
    w.varint(id.length);
    w.bytes(id);
    w.varint(d.record.length);
    w.bytes(d.record);
  }
  w.u32(crc32(w.buf.subarray(0, w.length)) >>> 0);
  return w.finish();
}

/** Reads an index snapshot, checking magic, version and checksum. */
export function decodeIndexSnapshot(bytes: Uint8Array, what = 'index snapshot'): IndexSnapshot {
  if (bytes.length < 16) throw new FormatError(`${what}: too short (${bytes.length} bytes)`);
  const r = new ByteReader(bytes, 0, bytes.length - 4, what);
  for (let i = 0; i < 4; i++) if (r.u8() !== IDX_MAGIC[i]) throw new FormatError(`${what}: bad magic (expected "NDIX")`);
  const version = r.u16();
  if (version !== FORMAT_VERSION) throw new FormatError(`${what}: unsupported version ${version}`);
  const flags = r.u16();
  if (flags !== 0) throw new FormatError(`${what}: unknown flags ${flags}`);
  const stored = new ByteReader(bytes, bytes.length - 4, bytes.length, what).u32();
  const actual = crc32(bytes.subarray(0, bytes.length - 4)) >>> 0;
  if (stored !== actual) throw new FormatError(`${what}: checksum mismatch (stored ${stored.toString(16)}, computed ${actual.toString(16)})`);
  const mlen = r.u32();
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(utf8d.decode(r.bytes(mlen))) as Record<string, unknown>;
  } catch {
    throw new FormatError(`${what}: manifest at byte 12 is not valid UTF-8 JSON`);
  }
  const count = r.u32();
  const docs: IndexSnapshot['docs'] = [];
  for (let i = 0; i < count; i++) {
    const id = utf8d.decode(r.bytes(r.varint()));
    const record = r.bytes(r.varint()).slice();
    docs.push({ id, record });
  }
  if (r.pos !== r.end) throw new FormatError(`${what}: ${r.end - r.pos} unexpected bytes before the checksum`);
  return { manifest, docs };
}
