/**
 * The file store's checkpoint (`DIR/table`): the band table as it was after the log's first
 * `logEnd` bytes, so that open reads the table's arrays and folds only the frames after it, instead
 * of folding the whole log document by document. Written to a temporary file, synced and renamed
 * (a crash leaves the old checkpoint or the new); one that does not fit the log (longer than the
 * log, of another generation of data files, another format, byte order or key count, or whose log's
 * last 4 KiB are not those it was written after: `logTail`) is ignored and the whole log is folded.
 *   u32 headerBytes · header (JSON: format, byteOrder, keysPerSlot, keyOffset, logEnd, recordsEnd, applied, generation,
 *   logTail, slots, used, tableSize, keyCoding, ids, sections) · sections, back to back, in SECTIONS' order: meta (JSON:
 *   free slots, expiries), then the table's typed arrays (their bytes, little-endian as in memory)
 * Format 7 (written; 6 read): the table keeps no document's keys (src/store/log/replica.ts),
 * so its records are the records' places, each followed by the screen of the document's set
 * (src/similarity/setScreen.ts) when it has one, written live in slot order. Each other array is read
 * straight into the array the table keeps (one read per array, the arrays read in parallel),
 * allocated with room to grow. The key table is written packed and the forward posting links not at
 * all (src/store/file/tablePack.ts): open spreads the one and rebuilds the other in a pass each, each
 * in a worker thread of its own from 2^18 documents on (src/store/file/rebuildWorker.ts). Formats 1
 * to 5 (earlier versions) are ignored by name: the log is folded once and a format 6 checkpoint
 * written at the next close. Why no per-entry work: format 2 (a Map of ids built at open, key table
 * rebuilt by hashing) spent ~20 s at 10^7 documents, and format 5's walk of the log for the
 * documents' keys most of another 8 s (bench/RESULTS.md).
 * Why this file is long: it orders its reads for open's time (the rebuild of each half starts as
 * soon as its sections are in) and checks every count of the header against the sections.
 * @module
 */
