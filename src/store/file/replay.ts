/**
 * Opening the file store's log: every frame is folded, in order, into the in-memory band table; a
 * torn tail (the frame of a write that was never acknowledged, cut short by a crash) is cut off the
 * log, and the records file is cut back to the last record the log refers to. A damaged frame that
 * is not at the tail is not cut off silently: it fails the open, since acknowledged writes follow it.
 * The last whole frame is folded only once its records hold (the checksum a frame of version 2
 * carries, ./frames.ts): a batch syncs its records and its frame at once, so a crash may leave the
 * frame on disk without them; such a frame was never acknowledged, and is cut off as torn. Every
 * frame before it was: the next batch is written only after the one before is on disk.
 * @module
 */
import type { FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { LogReplica, ReplicaDoc } from '../log/replica.js';
import { decodeFrameAt, FRAME_HEADER, type Frame } from './frames.js';
import { readFull } from './manifest.js';

/** Bytes of log read at a time while opening. */
const READ_CHUNK = 16 << 20;

/** Bytes of a table record's locator: f64 record offset · u32 record length (a screen may follow it). */
export const LOCATOR_BYTES = 12;

/** Where a document's record is, as kept in the band table. */
export function locator(at: number, bytes: number): Uint8Array {
  const b = Buffer.allocUnsafe(LOCATOR_BYTES);
  b.writeDoubleLE(at, 0);
  b.writeUInt32LE(bytes, 8);
  return b;
}

/** A document's table record: its record's {@link locator}, then the screen of its set when it has one. */
export function tableRecord(at: number, bytes: number, screen?: Uint8Array): Uint8Array {
  const loc = locator(at, bytes);
  if (!screen) return loc;
  const b = new Uint8Array(LOCATOR_BYTES + screen.length);
  b.set(loc);
  b.set(screen, LOCATOR_BYTES);
  return b;
}

/** The screen a table record keeps after its locator (empty: none). */
export function screenIn(record: Uint8Array): Uint8Array {
  return record.subarray(LOCATOR_BYTES);
}

/** Where a document's record is: a {@link locator} read back. */
export interface Place {
  at: number;
  len: number;
}

/** The place a table record's locator (its first {@link LOCATOR_BYTES} bytes) gives. */
export function placeOf(loc: Uint8Array): Place {
  const v = new DataView(loc.buffer, loc.byteOffset, loc.byteLength);
  return { at: v.getFloat64(0, true), len: v.getUint32(8, true) };
}

/** The documents of a frame as the table takes them (puts with their record locators). */
export function replicaDocs(f: Frame): ReplicaDoc[] {
  if (f.entry.op === 'remove') return f.entry.docs;
  let at = f.recordsAt;
  return f.entry.docs.map((d, i) => {
    const bytes = f.recordBytes[i]!;
    const doc: ReplicaDoc = { ...d, extra: tableRecord(at, bytes, f.screens[i]), ...(f.expiresAt[i] === undefined ? {} : { expiresAt: f.expiresAt[i] }) };
    at += bytes;
    return doc;
  });
}

/** What opening the log found. */
export interface Replayed {
  /** Bytes of log kept (the torn tail cut off). */
  logEnd: number;
  /** Bytes of the records file the log refers to. */
  recordsEnd: number;
  /** Bytes cut off the log's tail. */
  tornBytes: number;
}

/** The files of a store being opened. */
export interface StoreFiles {
  /** The log, and its size. */
  log: FileHandle;
  logSize: number;
  /** The records file. */
  records: FileHandle;
  /** The store's name in messages. */
  where: string;
  /** Where folding starts (after a checkpoint), and the records file bytes referred to before it. */
  start: { logEnd: number; recordsEnd: number };
}

/** Folds the log (of `logSize` bytes) into `replica`; cuts a torn tail off both files. */
export async function replay(files: StoreFiles, replica: LogReplica): Promise<Replayed> {
  const { log, logSize, where } = files;
  let buf = Buffer.alloc(0);
  let base = files.start.logEnd; // file offset of buf[0]
  let o = 0;
  let recordsEnd = files.start.recordsEnd;
  // The last frame read, folded once the next one is whole (or, the last of all, once its records hold).
  let last: { frame: Frame; at: number } | undefined;
  const fold = async (): Promise<void> => {
    const f = last!.frame;
    await replica.apply({ op: f.entry.op, docs: replicaDocs(f) });
    replica.applied++;
    if (f.entry.op === 'put') recordsEnd = f.recordsAt + f.recordBytes.reduce((a, b) => a + b, 0);
    last = undefined;
  };
  const end = async (logEnd: number): Promise<Replayed> => {
    if (last === undefined) return finish(files, logEnd, recordsEnd);
    if (await recordsHold(files.records, last.frame)) {
      await fold();
      return finish(files, logEnd, recordsEnd);
    }
    return finish(files, last.at, recordsEnd);
  };
  for (;;) {
    const got = decodeFrameAt(buf, o, `${where}@${base + o}`);
    if (typeof got === 'object') {
      if (last) await fold();
      last = { frame: got.frame, at: base + o };
      o = got.end;
      continue;
    }
    const fileAt = base + buf.length;
    if (got === 'short' && fileAt < logSize) {
      // Keep the unread rest, read the next chunk (at least the whole frame).
      const need = buf.length - o >= FRAME_HEADER ? buf.readUInt32LE(o) + FRAME_HEADER : READ_CHUNK;
      const next = Buffer.allocUnsafe(Math.max(READ_CHUNK, need));
      const { bytesRead } = await log.read(next, 0, next.length, fileAt);
      if (bytesRead === 0) return end(base + o);
      buf = Buffer.concat([buf.subarray(o), next.subarray(0, bytesRead)]);
      base += o;
      o = 0;
      continue;
    }
    const logEnd = base + o;
    if (got === 'bad' && !(await tailIsTorn(log, logEnd, logSize)))
      throw new Error(`${where}: damaged frame at byte ${logEnd} of ${logSize}, followed by more frames: the log is corrupt (restore a backup)`);
    return end(logEnd);
  }
}

/** Whether a put frame's records are in the records file as its checksum says (a frame of version 1, or a remove: true). */
async function recordsHold(records: FileHandle, f: Frame): Promise<boolean> {
  if (f.entry.op !== 'put' || f.recordsCrc === undefined) return true;
  const bytes = Buffer.allocUnsafe(f.recordBytes.reduce((a, b) => a + b, 0));
  return (await readFull(records, bytes, f.recordsAt)) === bytes.length && crc32(bytes) === f.recordsCrc;
}

async function finish(files: StoreFiles, logEnd: number, recordsEnd: number): Promise<Replayed> {
  const { log, logSize, records, where } = files;
  if (logEnd < logSize) {
    await log.truncate(logEnd);
    await log.datasync();
  }
  const recSize = (await records.stat()).size;
  if (recSize < recordsEnd)
    throw new Error(`${where}: the records file has ${recSize} bytes, the log refers to ${recordsEnd}: records are missing (restore a backup)`);
  // Records written for a batch whose frame never made it: not acknowledged, not referenced.
  if (recSize > recordsEnd) {
    await records.truncate(recordsEnd);
    await records.datasync();
  }
  return { logEnd, recordsEnd, tornBytes: logSize - logEnd };
}

/**
 * Whether a damaged frame at `at` is the tail of an interrupted write: the frame claims to reach the
 * end of the file or past it, or everything from it on is zero bytes (a file system that extended
 * the file before writing its data).
 */
async function tailIsTorn(log: FileHandle, at: number, size: number): Promise<boolean> {
  const head = Buffer.alloc(FRAME_HEADER);
  await log.read(head, 0, FRAME_HEADER, at);
  if (at + FRAME_HEADER + head.readUInt32LE(0) >= size) return true;
  const rest = Buffer.alloc(Math.min(size - at, 1 << 20));
  const { bytesRead } = await log.read(rest, 0, rest.length, at);
  return size - at <= rest.length && rest.subarray(0, bytesRead).every((x) => x === 0);
}
