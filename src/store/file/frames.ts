/**
 * The frames of the file store's log (docs/stores.md, "file:DIR"). The log file is a sequence of
 * frames; one frame is one write batch:
 *   u32 payloadBytes · u32 crc32(payload) · payload
 *   payload: u8 version (3) · f64 recordsAt · u32 entryBytes · entry · per put document: u32 recordBytes · f64 expiresAt (NaN: none)
 *            · u8 screenBytes · the screen of its fingerprint set (src/similarity/setScreen.ts; none: 0 bytes)
 *            · u32 crc32 of the put's records (0 for a remove)
 * Frames are written with screenBytes 0: the screens live in the band table and its checkpoint
 * (./screenHeals.ts). A screen a frame of an earlier version of neardup carries is read and kept.
 * Version 2, read, has no screens (a put document's part ends at expiresAt). Version 1, read, has
 * no records checksum either: its batch's records were synced before its frame. A
 * batch of version 2 syncs its records and its frame at once (one disk flush's wait, not two), so
 * the log's last frame may be on disk without its records: open checks them against the checksum
 * and cuts the frame off when they do not hold (./replay.ts).
 * `entry` is a posting-log entry (src/store/log/entry.ts: op, ids, keys), shared with the Redis log
 * layout. A put's records are written contiguously to the records file from byte `recordsAt`, in
 * the entry's order. All integers little-endian. A frame whose length or checksum does not hold is a
 * torn tail (a write the process did not finish): the log ends before it.
 * @module
 */
import { crc32 } from 'node:zlib';
import { decodeLogEntry, encodeLogEntry, type LogDoc, type LogEntry } from '../log/entry.js';

/** Version byte of a frame's payload, as written now (1 and 2 are read too). */
export const FRAME_VERSION = 3;
/** Bytes before a frame's payload. */
export const FRAME_HEADER = 8;

/** A decoded frame. */
export interface Frame {
  /** The posting-log entry. */
  entry: LogEntry;
  /** Where the put's first record starts in the records file. */
  recordsAt: number;
  /** Each put document's record length. */
  recordBytes: number[];
  /** Each put document's expiry (undefined: none). */
  expiresAt: (number | undefined)[];
  /** The crc32 of the put's records, back to back (undefined in a frame of version 1). */
  recordsCrc?: number | undefined;
  /** Each put document's screen (undefined: none, as in every frame before version 3). */
  screens: (Uint8Array | undefined)[];
}

/** What a put frame says of each document beside the entry. */
export interface FrameDoc extends LogDoc {
  recordBytes: number;
  expiresAt: number | undefined;
}

/** Encodes one frame (header included); `docs` carry record lengths for a put, and `recordsCrc` is the crc32 of its records. */
export function encodeFrame(op: 'put' | 'remove', docs: FrameDoc[] | LogDoc[], recordsAt: number, recordsCrc = 0): Buffer {
  const entry = encodeLogEntry(op, docs);
  const perDoc = op === 'put' ? 13 * docs.length : 0;
  const payload = Buffer.allocUnsafe(13 + entry.length + perDoc + 4);
  payload[0] = FRAME_VERSION;
  payload.writeDoubleLE(recordsAt, 1);
  payload.writeUInt32LE(entry.length, 9);
  let o = 13 + entry.copy(payload, 13);
  if (op === 'put') {
    for (const d of docs as FrameDoc[]) {
      payload.writeUInt32LE(d.recordBytes, o);
      payload.writeDoubleLE(d.expiresAt ?? NaN, o + 4);
      payload[o + 12] = 0;
      o += 13;
    }
  }
  payload.writeUInt32LE(op === 'put' ? recordsCrc >>> 0 : 0, o);
  const head = Buffer.allocUnsafe(FRAME_HEADER);
  head.writeUInt32LE(payload.length, 0);
  head.writeUInt32LE(crc32(payload), 4);
  return Buffer.concat([head, payload]);
}

/**
 * The frame starting at `o` of `buf`: `{ frame, end }`, `'short'` when `buf` ends before it does
 * (read more, or a torn tail at the end of the file), `'bad'` when its checksum or contents are wrong.
 */
export function decodeFrameAt(buf: Buffer, o: number, where: string): { frame: Frame; end: number } | 'short' | 'bad' {
  if (o + FRAME_HEADER > buf.length) return 'short';
  const n = buf.readUInt32LE(o);
  const end = o + FRAME_HEADER + n;
  if (end > buf.length) return 'short';
  const payload = buf.subarray(o + FRAME_HEADER, end);
  const version = payload[0];
  if (crc32(payload) !== buf.readUInt32LE(o + 4) || n < 13 || (version !== 1 && version !== 2 && version !== 3)) return 'bad';
  const entryBytes = payload.readUInt32LE(9);
  if (13 + entryBytes > n) return 'bad';
  let entry: LogEntry;
  try {
    entry = decodeLogEntry(payload.subarray(13, 13 + entryBytes), where);
  } catch {
    return 'bad';
  }
  const puts = entry.op === 'put' ? entry.docs.length : 0;
  const tail = version === 1 ? 0 : 4;
  const recordBytes: number[] = [];
  const expiresAt: (number | undefined)[] = [];
  const screens: (Uint8Array | undefined)[] = [];
  let p = 13 + entryBytes;
  for (let i = 0; i < puts; i++) {
    if (p + 12 + (version === 3 ? 1 : 0) > n - tail) return 'bad';
    recordBytes.push(payload.readUInt32LE(p));
    const at = payload.readDoubleLE(p + 4);
    expiresAt.push(Number.isNaN(at) ? undefined : at);
    p += 12;
    if (version === 3) {
      const len = payload[p]!;
      // A copy: the table keeps it, and the read buffer is reused.
      screens.push(len === 0 ? undefined : Uint8Array.prototype.slice.call(payload, p + 1, p + 1 + len));
      p += 1 + len;
    } else screens.push(undefined);
  }
  if (p + tail !== n) return 'bad';
  const recordsCrc = version !== 1 && entry.op === 'put' ? payload.readUInt32LE(n - 4) : undefined;
  return { frame: { entry, recordsAt: payload.readDoubleLE(1), recordBytes, expiresAt, recordsCrc, screens }, end };
}