import { existsSync } from 'node:fs';
import { endianness } from 'node:os';
import { open as openFile, rename, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { MAX_ARENA, MAX_POSTINGS, MemoryStore, type MemoryTableImage } from '../memory/store.js';
import type { StoreManifest } from '../types.js';
import { Worker } from 'node:worker_threads';
import { firstCoding, packedSizes, runJob, writePackedKeys, type RebuildJob } from './tablePack.js';
import { PendingWrites, readFull, writeAt } from './manifest.js';
import { faultHooks } from '../../common/faults.js';
import { toThread } from '../../common/sharedViews.js';
import { crc32 } from 'node:zlib';

/** The checkpoint's file name in the store's directory. */
export const CHECKPOINT_FILE = 'table';
/** The format written; 6 is read too (no screens: every table record is its locator alone); any other (1 to 5: older versions) is ignored by name, and the log is folded instead. */
const FORMAT = 'neardup-file-table 7';
const FORMAT_6 = 'neardup-file-table 6';
const FREE = -1;
/** Bytes of arena buffered before each write while a checkpoint is written. */
const WRITE_CHUNK = 16 << 20;
/** Documents from which the rebuild runs in worker threads (below, starting a worker costs more than it saves). */
const WORKER_MIN_SLOTS = 1 << 18;
/** Bytes read per call, the calls in parallel. */
const READ_CHUNK = 32 << 20;
/** The sections after the header, in file order (tBits, tDist, tKeys, tHeads: the packed key table). */
const SECTIONS = ['meta', 'recLen', 'arena', 'prev', 'tBits', 'tDist', 'tKeys', 'tHeads', 'idBytes', 'idLen', 'idHash', 'idTab'] as const;
type Section = (typeof SECTIONS)[number];
/** Log bytes before `logEnd` whose checksum a checkpoint keeps. */
const TAIL = 4096;

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

/** Writes each live record of `img` (its place in the records file), in slot order, through `buf`, from byte `pos` of `f`. */
async function writeLiveArena(f: FileHandle, img: MemoryTableImage, buf: Uint8Array, pos: number): Promise<void> {
  // Two halves of `buf`: one is filled here while the other's write runs on libuv's threads.
  const size = buf.length >> 1;
  const halves = [buf.subarray(0, size), buf.subarray(size, 2 * size)];
  const written: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
  const writes = new PendingWrites();
  let half = 0;
  let n = 0;
  /** Starts the write of the half filled; returns the write of the other, awaited before it is filled again. */
  const flush = (): Promise<void> => {
    written[half] = writes.add(writeAt(f, halves[half]!.subarray(0, n), pos));
    pos += n;
    n = 0;
    half ^= 1;
    return written[half]!;
  };
  try {
    for (let s = 0; s < img.slots; s++) {
      if (img.ids.len[s] === FREE) continue;
      const rec = img.arena.subarray(img.recOff[s]!, img.recOff[s]! + img.recLen[s]!);
      if (n + rec.length > size) await flush();
      if (rec.length > size) {
        await writeAt(f, rec, pos);
        pos += rec.length;
      } else n += (halves[half]!.set(rec, n), rec.length);
    }
    await flush();
  } finally {
    await writes.done();
  }
}

/** Bytes of the live records. */
function liveBytes(img: MemoryTableImage): number {
  let o = 0;
  for (let s = 0; s < img.slots; s++) if (img.ids.len[s] !== FREE) o += img.recLen[s]!;
  return o;
}

/** The checksum of the log's last bytes before `logEnd` (at most 4 KiB), which a checkpoint keeps. */
export async function logTail(log: FileHandle, logEnd: number): Promise<number> {
  const n = Math.min(TAIL, logEnd);
  const b = Buffer.alloc(n);
  return (await readFull(log, b, logEnd - n)) === n ? crc32(b) : -1;
}

/**
 * A section to write: its bytes as they are, or its length and how it is written (through the
 * buffer, from byte `pos`; false: the file must be written again, see {@link writeCheckpoint}); no
 * `write`: written with a neighbour (the bitmap by the packed key table's pass, which fills it).
 */
type Part = Uint8Array | { bytes: number; write?: (f: FileHandle, buf: Uint8Array<ArrayBuffer>, pos: number) => Promise<unknown> };

/** The sections for `img`, in SECTIONS' order, its keys coded as `coding` says. */
function partsOf(img: MemoryTableImage, coding: 'u32' | 'f64'): Part[] {
  const { ids, tHead, tKey } = img;
  const [tBits, dist, keys, heads] = packedSizes(tHead.length, img.used, coding);
  const bits = new Uint8Array(tBits);
  // Distances, keys and heads in one pass that fills the bitmap, written then before them.
  const packKeys = async (f: FileHandle, buf: Uint8Array<ArrayBuffer>, pos: number) =>
    (await writePackedKeys(f, pos, { tKey, tHead, used: img.used, coding, bits }, buf)) && (await writeAt(f, bits, pos - tBits), true);
  return [
    Buffer.from(JSON.stringify({ free: img.free, expiry: img.expiry })),
    bytesOf(img.recLen),
    { bytes: liveBytes(img), write: (f, buf, pos) => writeLiveArena(f, img, buf, pos) },
    bytesOf(img.prev),
    { bytes: tBits },
    { bytes: dist, write: packKeys },
    { bytes: keys },
    { bytes: heads },
    ids.bytes,
    bytesOf(ids.len),
    bytesOf(ids.hash),
    bytesOf(ids.tab),
  ];
}

/** What the checkpoint of a table is written with: where it stands, and its table records' layout. */
export interface CheckpointOf extends CheckpointAt {
  /** Bytes of each table record (the place of the document's record). */
  keyOffset: number;
  /** The checksum of the log's last bytes before `logEnd` ({@link logTail}). */
  logTail: number;
}

/**
 * Writes the checkpoint of `table`, standing at `at`, into `dir`, synced and in place: the
 * {@link writeCheckpointFile} then its {@link CheckpointFile.commit}.
 */
export async function writeCheckpoint(dir: string, table: MemoryStore, at: CheckpointOf): Promise<void> {
  await (await writeCheckpointFile(dir, table, at)).commit();
}

/** A checkpoint written to its temporary file, not yet on disk for sure nor in place. */
export interface CheckpointFile {
  /** Syncs the file, renames it over the checkpoint and syncs the directory. */
  commit(): Promise<void>;
}

/**
 * Writes the checkpoint of `table`, standing at `at`, to a temporary file in `dir` (into the page
 * cache, unsynced): keys coded in 32 bits when the table is large enough; a key found too far from
 * its home on the way (never seen yet) has the file written again with the keys as they are. No
 * pass over the table before the write (a scan for the bitmap and the distances took 4.9 s of a
 * 22 s checkpoint at 2^29 entries). The table may change once this resolves: the file holds the
 * table as it was. Its commit, the disk's part of the work, needs no table, so the file store runs
 * it outside its writes.
 */
export async function writeCheckpointFile(dir: string, table: MemoryStore, at: CheckpointOf): Promise<CheckpointFile> {
  const img = table.image();
  const tmp = path.join(dir, `${CHECKPOINT_FILE}.tmp`);
  const o = { img, keysPerSlot: table.keysPerSlot, at };
  if (!(await writeTable(tmp, { ...o, coding: firstCoding(img.tHead.length) }))) await writeTable(tmp, { ...o, coding: 'f64' });
  return {
    commit: async () => {
      // fsync through a new descriptor flushes the file's pages all the same (they belong to the file).
      const f = await openFile(tmp, 'r');
      await f.datasync().finally(() => f.close());
      await faultHooks().fileStoreCheckpointCommit?.();
      await rename(tmp, path.join(dir, CHECKPOINT_FILE));
      const d = await openFile(dir, 'r');
      await d.sync().finally(() => d.close());
    },
  };
}

/** Writes the table file `tmp` (unsynced); false when a section's write asks for another coding. */
async function writeTable(tmp: string, o: { img: MemoryTableImage; keysPerSlot: number; at: CheckpointOf; coding: 'u32' | 'f64' }): Promise<boolean> {
  const { img, at } = o;
  const parts = partsOf(img, o.coding);
  const h: Header = {
    format: FORMAT,
    byteOrder: endianness(),
    keysPerSlot: o.keysPerSlot,
    ...at,
    slots: img.slots,
    used: img.used,
    tableSize: img.tHead.length,
    keyCoding: o.coding,
    ids: img.ids.count,
    sections: parts.map((p) => (p instanceof Uint8Array ? p.length : p.bytes)),
  };
  const header = Buffer.from(JSON.stringify(h));
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(header.length, 0);
  const f = await openFile(tmp, 'w');
  const buf = new Uint8Array(faultHooks().fileStoreCheckpointChunk?.() ?? WRITE_CHUNK);
  // The arrays written as they are go on libuv's threads while the live arena and the key table
  // are packed here (each write its own place).
  const raw = new PendingWrites();
  try {
    // Every section at its place (the packed key table's three and its bitmap are written together).
    await writeAt(f, Buffer.concat([head, header]), 0);
    let pos = 4 + header.length;
    for (const p of parts) {
      if (p instanceof Uint8Array) void raw.add(writeAt(f, p, pos));
      else if ((await p.write?.(f, buf, pos)) === false) return false;
      pos += p instanceof Uint8Array ? p.length : p.bytes;
    }
    return true;
  } finally {
    await raw.done().finally(() => f.close());
  }
}

/** Reads `len` bytes at `pos` into the start of `into`. */
async function readInto(f: FileHandle, into: Uint8Array, len: number, pos: number): Promise<void> {
  // In pieces read in parallel: a large section read by one thread kept the others idle.
  const pieces: Promise<void>[] = [];
  for (let o = 0; o < len; o += READ_CHUNK) pieces.push(readPiece(f, into.subarray(o, Math.min(len, o + READ_CHUNK)), pos + o));
  await Promise.all(pieces);
}

async function readPiece(f: FileHandle, into: Uint8Array, pos: number): Promise<void> {
  if ((await readFull(f, into, pos)) < into.length) throw new Error('checkpoint shorter than its header says');
}

interface Header extends CheckpointAt {
  format: string;
  byteOrder: string;
  keysPerSlot: number;
  /** Bytes of each table record (the place of the document's record). */
  keyOffset: number;
  /** The checksum of the log's last bytes before `logEnd` ({@link logTail}). */
  logTail: number;
  /** Document slots, key table entries in use, key table entries and ids in use. */
  slots: number;
  used: number;
  tableSize: number;
  /** How the packed keys are written (src/store/file/tablePack.ts). */
  keyCoding: 'u32' | 'f64';
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
  /** Bytes of each table record. */
  keyOffset: number;
  /** The log (its last bytes before `logEnd` must be those the checkpoint was written after). */
  log: FileHandle;
}

const isPow2 = (n: number) => Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;
const lengthOf = (h: Header, name: Section) => h.sections[SECTIONS.indexOf(name)]!;

/** Whether the header's section lengths are those of its counts (a checkpoint of its format, not garbled). */
function sized(h: Header, size: number, pos: number): boolean {
  if (!Array.isArray(h.sections) || h.sections.length !== SECTIONS.length || pos + h.sections.reduce((a, b) => a + b, 0) !== size) return false;
  const b = (name: Section) => lengthOf(h, name);
  const n = h.slots;
  const t = h.tableSize;
  if (b('recLen') !== 4 * n || b('prev') !== 4 * n * h.keysPerSlot || b('idLen') !== 4 * n || b('idHash') !== 4 * n || !isPow2(b('idTab') / 4)) return false;
  // Format 7's table records may carry a screen after their `keyOffset` bytes; their sum is checked against recLen's.
  const arena = b('arena');
  if ((h.format === FORMAT_6 ? arena !== h.keyOffset * h.ids : arena < h.keyOffset * h.ids) || typeof h.logTail !== 'number') return false;
  if (!isPow2(t) || !(h.used <= t) || (h.keyCoding !== 'u32' && h.keyCoding !== 'f64') || (h.keyCoding === 'u32' && t < 1 << 21)) return false;
  const want = packedSizes(t, h.used, h.keyCoding);
  return (['tBits', 'tDist', 'tKeys', 'tHeads'] as const).every((name, i) => b(name) === want[i]);
}

/** Room to grow beside `n` elements, so that the first adds after open do not copy the arrays. */
const roomFor = (n: number) => Math.max(1024, Math.ceil(n * 1.125));
/** An arena for `n` bytes of records, with room to grow. */
const arenaFor = (n: number) => new Uint8Array(Math.min(MAX_ARENA, Math.max(1 << 16, roomFor(n))));

/**
 * The documents the log's tail after the checkpoint is expected to add, at the log bytes a slot
 * took before it (a hint). Why: the arrays are read with room for them, so that a restart's fold
 * does not outgrow and copy them (1.4 s of a 300k-document fold at 2.3M, bench/RESULTS.md).
 */
function tailSlots(h: Header, logSize: number): number {
  const perSlot = h.logEnd / Math.max(1, h.slots);
  return perSlot > 0 ? Math.ceil(Math.max(0, logSize - h.logEnd) / perSlot) : 0;
}

/** The arrays a checkpoint's sections are read into, each allocated with room to grow. */
interface Arrays {
  meta: Uint8Array;
  recLen: Uint32Array;
  arena: Uint8Array;
  next: Int32Array;
  prev: Int32Array;
  tKey: Float64Array<ArrayBuffer>;
  tHead: Int32Array<ArrayBuffer>;
  /** The key table's bitmap of occupied entries, and each coded key's distance from its home. */
  tBits: Uint8Array;
  tDist: Uint8Array;
  idBytes: Uint8Array;
  idLen: Int32Array;
  idHash: Uint32Array;
  idTab: Int32Array;
}

/** Each section's read, by name: done once its bytes are in. */
type Reads = (names: readonly Section[]) => Promise<unknown>;

/** The sections the rebuild reads: those of the key table, and the backward links. */
const KEY_SECTIONS = ['tBits', 'tDist', 'tKeys', 'tHeads'] as const;
const LINK_SECTIONS = ['prev'] as const;
const REBUILT = new Set<Section>([...KEY_SECTIONS, ...LINK_SECTIONS]);

/**
 * The arrays of the sections, read straight in, in parallel (the packed keys and heads into the
 * tail of the key table's arrays): returned once all but the rebuild's are in; `rest(names)` is
 * done when those sections are in too (each half of the rebuild starts as soon as its are).
 */
async function readArrays(f: FileHandle, h: Header, at: { pos: number; logSize: number }): Promise<{ a: Arrays; rest: Reads }> {
  let { pos } = at;
  const K = h.keysPerSlot;
  const tail = tailSlots(h, at.logSize);
  const cap = roomFor(Math.min(h.slots + tail, Math.floor(MAX_POSTINGS / K)));
  const len = (name: Section) => lengthOf(h, name);
  const tableSize = h.tableSize;
  // The arrays the rebuild workers read or write, shared with them.
  const buf = (bytes: number) => new SharedArrayBuffer(bytes) as unknown as ArrayBuffer;
  const a: Arrays = {
    meta: new Uint8Array(len('meta')),
    recLen: new Uint32Array(buf(4 * cap)),
    arena: arenaFor(len('arena') + Math.ceil((tail * len('arena')) / Math.max(1, h.slots))),
    next: new Int32Array(buf(4 * cap * K)),
    prev: new Int32Array(buf(4 * cap * K)),
    tKey: new Float64Array(buf(8 * tableSize)),
    tHead: new Int32Array(buf(4 * tableSize)),
    tBits: new Uint8Array(buf(len('tBits'))),
    tDist: new Uint8Array(buf(len('tDist'))),
    idBytes: new Uint8Array(len('idBytes')),
    idLen: new Int32Array(cap),
    idHash: new Uint32Array(cap),
    idTab: new Int32Array(len('idTab') / 4),
  };
  const into: Record<Section, Uint8Array> = {
    meta: a.meta,
    recLen: bytesOf(a.recLen),
    arena: a.arena,
    prev: bytesOf(a.prev),
    tBits: a.tBits,
    tDist: a.tDist,
    // The packed keys at the end of the key array (4 or 8 bytes each), the heads at the end of theirs: spread in place.
    tKeys: new Uint8Array(a.tKey.buffer, 8 * tableSize - len('tKeys'), len('tKeys')),
    tHeads: bytesOf(a.tHead.subarray(tableSize - h.used)),
    idBytes: a.idBytes,
    idLen: bytesOf(a.idLen),
    idHash: bytesOf(a.idHash),
    idTab: bytesOf(a.idTab),
  };
  const first: Promise<void>[] = [];
  const later = new Map<Section, Promise<void>>();
  for (const name of SECTIONS) {
    const p = readInto(f, into[name], len(name), pos);
    pos += len(name);
    if (!REBUILT.has(name)) first.push(p);
    else {
      p.catch(() => undefined);
      later.set(name, p);
    }
  }
  await Promise.all(first);
  // Slots past the last are free.
  a.idLen.fill(FREE, h.slots);
  return { a, rest: (names) => Promise.all(names.map((n) => later.get(n) ?? Promise.resolve())) };
}

/**
 * The key table spread and the forward links rebuilt (src/store/file/tablePack.ts), each once the
 * sections it reads are in; false when they do not hold together. From 2^18 documents each runs in
 * a worker thread of its own, on the shared arrays, beside the other.
 */
function rebuild(h: Header, a: Arrays, rest: Reads): Promise<boolean> {
  const postings = h.slots * h.keysPerSlot;
  const spread: RebuildJob = {
    kind: 'spread',
    keys: { bits: a.tBits, tKey: a.tKey, tHead: a.tHead, used: h.used, dist: h.keyCoding === 'u32' ? a.tDist : undefined },
  };
  const links: RebuildJob = { kind: 'next', postings: { count: postings, prev: a.prev }, next: a.next };
  if (h.slots < (faultHooks().fileStoreWorkersFrom?.() ?? WORKER_MIN_SLOTS))
    return rest([...KEY_SECTIONS, ...LINK_SECTIONS]).then(() => runJob(spread) && runJob(links));
  const done = [rest(KEY_SECTIONS).then(() => rebuildInWorker(spread)), rest(LINK_SECTIONS).then(() => rebuildInWorker(links))];
  return Promise.all(done).then((oks) => oks.every(Boolean));
}

/**
 * Runs `job` in a worker thread (src/store/file/rebuildWorker.ts); true when what it read holds
 * together. A worker that never started its job (its script did not load, or no thread could be
 * made) left the arrays untouched: the job runs here instead, slower, rather than the whole log
 * folded (minutes at 10^7 documents, and nothing said). One that failed after starting may have
 * changed them half-way: false, and the log is folded.
 */
export function rebuildInWorker(job: RebuildJob): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let started = false;
    let settled = false;
    const settle = (ok: () => boolean) => {
      if (settled) return;
      settled = true;
      resolve(ok());
    };
    const script = faultHooks().fileStoreRebuildScript?.() ?? new URL('./rebuildWorker.js', import.meta.url);
    let w: Worker;
    try {
      w = new Worker(script, { workerData: toThread(job) });
    } catch {
      return settle(() => runJob(job));
    }
    w.on('message', (m: unknown) => {
      if (m === 'started') started = true;
      else settle(() => m === true);
    });
    const failed = () => settle(() => (started ? false : runJob(job)));
    w.once('error', failed);
    w.once('exit', failed);
  });
}

