/**
 * The file store's checkpoint (`DIR/table`): the band table as it was after the log's first
 * `logEnd` bytes, so that open reads the table's arrays and folds only the frames after it, instead
 * of folding the whole log document by document. Written to a temporary file, synced and renamed
 * (a crash leaves the old checkpoint or the new); one that does not fit the log (longer than the
 * log, of another generation of data files, another format or key count) is ignored and the whole log is folded.
 *   u32 headerBytes · header (JSON: format, keysPerSlot, logEnd, recordsEnd, applied, generation, tableSlots,
 *   sections) · sections, back to back: meta (JSON: ids, free slots, expiries), recLen, arena (live
 *   records only, in slot order), next, a bitmap of the key table's used slots, their heads, their
 *   keys (typed arrays' bytes, little-endian as in memory)
 * Lean (format 2): what cannot be rebuilt in one linear pass. Left out, against format 1 (every
 * array as it was in memory): dead arena bytes, record offsets, the chains' back links, the key
 * table's empty slots. About a third fewer bytes; load rebuilds them in linear passes.
 * @module
 */
import { existsSync } from 'node:fs';
import { open as openFile, rename, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { MemoryStore, type MemoryTableImage } from '../memory/store.js';
import type { StoreManifest } from '../types.js';
import { writeAll } from './manifest.js';

/** The checkpoint's file name in the store's directory. */
export const CHECKPOINT_FILE = 'table';
const FORMAT = 'neardup-file-table 2';
const EMPTY = -1;
/** Bytes of arena buffered before each write while a checkpoint is written. */
const WRITE_CHUNK = 16 << 20;

/** Where in the log and records file a checkpoint stands. */
export interface CheckpointAt {
  /** Log bytes folded into the table. */
  logEnd: number;
  /** Records file bytes they refer to. */
  recordsEnd: number;
  /** Log frames folded. */
  applied: number;
  /** The generation of the data files (src/store/file/manifest.ts): a checkpoint of another is not read. */
  generation: number;
}

const bytesOf = (a: Float64Array | Uint32Array | Int32Array | Uint8Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Bytes of the live records (the arena as written, without dead bytes). */
function liveBytes(img: MemoryTableImage): number {
  let o = 0;
  for (let s = 0; s < img.ids.length; s++) if (img.ids[s] !== null) o += img.recLen[s]!;
  return o;
}

/** The key table's used slots: a bitmap of them, and their heads and keys packed in slot order. */
function packTable(img: MemoryTableImage): { used: Uint8Array; heads: Int32Array; keys: Float64Array } {
  const { tHead, tKey } = img;
  const used = new Uint8Array(Math.ceil(tHead.length / 8));
  const heads = new Int32Array(img.used);
  const keys = new Float64Array(img.used);
  let i = 0;
  for (let s = 0; s < tHead.length; s++) {
    if (tHead[s] === EMPTY) continue;
    used[s >> 3]! |= 1 << (s & 7);
    heads[i] = tHead[s]!;
    keys[i++] = tKey[s]!;
  }
  return { used, heads, keys };
}

/** Writes the live records of `img`, in slot order, through a bounded buffer. */
async function writeLiveArena(f: FileHandle, img: MemoryTableImage): Promise<void> {
  const buf = new Uint8Array(WRITE_CHUNK);
  let n = 0;
  for (let s = 0; s < img.ids.length; s++) {
    if (img.ids[s] === null) continue;
    const rec = img.arena.subarray(img.recOff[s]!, img.recOff[s]! + img.recLen[s]!);
    if (n + rec.length > buf.length) {
      await writeAll(f, buf.subarray(0, n));
      n = 0;
    }
    if (rec.length > buf.length) await writeAll(f, rec);
    else n += (buf.set(rec, n), rec.length);
  }
  await writeAll(f, buf.subarray(0, n));
}

/** Writes the checkpoint of `table`, standing at `at`, into `dir`. */
export async function writeCheckpoint(dir: string, table: MemoryStore, at: CheckpointAt): Promise<void> {
  const img = table.image();
  const meta = Buffer.from(JSON.stringify({ ids: img.ids, free: img.free, expiry: img.expiry }));
  const t = packTable(img);
  // null: the live arena, written through a bounded buffer.
  const parts = [meta, bytesOf(img.recLen), null, bytesOf(img.next), t.used, bytesOf(t.heads), bytesOf(t.keys)];
  const sections = parts.map((p) => p?.length ?? liveBytes(img));
  const header = Buffer.from(JSON.stringify({ format: FORMAT, keysPerSlot: table.keysPerSlot, ...at, tableSlots: img.tHead.length, sections }));
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(header.length, 0);
  const tmp = path.join(dir, `${CHECKPOINT_FILE}.tmp`);
  const f = await openFile(tmp, 'w');
  try {
    await writeAll(f, head);
    await writeAll(f, header);
    for (const p of parts) await (p ? writeAll(f, p) : writeLiveArena(f, img));
    await f.datasync();
  } finally {
    await f.close();
  }
  await rename(tmp, path.join(dir, CHECKPOINT_FILE));
  const d = await openFile(dir, 'r');
  await d.sync().finally(() => d.close());
}

/** Reads `len` bytes at `pos` into a new buffer. */
async function readAt(f: FileHandle, len: number, pos: number): Promise<ArrayBuffer> {
  const buf = new ArrayBuffer(len);
  const u8 = new Uint8Array(buf);
  for (let o = 0; o < len; ) {
    const { bytesRead } = await f.read(u8, o, len - o, pos + o);
    if (bytesRead === 0) throw new Error('checkpoint shorter than its header says');
    o += bytesRead;
  }
  return buf;
}

/** What a checkpoint holds, as read. */
export interface LeanTable {
  ids: (string | null)[];
  recLen: Uint32Array;
  next: Int32Array;
  /** Bitmap of the key table's used slots, and their heads and keys in slot order. */
  used: Uint8Array;
  heads: Int32Array;
  keys: Float64Array;
  tableSlots: number;
  /** Postings per slot. */
  keysPerSlot: number;
  /** Bytes of each table record before its keys. */
  keyOffset: number;
}

/**
 * The arrays left out of the checkpoint, each in one linear pass (no chain is walked: that is a
 * cache miss per posting): record offsets from the lengths (the arena was written in slot order),
 * the chains' back links from the forward ones, the key table from its used slots.
 */
export function rebuildLinks(a: LeanTable): Pick<MemoryTableImage, 'recOff' | 'prev' | 'tKey' | 'tHead'> {
  const { ids, recLen, next, keysPerSlot: K, keyOffset } = a;
  const recOff = new Float64Array(ids.length);
  const prev = new Int32Array(next.length).fill(EMPTY);
  for (let s = 0, o = 0; s < ids.length; s++) {
    if (ids[s] === null) continue;
    recOff[s] = o;
    o += recLen[s]!;
    // Only the postings a live document has linked (a free slot's or a keyless document's hold stale links).
    const linked = (recLen[s]! - keyOffset) / 8;
    for (let p = s * K, end = p + linked; p < end; p++) if (next[p] !== EMPTY) prev[next[p]!] = p;
  }
  const tHead = new Int32Array(a.tableSlots).fill(EMPTY);
  const tKey = new Float64Array(a.tableSlots);
  // By bitmap byte, lowest set bit first: empty bytes cost one test.
  for (let b = 0, i = 0; b < a.used.length; b++) {
    for (let m = a.used[b]!; m !== 0; m &= m - 1) {
      const s = (b << 3) | (31 - Math.clz32(m & -m));
      tHead[s] = a.heads[i]!;
      tKey[s] = a.keys[i++]!;
    }
  }
  return { recOff, prev, tKey, tHead };
}

interface Header extends CheckpointAt {
  format: string;
  keysPerSlot: number;
  tableSlots: number;
  sections: number[];
}

/** The header of the checkpoint in `f` (of `size` bytes) and where its sections start, or null. */
async function readHeader(f: FileHandle, size: number): Promise<{ h: Header; pos: number } | null> {
  if (size < 4) return null;
  const n = new DataView(await readAt(f, 4, 0)).getUint32(0, true);
  if (4 + n > size) return null;
  try {
    return { h: JSON.parse(Buffer.from(await readAt(f, n, 4)).toString()) as Header, pos: 4 + n };
  } catch {
    return null;
  }
}

/** What a checkpoint is read against: the store's manifest, its log's size, and the table records' layout. */
export interface CheckpointFit {
  manifest: StoreManifest;
  logSize: number;
  /** The generation of the data files in use. */
  generation: number;
  /** Bytes of each table record before its keys. */
  keyOffset: number;
}

/** The checkpoint in `dir` as a table, if there is one of this format that fits; else null (fold the log). */
export async function readCheckpoint(dir: string, fit: CheckpointFit): Promise<{ table: MemoryStore; at: CheckpointAt } | null> {
  const file = path.join(dir, CHECKPOINT_FILE);
  if (!existsSync(file)) return null;
  const f = await openFile(file, 'r');
  try {
    const size = (await f.stat()).size;
    const got = await readHeader(f, size);
    if (!got) return null;
    const { h } = got;
    // Another format (format 1 included), another key count or a log cut shorter: not read at all.
    if (h.format !== FORMAT || h.keysPerSlot !== Math.max(1, fit.manifest.keysPerDoc) || h.logEnd > fit.logSize || h.generation !== fit.generation) return null;
    if (!Array.isArray(h.sections) || h.sections.length !== 7 || got.pos + h.sections.reduce((a, b) => a + b, 0) !== size) return null;
    let pos = got.pos;
    const bufs: ArrayBuffer[] = [];
    for (const len of h.sections) {
      bufs.push(await readAt(f, len, pos));
      pos += len;
    }
    const meta = JSON.parse(Buffer.from(bufs[0]!).toString()) as Pick<MemoryTableImage, 'ids' | 'free' | 'expiry'>;
    const [recLen, arena, next, used, heads, keys] = [new Uint32Array(bufs[1]!), new Uint8Array(bufs[2]!), new Int32Array(bufs[3]!), new Uint8Array(bufs[4]!), new Int32Array(bufs[5]!), new Float64Array(bufs[6]!)];
    const lean = { ids: meta.ids, recLen, next, used, heads, keys, tableSlots: h.tableSlots, keysPerSlot: h.keysPerSlot, keyOffset: fit.keyOffset };
    const img: MemoryTableImage = { ...meta, ...rebuildLinks(lean), recLen, arena, arenaLive: arena.length, next, used: heads.length };
    return { table: await MemoryStore.fromImage(fit.manifest, img), at: { logEnd: h.logEnd, recordsEnd: h.recordsEnd, applied: h.applied, generation: h.generation } };
  } finally {
    await f.close();
  }
}
