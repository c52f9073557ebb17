/**
 * The file store's checkpoint (`DIR/table`): the band table as it was after the log's first
 * `logEnd` bytes, so that open reads the table's arrays and folds only the frames after it, instead
 * of folding the whole log document by document. Written to a temporary file, synced and renamed
 * (a crash leaves the old checkpoint or the new); one that does not fit the log (longer than the
 * log, of another generation of data files, another format, byte order or key count) is ignored and the whole log is folded.
 *   u32 headerBytes · header (JSON: format, byteOrder, keysPerSlot, keyOffset, logEnd, recordsEnd, applied, generation,
 *   slots, used, tableSize, keyCoding, ids, sections) · sections, back to back, in SECTIONS' order: meta (JSON: free slots,
 *   expiries), then the table's typed arrays (their bytes, little-endian as in memory)
 * Format 4 (written): each array is read straight into the array the table keeps (one read per
 * array, the arrays read in parallel), allocated with room to grow; record and id offsets follow
 * from their lengths (arena and id bytes are written live only, in slot order). The key table is
 * written packed and the backward posting links not at all (src/store/file/tablePack.ts): open
 * spreads the one and rebuilds the other in a pass each. Format 3 (read, not written) holds the key
 * table as in memory and the backward links. Why not per-entry work: format 2 (ids as JSON, a Map
 * of them built at open, back links and key table rebuilt by hashing) spent ~2 s at 10^6
 * documents in it, ~20 s at 10^7; rebuilding the key table by hashing from the documents' keys took
 * 1.7–3.6 s at 10^6 (bench/RESULTS.md).
 * @module
 */
