/**
 * Checkpoint format 5 (src/store/file/checkpoint.ts) keeps no band keys: every live document's
 * keys are those of its last put in the log, which the store keeps anyway. Open reads the log's
 * first `logEnd` bytes in order (one sequential read, the next chunk read while this one is
 * walked), finds each put document's slot by its id in the id index read from the checkpoint (its
 * hash and bytes, no strings made), and copies the keys into the slot's table record; a later put of
 * the same id overwrites them. Why: the keys were on disk twice, 256 B per document with 32 keys.
 * A log that is not the one the checkpoint was written against is detected, never read as keys:
 * every frame's length and checksum must hold, the frames must end exactly at `logEnd`, number
 * `frames` and refer to `recordsEnd` bytes of records, the log's last bytes must have the checksum the checkpoint keeps, and every live slot's
 * last put must carry as many keys as its record has room for. Any of these failing: the caller
 * folds the whole log instead.
 * @module
 */
import type { FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { hashBytes } from '../memory/idTable.js';
import { FRAME_HEADER, FRAME_VERSION } from './frames.js';
import { readFull } from './manifest.js';

/** Log bytes read at a time. */
const CHUNK = 32 << 20;
/** Chunks read ahead of the walk (they are read while the caller rebuilds the rest of the table). */
const AHEAD = 8;
/** Log bytes before `logEnd` whose checksum a checkpoint keeps. */
const TAIL = 4096;
const FREE = -1;
const EMPTY = -1;
const TWO32 = 4294967296;
/** Entry op byte of a put, and of a remove (src/store/log/entry.ts). */
const OP_PUT = 1;
const OP_REMOVE = 2;
/** First byte of an id the id index keeps as UTF-16 (src/store/memory/idTable.ts). */
const UTF16 = 0xff;

/** Reads `len` bytes of `f` at `pos` into `b` (from its start); the bytes read (fewer where the file ends). */
async function readAt(f: FileHandle, pos: number, len: number, b: Buffer = Buffer.allocUnsafe(len)): Promise<Buffer> {
  return b.subarray(0, await readFull(f, b.subarray(0, len), pos));
}

/** The checksum of the log's last bytes before `logEnd` (at most 4 KiB), which a checkpoint keeps. */
export async function logTail(log: FileHandle, logEnd: number): Promise<number> {
  const n = Math.min(TAIL, logEnd);
  return crc32(await readAt(log, logEnd - n, n));
}

/** Where the keys go: the table's arrays as read from a checkpoint, the log and what it must be. */
export interface KeyFill {
  log: FileHandle;
  /** Log bytes, frames, records file bytes referred to, and the checksum of the last log bytes the checkpoint was written against. */
  logEnd: number;
  frames: number;
  recordsEnd: number;
  tail: number;
  slots: number;
  /** Bytes of each table record before its keys. */
  keyOffset: number;
  recLen: Uint32Array;
  recOff: Float64Array;
  /** The arena the records are placed in (their first `keyOffset` bytes from `locs`, then the keys). */
  arena: Uint8Array;
  /** Each live record's first `keyOffset` bytes, in slot order. */
  locs: Uint8Array;
  /** The id index's arrays (src/store/memory/idTable.ts). */
  ids: { bytes: Uint8Array; len: Int32Array; hash: Uint32Array; tab: Int32Array };
}

/**
 * The log's first `end` bytes, read in chunks, in order, up to 8 chunks ahead of the walk: started
 * before the checkpoint's sections are read, so that the log is read while the table is made. The
 * chunks' buffers are used again once released: a new 32 MB buffer per chunk cost the walk ~1.5 s
 * of garbage collection and its pages' first mapping at 10^7 documents.
 */
export class LogReader {
  private readonly reads: Promise<Buffer>[] = [];
  private readonly free: Buffer[] = [];
  private pos = 0;
  private readonly size: number;

  constructor(
    private readonly log: FileHandle,
    private readonly end: number,
  ) {
    this.size = Math.min(CHUNK, end);
    this.ahead();
  }

  private ahead(): void {
    for (; this.reads.length < AHEAD && this.pos < this.end; this.pos += CHUNK) {
      const buf = this.free.pop() ?? Buffer.allocUnsafeSlow(this.size);
      this.reads.push(readAt(this.log, this.pos, Math.min(CHUNK, this.end - this.pos), buf));
    }
  }

  /** The next chunk, or null after the last; {@link release} it once its bytes are no longer used. */
  async next(): Promise<Buffer | null> {
    const r = this.reads.shift();
    if (!r) return null;
    const b = await r;
    this.ahead();
    return b;
  }

  /** Gives a chunk's buffer back, to read a later chunk into. */
  release(chunk: Buffer): void {
    this.free.push(Buffer.from(chunk.buffer, 0, this.size));
  }

  /** Waits for the reads under way and reads no more. */
  async stop(): Promise<void> {
    this.pos = this.end;
    await Promise.allSettled(this.reads.splice(0));
  }
}

/** Fills the keys of every live slot of `t` from the log (its first `t.logEnd` bytes, read by `reader`); false when the log does not fit the checkpoint. */
export async function keysFromLog(t: KeyFill, reader: LogReader): Promise<boolean> {
  if (t.logEnd === 0 ? t.frames !== 0 : (await logTail(t.log, t.logEnd)) !== t.tail) return false;
  const w = new Walk(t);
  let rest: Buffer | null = Buffer.alloc(0);
  for (let chunk = await reader.next(); chunk && rest; chunk = await reader.next()) {
    // The frame the chunk ends inside is copied out before its buffer is read into again.
    rest = chunk.length === 0 ? null : walkChunk(w, rest, chunk);
    if (rest) rest = Buffer.from(rest);
    reader.release(chunk);
  }
  return rest?.length === 0 && w.count === t.frames && w.recordsEnd === t.recordsEnd && w.allFilled();
}

/**
 * Walks the frames of `chunk`, the first one begun by `rest` (the end of the chunk before);
 * returns the bytes of the frame it ends inside, or null for a bad frame. Only a frame across the
 * two chunks is copied (copying whole chunks together cost ~0.2 s at 10^6 documents).
 */
function walkChunk(w: Walk, rest: Buffer, chunk: Buffer): Buffer | null {
  let o = 0;
  if (rest.length > 0) {
    const head = rest.length >= FRAME_HEADER ? rest : Buffer.concat([rest, chunk.subarray(0, FRAME_HEADER - rest.length)]);
    if (head.length < FRAME_HEADER) return head;
    const total = FRAME_HEADER + head.readUInt32LE(0);
    const take = Math.min(total - rest.length, chunk.length);
    const frame = Buffer.concat([rest, chunk.subarray(0, take)]);
    if (frame.length < total) return frame;
    if (w.frames(frame, 0) !== total) return null;
    o = take;
  }
  const end = w.frames(chunk, o);
  return end < 0 ? null : chunk.subarray(end);
}

/** The walk over the log's frames: finds each put document's slot and copies its keys. */
class Walk {
  /** Frames walked. */
  count = 0;
  /** Records file bytes the frames walked refer to. */
  recordsEnd = 0;
  /** Documents of the entry walked last, if a put. */
  private puts = 0;
  private readonly idOff: Float64Array;
  /** Per slot: its place among the live slots (its record's first bytes in `locs`). */
  private readonly live: Int32Array;
  private readonly filled: Uint8Array;
  /** The slot after the last one found: documents added one after another have slots one after another. */
  private guess = 0;
  private readonly mask: number;
  /**
   * Views of the chunk walked and of the arena: each key is read as the log has it (u64) and written
   * as the table keeps it (f64) through them, with no call out of JavaScript (two native copies per
   * document through a scratch array took 1.7x as long) and no object per document.
   */
  private view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  private readonly arenaView: DataView;
  /** The read position in the entry being walked. */
  private at = 0;

  constructor(private readonly t: KeyFill) {
    const { len } = t.ids;
    this.idOff = new Float64Array(t.slots);
    this.live = new Int32Array(t.slots);
    for (let s = 0, o = 0, i = 0; s < t.slots; s++) {
      this.idOff[s] = o;
      this.live[s] = i;
      if (len[s] !== FREE) [o, i] = [o + len[s]!, i + 1];
    }
    this.filled = new Uint8Array(t.slots);
    this.arenaView = new DataView(t.arena.buffer, t.arena.byteOffset, t.arena.byteLength);
    this.mask = t.ids.tab.length - 1;
  }

  /** Walks the whole frames of `buf` from byte `o`; returns where the first incomplete one starts, or -1 for a bad frame. */
  frames(buf: Buffer, o: number): number {
    if (this.view.buffer !== buf.buffer || this.view.byteOffset !== buf.byteOffset || this.view.byteLength !== buf.byteLength)
      this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    for (;;) {
      if (o + FRAME_HEADER > buf.length) return o;
      const n = buf.readUInt32LE(o);
      const end = o + FRAME_HEADER + n;
      if (end > buf.length) return o;
      const p = o + FRAME_HEADER;
      if (n < 13 || crc32(buf.subarray(p, end)) !== buf.readUInt32LE(o + 4) || buf[p] !== FRAME_VERSION) return -1;
      const entryEnd = p + 13 + buf.readUInt32LE(p + 9);
      if (entryEnd > end || !this.entry(buf, p + 13, entryEnd) || end - entryEnd !== 12 * this.puts) return -1;
      if (this.puts > 0) {
        // The records file bytes the log refers to: after the last put's records.
        let r = buf.readDoubleLE(p + 1);
        for (let i = 0; i < this.puts; i++) r += buf.readUInt32LE(entryEnd + 12 * i);
        this.recordsEnd = r;
      }
      this.count++;
      o = end;
    }
  }

  private varint(buf: Buffer, end: number): number {
    let n = 0;
    for (let mul = 1; this.at < end && mul <= 2 ** 49; mul *= 128) {
      const x = buf[this.at++]!;
      n += (x & 127) * mul;
      if (x < 128) return n;
    }
    return -1;
  }

  /** Walks one entry (bytes `from`..`end` of `buf`); false when it is malformed. */
  private entry(buf: Buffer, from: number, end: number): boolean {
    if (end - from < 2 || buf[from] !== 1) return false;
    const op = buf[from + 1];
    this.puts = 0;
    if (op === OP_REMOVE) return true;
    if (op !== OP_PUT) return false;
    this.at = from + 2;
    const docs = this.varint(buf, end);
    this.puts = docs;
    for (let i = 0; i < docs; i++) {
      const idLen = this.varint(buf, end);
      const id = this.at;
      this.at += idLen;
      const k = this.varint(buf, end);
      if (idLen < 0 || k < 0 || this.at + 8 * k > end) return false;
      // The slot guessed holds these very bytes: it is the id's (the index's UTF-16 ids start with a byte UTF-8 never has).
      const s = this.holds(this.guess, buf, id, idLen) ? this.guess : this.slotOf(buf, id, id + idLen);
      if (s >= 0) {
        this.copy(s, k);
        this.guess = s + 1;
      }
      this.at += 8 * k;
    }
    return docs >= 0 && this.at === end;
  }

  /** Copies the `k` keys at the read position (of the chunk {@link view} shows) into slot `s`'s record, when it has room for exactly `k`. */
  private copy(s: number, k: number): void {
    const { recLen, recOff, keyOffset, arena, locs } = this.t;
    const fits = recLen[s]! - keyOffset === 8 * k;
    this.filled[s] = fits ? 1 : 0;
    if (!fits) return;
    for (let j = 0, o = recOff[s]!, l = this.live[s]! * keyOffset; j < keyOffset; j++) arena[o + j] = locs[l + j]!;
    const { view, arenaView } = this;
    for (let j = 0, from = this.at, to = recOff[s]! + keyOffset; j < k; j++, from += 8, to += 8)
      arenaView.setFloat64(to, view.getUint32(from + 4, true) * TWO32 + view.getUint32(from, true), true);
  }

  /** The slot of the id in bytes `from`..`to` of `buf` (UTF-8, as the log keeps ids), or -1. */
  private slotOf(buf: Uint8Array, from: number, to: number): number {
    for (let i = from; i < to; i++) {
      // A 4-byte UTF-8 sequence is a surrogate pair: the id index keeps such an id as UTF-16.
      if (buf[i]! >= 0xf0) {
        const u = Buffer.concat([Buffer.of(UTF16), Buffer.from(Buffer.from(buf.subarray(from, to)).toString('utf8'), 'utf16le')]);
        return this.probe(u, 0, u.length);
      }
    }
    return this.probe(buf, from, to);
  }

  /** Whether slot `s` holds the `n` id bytes from `from` of `b`. */
  private holds(s: number, b: Uint8Array, from: number, n: number): boolean {
    const { bytes, len } = this.t.ids;
    if (s >= this.t.slots || len[s] !== n) return false;
    const o = this.idOff[s]!;
    let j = 0;
    while (j < n && bytes[o + j] === b[from + j]) j++;
    return j === n;
  }

  private probe(b: Uint8Array, from: number, to: number): number {
    const { hash, tab } = this.t.ids;
    const h = hashBytes(b, from, to);
    for (let i = h & this.mask;; i = (i + 1) & this.mask) {
      const s = tab[i]!;
      if (s === EMPTY) return -1;
      if (hash[s] === h && this.holds(s, b, from, to - from)) return s;
    }
  }

  /** Whether every live slot was filled by its last put. */
  allFilled(): boolean {
    const { len } = this.t.ids;
    for (let s = 0; s < this.t.slots; s++) if (len[s] !== FREE && this.filled[s] !== 1) return false;
    return true;
  }
}
