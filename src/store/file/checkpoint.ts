/**
 * The file store's checkpoint (`DIR/table`): the band table as it was after the log's first
 * `logEnd` bytes, so that open reads the table's arrays and folds only the frames after it, instead
 * of folding the whole log document by document. Written to a temporary file, synced and renamed
 * (a crash leaves the old checkpoint or the new); one that does not fit the log (longer than the
 * log, of another generation of data files, another format, byte order or key count) is ignored and the whole log is folded.
 *   u32 headerBytes · header (JSON: format, byteOrder, keysPerSlot, logEnd, recordsEnd, applied, generation, slots,
 *   used, ids, sections) · sections, back to back, in SECTIONS' order: meta (JSON: free slots, expiries), then the
 *   table's own typed arrays (their bytes, little-endian as in memory)
 * Format 3: each array is read straight into the array the table keeps (one read per array, the
 * arrays read in parallel), allocated with room to grow; no per-entry work but two prefix sums (record
 * and id offsets, from their lengths: arena and id bytes are written live only, in slot order). Why:
 * format 2 (ids as JSON, a Map of them built at open, back links and key table rebuilt) spent ~2 s
 * at 10^6 documents in that per-entry work, ~20 s at 10^7.
 * @module
 */
import { existsSync } from 'node:fs';
import { endianness } from 'node:os';
import { open as openFile, rename, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { MemoryStore, type MemoryTableImage } from '../memory/store.js';
import type { StoreManifest } from '../types.js';
import { writeAll } from './manifest.js';

/** The checkpoint's file name in the store's directory. */
export const CHECKPOINT_FILE = 'table';
/** Formats 1 and 2 (older versions) are ignored by name: the log is folded instead. */
const FORMAT = 'neardup-file-table 3';
const FREE = -1;
/** Bytes of arena buffered before each write while a checkpoint is written. */
const WRITE_CHUNK = 16 << 20;
/** Bytes read per call (a read takes at most 2 GiB). */
const READ_CHUNK = 1 << 30;
/** The sections after the header, in file order. */
const SECTIONS = ['meta', 'recLen', 'arena', 'next', 'prev', 'tKey', 'tHead', 'idBytes', 'idLen', 'idHash', 'idTab'] as const;
type Section = (typeof SECTIONS)[number];

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

type Typed = Float64Array | Uint32Array | Int32Array | Uint8Array;
const bytesOf = (a: Typed) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Bytes of the live records (the arena as written, without dead bytes). */
function liveBytes(img: MemoryTableImage): number {
  let o = 0;
  for (let s = 0; s < img.slots; s++) if (img.ids.len[s] !== FREE) o += img.recLen[s]!;
  return o;
}

/** Writes the live records of `img`, in slot order, through a bounded buffer. */
async function writeLiveArena(f: FileHandle, img: MemoryTableImage): Promise<void> {
  const buf = new Uint8Array(WRITE_CHUNK);
  let n = 0;
  for (let s = 0; s < img.slots; s++) {
    if (img.ids.len[s] === FREE) continue;
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
  const meta = Buffer.from(JSON.stringify({ free: img.free, expiry: img.expiry }));
  const { ids } = img;
  // null: the live arena, written through a bounded buffer.
  const parts = [
    meta,
    bytesOf(img.recLen),
    null,
    bytesOf(img.next),
    bytesOf(img.prev),
    bytesOf(img.tKey),
    bytesOf(img.tHead),
    ids.bytes,
    bytesOf(ids.len),
    bytesOf(ids.hash),
    bytesOf(ids.tab),
  ];
  const sections = parts.map((p) => p?.length ?? liveBytes(img));
  const h: Header = {
    format: FORMAT,
    byteOrder: endianness(),
    keysPerSlot: table.keysPerSlot,
    ...at,
    slots: img.slots,
    used: img.used,
    ids: ids.count,
    sections,
  };
  const header = Buffer.from(JSON.stringify(h));
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

/** Reads `len` bytes at `pos` into the start of `into`. */
async function readInto(f: FileHandle, into: Uint8Array, len: number, pos: number): Promise<void> {
  for (let o = 0; o < len;) {
    const { bytesRead } = await f.read(into, o, Math.min(READ_CHUNK, len - o), pos + o);
    if (bytesRead === 0) throw new Error('checkpoint shorter than its header says');
    o += bytesRead;
  }
}

interface Header extends CheckpointAt {
  format: string;
  byteOrder: string;
  keysPerSlot: number;
  /** Document slots, key table entries and ids in use. */
  slots: number;
  used: number;
  ids: number;
  /** Bytes of each section, in SECTIONS' order. */
  sections: number[];
}

/** The header of the checkpoint in `f` (of `size` bytes) and where its sections start, or null. */
async function readHeader(f: FileHandle, size: number): Promise<{ h: Header; pos: number } | null> {
  if (size < 4) return null;
  const n = Buffer.alloc(4);
  await readInto(f, n, 4, 0);
  const len = n.readUInt32LE(0);
  if (4 + len > size) return null;
  try {
    const b = Buffer.alloc(len);
    await readInto(f, b, len, 4);
    return { h: JSON.parse(b.toString()) as Header, pos: 4 + len };
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

const isPow2 = (n: number) => n >= 1 && (n & (n - 1)) === 0;

/** Whether the header's section lengths are those of its counts (a checkpoint of this format, not garbled). */
function sized(h: Header, size: number, pos: number): boolean {
  if (!Array.isArray(h.sections) || h.sections.length !== SECTIONS.length || pos + h.sections.reduce((a, b) => a + b, 0) !== size) return false;
  const b = (name: Section) => h.sections[SECTIONS.indexOf(name)]!;
  const n = h.slots;
  return (
    b('recLen') === 4 * n && b('next') === 4 * n * h.keysPerSlot && b('prev') === b('next') && isPow2(b('tHead') / 4) && b('tKey') === 2 * b('tHead')
    && b('idLen') === 4 * n && b('idHash') === 4 * n && isPow2(b('idTab') / 4)
  );
}

/** Room to grow beside `n` elements, so that the first adds after open do not copy the arrays. */
const roomFor = (n: number) => Math.max(1024, Math.ceil(n * 1.125));

/** The arrays of the sections, each allocated with room to grow and read straight in, in parallel. */
async function readArrays(f: FileHandle, h: Header, pos: number): Promise<Record<Section, Typed>> {
  const K = h.keysPerSlot;
  const cap = roomFor(h.slots);
  const len = (name: Section) => h.sections[SECTIONS.indexOf(name)]!;
  const alloc: Record<Section, Typed> = {
    meta: new Uint8Array(len('meta')),
    recLen: new Uint32Array(cap),
    arena: new Uint8Array(Math.max(1 << 16, roomFor(len('arena')))),
    next: new Int32Array(cap * K),
    prev: new Int32Array(cap * K),
    tKey: new Float64Array(len('tKey') / 8),
    tHead: new Int32Array(len('tHead') / 4),
    idBytes: new Uint8Array(len('idBytes')),
    idLen: new Int32Array(cap),
    idHash: new Uint32Array(cap),
    idTab: new Int32Array(len('idTab') / 4),
  };
  const reads: Promise<void>[] = [];
  for (const name of SECTIONS) {
    reads.push(readInto(f, bytesOf(alloc[name]), len(name), pos));
    pos += len(name);
  }
  await Promise.all(reads);
  // Slots past the last are free.
  (alloc.idLen as Int32Array).fill(FREE, h.slots);
  return alloc;
}

/** The table image of the arrays read: record offsets from the lengths (the arena was written live, in slot order). */
function imageOf(h: Header, a: Record<Section, Typed>): MemoryTableImage {
  const recLen = a.recLen as Uint32Array;
  const idLen = a.idLen as Int32Array;
  const recOff = new Float64Array(recLen.length);
  let o = 0;
  for (let s = 0; s < h.slots; s++) {
    if (idLen[s] === FREE) continue;
    recOff[s] = o;
    o += recLen[s]!;
  }
  const arenaUsed = h.sections[SECTIONS.indexOf('arena')]!;
  if (o !== arenaUsed) throw new Error(`checkpoint: record lengths add up to ${o} bytes, the arena holds ${arenaUsed}`);
  const meta = JSON.parse(Buffer.from(a.meta).toString()) as Pick<MemoryTableImage, 'free' | 'expiry'>;
  const ids = { bytes: a.idBytes as Uint8Array, len: idLen, hash: a.idHash as Uint32Array, tab: a.idTab as Int32Array, count: h.ids };
  return {
    ...meta,
    slots: h.slots,
    ids,
    recOff,
    recLen,
    arena: a.arena as Uint8Array,
    arenaUsed,
    arenaLive: arenaUsed,
    next: a.next as Int32Array,
    prev: a.prev as Int32Array,
    tKey: a.tKey as Float64Array<ArrayBuffer>,
    tHead: a.tHead as Int32Array<ArrayBuffer>,
    used: h.used,
  };
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
    // Another format (1 and 2 included), byte order or key count, or a log cut shorter: not read at all.
    if (
      h.format !== FORMAT || h.byteOrder !== endianness() || h.keysPerSlot !== Math.max(1, fit.manifest.keysPerDoc) || h.logEnd > fit.logSize
      || h.generation !== fit.generation
    ) return null;
    if (!sized(h, size, got.pos)) return null;
    const img = imageOf(h, await readArrays(f, h, got.pos));
    return {
      table: await MemoryStore.fromImage(fit.manifest, img),
      at: { logEnd: h.logEnd, recordsEnd: h.recordsEnd, applied: h.applied, generation: h.generation },
    };
  } finally {
    await f.close();
  }
}