import { existsSync } from 'node:fs';
import { endianness } from 'node:os';
import { open as openFile, rename, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { MAX_ARENA, MemoryStore, type MemoryTableImage } from '../memory/store.js';
import type { StoreManifest } from '../types.js';
import { packedSizes, prevFromNext, scanKeyTable, spreadKeyTable, writePackedKeys } from './tablePack.js';
import { writeAt } from './manifest.js';

/** The checkpoint's file name in the store's directory. */
export const CHECKPOINT_FILE = 'table';
/** The format written. Format 3 is read too; formats 1 and 2 (older versions) are ignored by name: the log is folded instead. */
const FORMAT = 'neardup-file-table 4';
const FORMAT_3 = 'neardup-file-table 3';
const FREE = -1;
/** Bytes of arena buffered before each write while a checkpoint is written. */
const WRITE_CHUNK = 16 << 20;
/** Bytes read per call (a read takes at most 2 GiB). */
const READ_CHUNK = 1 << 30;
/** The sections after the header, in file order: format 4 (tBits, tDist, tKeys, tHeads: the packed key table), and format 3. */
const SECTIONS = ['meta', 'recLen', 'arena', 'next', 'tBits', 'tDist', 'tKeys', 'tHeads', 'idBytes', 'idLen', 'idHash', 'idTab'] as const;
const SECTIONS_3 = ['meta', 'recLen', 'arena', 'next', 'prev', 'tKey', 'tHead', 'idBytes', 'idLen', 'idHash', 'idTab'] as const;
type Section = (typeof SECTIONS)[number] | (typeof SECTIONS_3)[number];

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

/** Writes the live records of `img`, in slot order, through `buf`, from byte `pos` of `f`. */
async function writeLiveArena(f: FileHandle, img: MemoryTableImage, buf: Uint8Array, pos: number): Promise<void> {
  let n = 0;
  for (let s = 0; s < img.slots; s++) {
    if (img.ids.len[s] === FREE) continue;
    const rec = img.arena.subarray(img.recOff[s]!, img.recOff[s]! + img.recLen[s]!);
    if (n + rec.length > buf.length) {
      await writeAt(f, buf.subarray(0, n), pos);
      pos += n;
      n = 0;
    }
    if (rec.length > buf.length) {
      await writeAt(f, rec, pos);
      pos += rec.length;
    } else n += (buf.set(rec, n), rec.length);
  }
  await writeAt(f, buf.subarray(0, n), pos);
}

/**
 * A section to write: its bytes as they are, or its length and how it is written (through the
 * buffer, from byte `pos`); no `write`: written with the section before it.
 */
type Part = Uint8Array | { bytes: number; write?: (f: FileHandle, buf: Uint8Array<ArrayBuffer>, pos: number) => Promise<void> };

/** The sections of format 4 for `img`, in SECTIONS' order, its key table's bitmap `bits`, its keys coded as `coding` says. */
function partsOf(img: MemoryTableImage, { bits, coding }: ReturnType<typeof scanKeyTable>): Part[] {
  const { ids, tHead, tKey } = img;
  const [, dist, keys, heads] = packedSizes(tHead.length, img.used, coding);
  // Distances, keys and heads in one pass.
  const packed: Part[] = [{ bytes: dist, write: (f, buf, pos) => writePackedKeys(f, pos, { tKey, tHead, used: img.used, coding }, buf) }, { bytes: keys }, {
    bytes: heads,
  }];
  return [
    Buffer.from(JSON.stringify({ free: img.free, expiry: img.expiry })),
    bytesOf(img.recLen),
    { bytes: liveBytes(img), write: (f, buf, pos) => writeLiveArena(f, img, buf, pos) },
    bytesOf(img.next),
    bits,
    ...packed,
    ids.bytes,
    bytesOf(ids.len),
    bytesOf(ids.hash),
    bytesOf(ids.tab),
  ];
}

/** What the checkpoint of a table is written with: where it stands, and its table records' layout. */
export interface CheckpointOf extends CheckpointAt {
  /** Bytes of each table record before its keys. */
  keyOffset: number;
}

/** Writes the checkpoint of `table`, standing at `at`, into `dir`. */
export async function writeCheckpoint(dir: string, table: MemoryStore, at: CheckpointOf): Promise<void> {
  const img = table.image();
  const scan = scanKeyTable(img.tKey, img.tHead);
  const parts = partsOf(img, scan);
  const h: Header = {
    format: FORMAT,
    byteOrder: endianness(),
    keysPerSlot: table.keysPerSlot,
    ...at,
    slots: img.slots,
    used: img.used,
    tableSize: img.tHead.length,
    keyCoding: scan.coding,
    ids: img.ids.count,
    sections: parts.map((p) => (p instanceof Uint8Array ? p.length : p.bytes)),
  };
  const header = Buffer.from(JSON.stringify(h));
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(header.length, 0);
  const tmp = path.join(dir, `${CHECKPOINT_FILE}.tmp`);
  const f = await openFile(tmp, 'w');
  const buf = new Uint8Array(WRITE_CHUNK);
  try {
    // Every section at its place (the packed key table's three are written together).
    await writeAt(f, Buffer.concat([head, header]), 0);
    let pos = 4 + header.length;
    for (const p of parts) {
      if (p instanceof Uint8Array) await writeAt(f, p, pos);
      else await p.write?.(f, buf, pos);
      pos += p instanceof Uint8Array ? p.length : p.bytes;
    }
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
  /** Format 4: bytes of each table record before its keys. */
  keyOffset?: number;
  /** Document slots, key table entries in use, key table entries (format 4) and ids in use. */
  slots: number;
  used: number;
  tableSize?: number;
  /** Format 4: how the packed keys are written (src/store/file/tablePack.ts). */
  keyCoding?: 'u32' | 'f64';
  ids: number;
  /** Bytes of each section, in SECTIONS' (SECTIONS_3's) order. */
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

const isPow2 = (n: number) => Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;
const sectionsOf = (h: Header): readonly Section[] => (h.format === FORMAT_3 ? SECTIONS_3 : SECTIONS);
const lengthOf = (h: Header, name: Section) => h.sections[sectionsOf(h).indexOf(name)]!;

/** Whether the header's section lengths are those of its counts (a checkpoint of its format, not garbled). */
function sized(h: Header, size: number, pos: number): boolean {
  if (!Array.isArray(h.sections) || h.sections.length !== sectionsOf(h).length || pos + h.sections.reduce((a, b) => a + b, 0) !== size) return false;
  const b = (name: Section) => lengthOf(h, name);
  const n = h.slots;
  const common = b('recLen') === 4 * n && b('next') === 4 * n * h.keysPerSlot && b('idLen') === 4 * n && b('idHash') === 4 * n && isPow2(b('idTab') / 4);
  if (h.format === FORMAT_3) return common && b('prev') === b('next') && isPow2(b('tHead') / 4) && b('tKey') === 2 * b('tHead');
  const t = h.tableSize!;
  if (!common || !isPow2(t) || !(h.used <= t) || (h.keyCoding !== 'u32' && h.keyCoding !== 'f64') || (h.keyCoding === 'u32' && t < 1 << 21)) return false;
  const want = packedSizes(t, h.used, h.keyCoding);
  return (['tBits', 'tDist', 'tKeys', 'tHeads'] as const).every((name, i) => b(name) === want[i]);
}

/** Room to grow beside `n` elements, so that the first adds after open do not copy the arrays. */
const roomFor = (n: number) => Math.max(1024, Math.ceil(n * 1.125));

/** The arrays a checkpoint's sections are read into, each allocated with room to grow. */
interface Arrays {
  meta: Uint8Array;
  recLen: Uint32Array;
  arena: Uint8Array;
  next: Int32Array;
  prev: Int32Array;
  tKey: Float64Array<ArrayBuffer>;
  tHead: Int32Array<ArrayBuffer>;
  /** Format 4: the key table's bitmap of occupied entries, and each coded key's distance from its home. */
  tBits: Uint8Array;
  tDist: Uint8Array;
  idBytes: Uint8Array;
  idLen: Int32Array;
  idHash: Uint32Array;
  idTab: Int32Array;
}

/** The arrays of the sections, read straight in, in parallel (format 4's packed keys and heads into the tail of the key table's arrays). */
async function readArrays(f: FileHandle, h: Header, pos: number): Promise<Arrays> {
  const K = h.keysPerSlot;
  const cap = roomFor(h.slots);
  const len = (name: Section) => lengthOf(h, name);
  const v3 = h.format === FORMAT_3;
  const tableSize = v3 ? len('tHead') / 4 : h.tableSize!;
  const a: Arrays = {
    meta: new Uint8Array(len('meta')),
    recLen: new Uint32Array(cap),
    arena: new Uint8Array(Math.min(MAX_ARENA, Math.max(1 << 16, roomFor(len('arena'))))),
    next: new Int32Array(cap * K),
    prev: new Int32Array(cap * K),
    tKey: new Float64Array(tableSize),
    tHead: new Int32Array(tableSize),
    tBits: new Uint8Array(v3 ? 0 : len('tBits')),
    tDist: new Uint8Array(v3 ? 0 : len('tDist')),
    idBytes: new Uint8Array(len('idBytes')),
    idLen: new Int32Array(cap),
    idHash: new Uint32Array(cap),
    idTab: new Int32Array(len('idTab') / 4),
  };
  const into: Record<Section, Uint8Array> = {
    meta: a.meta,
    recLen: bytesOf(a.recLen),
    arena: a.arena,
    next: bytesOf(a.next),
    prev: bytesOf(a.prev),
    tKey: bytesOf(a.tKey),
    tHead: bytesOf(a.tHead),
    tBits: a.tBits,
    tDist: a.tDist,
    // The packed keys at the end of the key array (4 or 8 bytes each), the heads at the end of theirs: spread in place.
    tKeys: new Uint8Array(a.tKey.buffer, 8 * tableSize - (v3 ? 0 : len('tKeys')), v3 ? 0 : len('tKeys')),
    tHeads: bytesOf(a.tHead.subarray(tableSize - h.used)),
    idBytes: a.idBytes,
    idLen: bytesOf(a.idLen),
    idHash: bytesOf(a.idHash),
    idTab: bytesOf(a.idTab),
  };
  const reads: Promise<void>[] = [];
  for (const name of sectionsOf(h)) {
    reads.push(readInto(f, into[name], len(name), pos));
    pos += len(name);
  }
  await Promise.all(reads);
  // Slots past the last are free.
  a.idLen.fill(FREE, h.slots);
  return a;
}

/** Format 4's key table spread and backward links rebuilt (src/store/file/tablePack.ts); false when they do not hold together. */
function rebuild(h: Header, a: Arrays): boolean {
  if (!spreadKeyTable({ bits: a.tBits, tKey: a.tKey, tHead: a.tHead, used: h.used, dist: h.keyCoding === 'u32' ? a.tDist : undefined })) return false;
  a.prev.fill(-1);
  return prevFromNext({ slots: h.slots, keysPerSlot: h.keysPerSlot, keyOffset: h.keyOffset!, recLen: a.recLen, idLen: a.idLen, next: a.next }, a.prev);
}

/** The table image of the arrays read: record offsets from the lengths (the arena was written live, in slot order). */
function imageOf(h: Header, a: Arrays): MemoryTableImage {
  const { recLen, idLen } = a;
  const recOff = new Float64Array(recLen.length);
  let o = 0;
  for (let s = 0; s < h.slots; s++) {
    if (idLen[s] === FREE) continue;
    recOff[s] = o;
    o += recLen[s]!;
  }
  const arenaUsed = lengthOf(h, 'arena');
  if (o !== arenaUsed) throw new Error(`checkpoint: record lengths add up to ${o} bytes, the arena holds ${arenaUsed}`);
  const meta = JSON.parse(Buffer.from(a.meta).toString()) as Pick<MemoryTableImage, 'free' | 'expiry'>;
  const ids = { bytes: a.idBytes, len: idLen, hash: a.idHash, tab: a.idTab, count: h.ids };
  return {
    ...meta,
    slots: h.slots,
    ids,
    recOff,
    recLen,
    arena: a.arena,
    arenaUsed,
    arenaLive: arenaUsed,
    next: a.next,
    prev: a.prev,
    tKey: a.tKey,
    tHead: a.tHead,
    used: h.used,
  };
}

/** Whether a checkpoint with header `h` may be read against `fit` (else the log is folded). */
function fits(h: Header, fit: CheckpointFit): boolean {
  // Another format (1 and 2 included), byte order, key count or record layout, or a log cut shorter: not read at all.
  return (h.format === FORMAT || h.format === FORMAT_3) && (h.format === FORMAT_3 || h.keyOffset === fit.keyOffset) && h.byteOrder === endianness()
    && h.keysPerSlot === Math.max(1, fit.manifest.keysPerDoc) && h.logEnd <= fit.logSize && h.generation === fit.generation;
}

/** The checkpoint in `dir` as a table, if there is one of a format read here that fits; else null (fold the log). */
export async function readCheckpoint(dir: string, fit: CheckpointFit): Promise<{ table: MemoryStore; at: CheckpointAt } | null> {
  const file = path.join(dir, CHECKPOINT_FILE);
  if (!existsSync(file)) return null;
  const f = await openFile(file, 'r');
  try {
    const size = (await f.stat()).size;
    const got = await readHeader(f, size);
    if (!got || !fits(got.h, fit) || !sized(got.h, size, got.pos)) return null;
    const { h } = got;
    const arrays = await readArrays(f, h, got.pos);
    if (h.format !== FORMAT_3 && !rebuild(h, arrays)) return null;
    return {
      table: await MemoryStore.fromImage(fit.manifest, imageOf(h, arrays)),
      at: { logEnd: h.logEnd, recordsEnd: h.recordsEnd, applied: h.applied, generation: h.generation },
    };
  } finally {
    await f.close();
  }
}