/** The table image of the arrays read: record offsets from the lengths (the arena was written live, in slot order). */
function imageOf(h: Header, a: Arrays): MemoryTableImage | null {
  const { recLen, idLen } = a;
  const recOff = new Float64Array(recLen.length);
  let o = 0;
  for (let s = 0; s < h.slots; s++) {
    if (idLen[s] === FREE) continue;
    if (recLen[s]! < h.keyOffset) return null;
    recOff[s] = o;
    o += recLen[s]!;
  }
  const arenaUsed = lengthOf(h, 'arena');
  if (o !== arenaUsed) return null;
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
async function fits(h: Header, fit: CheckpointFit): Promise<boolean> {
  // Another format (1 to 5 included), byte order, key count or record layout, a log cut shorter, or another log: not read at all.
  return (h.format === FORMAT || h.format === FORMAT_6) && h.keyOffset === fit.keyOffset && h.byteOrder === endianness()
    && h.keysPerSlot === Math.max(1, fit.manifest.keysPerDoc) && h.logEnd <= fit.logSize && h.generation === fit.generation
    && (await logTail(fit.log, h.logEnd)) === h.logTail;
}

/**
 * A checkpoint of this generation covers the log's first `logEnd` bytes, written and synced before
 * it: a log shorter than that lost acknowledged writes, which no crash does. Folding what is left
 * would open a smaller store as if whole, so the open fails, saying what to do.
 */
function refuseShortLog(h: Header, fit: CheckpointFit, dir: string): void {
  if (h.generation !== fit.generation || !(typeof h.logEnd === 'number' && h.logEnd > fit.logSize)) return;
  throw new Error(
    `file store ${dir} is damaged: its log has ${fit.logSize} bytes, but its checkpoint covers ${h.logEnd} bytes written before it; restore a backup (if this directory is a copy taken while the store was in use, deleting its ${CHECKPOINT_FILE} file opens the log as it was copied)`,
  );
}

/** The checkpoint in `dir` as a table, if there is one of the format read here that fits; else null (fold the log). */
export async function readCheckpoint(dir: string, fit: CheckpointFit): Promise<{ table: MemoryStore; at: CheckpointAt } | null> {
  const file = path.join(dir, CHECKPOINT_FILE);
  if (!existsSync(file)) return null;
  const f = await openFile(file, 'r');
  try {
    const size = (await f.stat()).size;
    const got = await readHeader(f, size);
    if (!got) return null;
    refuseShortLog(got.h, fit, dir);
    if (!(await fits(got.h, fit)) || !sized(got.h, size, got.pos)) return null;
    const { h } = got;
    const { a, rest } = await readArrays(f, h, { pos: got.pos, logSize: fit.logSize });
    const img = imageOf(h, a);
    if (!img || !(await rebuild(h, a, rest))) return null;
    const table = await MemoryStore.fromImage(fit.manifest, img);
    // Sampled documents' links must hold in the rebuilt table; else the whole log is folded (slow, right).
    if (!table.spotCheck()) return null;
    return { table, at: { logEnd: h.logEnd, recordsEnd: h.recordsEnd, applied: h.applied, generation: h.generation } };
  } finally {
    await f.close();
  }
}
