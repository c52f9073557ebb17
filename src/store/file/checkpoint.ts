/**
 * The file store's checkpoint (`DIR/table`): the band table as it was after the log's first
 * `logEnd` bytes, so that open reads the table's arrays and folds only the frames after it, instead
 * of folding the whole log document by document. Written to a temporary file, synced and renamed
 * (a crash leaves the old checkpoint or the new); one that does not fit the log (longer than the
 * log, another format) is ignored and the whole log is folded.
 *   u32 headerBytes · header (JSON: format, logEnd, recordsEnd, applied, arenaLive, used, sections) ·
 *   sections, back to back: meta (JSON: ids, free slots, expiries), recOff, recLen, arena, next,
 *   prev, tKey, tHead (the typed arrays' bytes, little-endian as in memory)
 * @module
 */
import { existsSync } from 'node:fs';
import { open as openFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { MemoryStore, type MemoryTableImage } from '../memory/store.js';
import type { StoreManifest } from '../types.js';

/** The checkpoint's file name in the store's directory. */
export const CHECKPOINT_FILE = 'table';
const FORMAT = 'neardup-file-table 1';

/** Where in the log and records file a checkpoint stands. */
export interface CheckpointAt {
  /** Log bytes folded into the table. */
  logEnd: number;
  /** Records file bytes they refer to. */
  recordsEnd: number;
  /** Log frames folded. */
  applied: number;
}

type Arrays = Pick<MemoryTableImage, 'recOff' | 'recLen' | 'arena' | 'next' | 'prev' | 'tKey' | 'tHead'>;
const ARRAYS = { recOff: Float64Array, recLen: Uint32Array, arena: Uint8Array, next: Int32Array, prev: Int32Array, tKey: Float64Array, tHead: Int32Array } as const;
const NAMES = Object.keys(ARRAYS) as (keyof Arrays)[];

/** Writes the checkpoint of `table`, standing at `at`, into `dir`. */
export async function writeCheckpoint(dir: string, table: MemoryStore, at: CheckpointAt): Promise<void> {
  const img = table.image();
  const meta = Buffer.from(JSON.stringify({ ids: img.ids, free: img.free, expiry: img.expiry }));
  const parts = [meta, ...NAMES.map((n) => new Uint8Array(img[n].buffer, img[n].byteOffset, img[n].byteLength))];
  const header = Buffer.from(JSON.stringify({ format: FORMAT, ...at, arenaLive: img.arenaLive, used: img.used, sections: parts.map((p) => p.length) }));
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(header.length, 0);
  const tmp = path.join(dir, `${CHECKPOINT_FILE}.tmp`);
  const f = await openFile(tmp, 'w');
  try {
    for (const b of [head, header, ...parts]) for (let o = 0; o < b.length; ) o += (await f.write(b, o, b.length - o)).bytesWritten;
    await f.datasync();
  } finally {
    await f.close();
  }
  await rename(tmp, path.join(dir, CHECKPOINT_FILE));
  const d = await openFile(dir, 'r');
  await d.sync().finally(() => d.close());
}

/** Reads `len` bytes at `pos` into a new buffer. */
async function readAt(f: import('node:fs/promises').FileHandle, len: number, pos: number): Promise<ArrayBuffer> {
  const buf = new ArrayBuffer(len);
  const u8 = new Uint8Array(buf);
  for (let o = 0; o < len; ) {
    const { bytesRead } = await f.read(u8, o, len - o, pos + o);
    if (bytesRead === 0) throw new Error('checkpoint shorter than its header says');
    o += bytesRead;
  }
  return buf;
}

/** The checkpoint in `dir` as a table, if there is one that fits a log of `logSize` bytes; else null. */
export async function readCheckpoint(dir: string, manifest: StoreManifest, logSize: number): Promise<{ table: MemoryStore; at: CheckpointAt } | null> {
  const file = path.join(dir, CHECKPOINT_FILE);
  if (!existsSync(file)) return null;
  const f = await openFile(file, 'r');
  try {
    const size = (await f.stat()).size;
    if (size < 4) return null;
    const n = new DataView(await readAt(f, 4, 0)).getUint32(0, true);
    if (4 + n > size) return null;
    let h: CheckpointAt & { format: string; arenaLive: number; used: number; sections: number[] };
    try {
      h = JSON.parse(Buffer.from(await readAt(f, n, 4)).toString()) as typeof h;
    } catch {
      return null;
    }
    if (h.format !== FORMAT || h.logEnd > logSize || 4 + n + h.sections.reduce((a, b) => a + b, 0) !== size) return null;
    let pos = 4 + n;
    const bufs: ArrayBuffer[] = [];
    for (const len of h.sections) {
      bufs.push(await readAt(f, len, pos));
      pos += len;
    }
    const meta = JSON.parse(Buffer.from(bufs[0]!).toString()) as Pick<MemoryTableImage, 'ids' | 'free' | 'expiry'>;
    const arrays = Object.fromEntries(NAMES.map((name, i) => [name, new ARRAYS[name](bufs[i + 1]!)])) as unknown as Arrays;
    const table = await MemoryStore.fromImage(manifest, { ...meta, ...arrays, arenaLive: h.arenaLive, used: h.used });
    return { table, at: { logEnd: h.logEnd, recordsEnd: h.recordsEnd, applied: h.applied } };
  } finally {
    await f.close();
  }
}
