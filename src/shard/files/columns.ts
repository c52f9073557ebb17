/**
 * The intermediate file format of the sharded pipeline: a small, versioned column file.
 *
 * Layout (little-endian): the magic `NDSH`, a uint32 format version, a uint32 length L, the CRC-32
 * of the header, L bytes of JSON header `{ kind, plan, meta, size, block, crcAt, columns: [{ name,
 * type, offset, bytes }] }`, then the columns, each starting at a multiple of 8 from the start of
 * the file, then one CRC-32 (uint32) per `block` bytes of everything between the header and the CRC
 * table. Column types: `u32`, `i32`, `f64`, and `str` (a string column: its `offset` points at
 * count + 1 float64 byte offsets, followed by the UTF-8 bytes).
 *
 * A reader checks what a torn or damaged file would break: the header's CRC, the total size, the
 * plan the file belongs to (a file of another job in the same directory is refused), and the CRC of
 * every block it reads. Reads of a slice cost at most two extra blocks.
 *
 * Why not Parquet: every consumer of these files is a neardup stage, the columns are fixed-width
 * integers read back as typed arrays without conversion, and a reader needs no native engine.
 * The schemas are documented (with their versions) in docs/distributed.md.
 *
 * Why this file is long: it is the writer and the reader of one format, with the checks a torn
 * file needs; apart, each would repeat the other's layout.
 * @module
 */
import { promises as fsp, openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { UsageError } from '../../common/errors.js';

/** The format version written; readers reject other versions. */
export const COLUMNS_VERSION = 2;
const MAGIC = 0x4853444e; // 'NDSH' little-endian
/** Bytes covered by one CRC: small enough that a slice read costs little extra. */
const DEFAULT_BLOCK = 1 << 14;
const PREFIX = 16;

/** A uint32 column given as pieces written one after another (no joined copy is made). */
export interface U32Parts {
  u32Parts: readonly Uint32Array[];
}

/** A string column given as its UTF-8 bytes (pieces written one after another) and the count + 1 offsets into them. */
export interface StrParts {
  strParts: readonly Buffer[];
  offsets: Float64Array;
}

/** A column to write. */
export type ColumnData = Uint32Array | Int32Array | Float64Array | readonly string[] | U32Parts | StrParts;

/** One column in a header. */
export interface ColumnInfo {
  name: string;
  type: 'u32' | 'i32' | 'f64' | 'str';
  offset: number;
  bytes: number;
  count: number;
}

/** A column file's header. */
export interface Header {
  kind: string;
  plan: string;
  meta: Record<string, unknown>;
  size: number;
  block: number;
  /** Offset of the CRC table (the end of the data). */
  crcAt: number;
  columns: ColumnInfo[];
}

/** A damaged, truncated or foreign intermediate file: the job directory cannot be trusted. */
export class DamagedFileError extends UsageError {}

const pad8 = (n: number): number => (n + 7) & ~7;

function typeOf(d: ColumnData): ColumnInfo['type'] {
  if (d instanceof Uint32Array || 'u32Parts' in d) return 'u32';
  if (d instanceof Int32Array) return 'i32';
  if (d instanceof Float64Array) return 'f64';
  return 'str';
}

/** CRC-32 of each BLOCK bytes of `parts` taken as one stream (the last block may be short). */
function blockCrcs(parts: readonly Buffer[], total: number, BLOCK: number): Uint32Array {
  const out = new Uint32Array(Math.ceil(total / BLOCK));
  let block = 0;
  let filled = 0;
  let crc = 0;
  for (const p of parts) {
    let at = 0;
    while (at < p.length) {
      const take = Math.min(BLOCK - filled, p.length - at);
      crc = crc32(p.subarray(at, at + take), crc);
      filled += take;
      at += take;
      if (filled === BLOCK) {
        out[block++] = crc;
        crc = 0;
        filled = 0;
      }
    }
  }
  if (filled > 0) out[block] = crc;
  return out;
}

/** A column's header entry (its offset set later) and the buffers of its bytes. */
function columnBody(name: string, data: ColumnData): { info: ColumnInfo; body: Buffer[] } {
  const type = typeOf(data);
  if ('strParts' in data) {
    const { offsets } = data;
    const parts = data.strParts.filter((b) => b.length > 0);
    const info: ColumnInfo = { name, type: 'str', offset: 0, bytes: offsets.byteLength + offsets[offsets.length - 1]!, count: offsets.length - 1 };
    return { info, body: [Buffer.from(offsets.buffer, offsets.byteOffset, offsets.byteLength), ...parts] };
  }
  if (type === 'str') {
    const strs = data as readonly string[];
    const offsets = new Float64Array(strs.length + 1);
    // One buffer per column, not per string: a write takes at most IOV_MAX (1024) buffers.
    let total = 0;
    for (let i = 0; i < strs.length; i++) total += Buffer.byteLength(strs[i]!, 'utf8');
    const blob = Buffer.allocUnsafe(total);
    let at = 0;
    for (let i = 0; i < strs.length; i++) {
      at += blob.write(strs[i]!, at, 'utf8');
      offsets[i + 1] = at;
    }
    return {
      info: { name, type, offset: 0, bytes: offsets.byteLength + at, count: strs.length },
      body: [Buffer.from(offsets.buffer, offsets.byteOffset, offsets.byteLength), blob],
    };
  }
  if ('u32Parts' in data) {
    const parts = data.u32Parts.filter((a) => a.length > 0).map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength));
    const bytes = parts.reduce((n, b) => n + b.length, 0);
    return { info: { name, type, offset: 0, bytes, count: bytes / 4 }, body: parts };
  }
  const a = data as Uint32Array | Int32Array | Float64Array;
  return { info: { name, type, offset: 0, bytes: a.byteLength, count: a.length }, body: [Buffer.from(a.buffer, a.byteOffset, a.byteLength)] };
}

/** What a column file says of itself: its schema and job, which readers check, and its metadata. */
export interface ColumnFileHeader {
  /** The schema (`band-keys`, `verified`, …). */
  kind: string;
  /** The job's id. */
  plan: string;
  meta: Record<string, unknown>;
}

/**
 * Writes a column file to `file` (not atomically, and not synced: callers write into a task's temp
 * directory, whose files the commit syncs together before renaming it into place).
 */
export async function writeColumns(
  file: string,
  header: ColumnFileHeader,
  columns: Record<string, ColumnData>,
  options: { block?: number } = {},
): Promise<void> {
  const { kind, plan, meta } = header;
  // Bytes per checksummed block: a reader reads whole blocks, so a file read a row here and there (texts) has small ones.
  const BLOCK = options.block ?? DEFAULT_BLOCK;
  const infos: ColumnInfo[] = [];
  const bodies: Buffer[][] = [];
  for (const [name, data] of Object.entries(columns)) {
    const { info, body } = columnBody(name, data);
    infos.push(info);
    bodies.push(body);
  }
  // The header's length depends on the offsets it holds: iterate until it is stable.
  let headerLen = 0;
  let json = '';
  let dataStart = 0;
  let dataEnd = 0;
  for (let round = 0; round < 4; round++) {
    dataStart = pad8(PREFIX + headerLen);
    let at = dataStart;
    for (const c of infos) {
      c.offset = at;
      at = pad8(at + c.bytes);
    }
    dataEnd = at;
    const size = dataEnd + Math.ceil((dataEnd - dataStart) / BLOCK) * 4;
    const header: Header = { kind, plan, meta, size, block: BLOCK, crcAt: dataEnd, columns: infos };
    json = JSON.stringify(header);
    const len = Buffer.byteLength(json);
    if (len <= headerLen) break;
    headerLen = len + 64;
  }
  const head = Buffer.alloc(dataStart);
  const headerBytes = Buffer.from(json.padEnd(headerLen, ' '), 'utf8');
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(COLUMNS_VERSION, 4);
  head.writeUInt32LE(headerLen, 8);
  head.writeUInt32LE(crc32(headerBytes), 12);
  headerBytes.copy(head, PREFIX);
  const data: Buffer[] = [];
  let at = dataStart;
  for (let i = 0; i < infos.length; i++) {
    for (const b of bodies[i]!) {
      data.push(b);
      at += b.length;
    }
    const gap = pad8(at) - at;
    if (gap > 0) {
      data.push(Buffer.alloc(gap));
      at += gap;
    }
  }
  const crcs = blockCrcs(data, dataEnd - dataStart, BLOCK);
  const fh = await fsp.open(file, 'w');
  try {
    // writev may write less than asked (at most IOV_MAX buffers, or a short write): write the rest.
    const bufs = [head, ...data, Buffer.from(crcs.buffer, crcs.byteOffset, crcs.byteLength)];
    let pos = 0;
    while (bufs.length > 0) {
      const { bytesWritten } = await fh.writev(bufs, pos);
      pos += bytesWritten;
      let skip = bytesWritten;
      while (bufs.length > 0 && skip >= bufs[0]!.length) skip -= bufs.shift()!.length;
      if (skip > 0) bufs[0] = bufs[0]!.subarray(skip);
    }
  } finally {
    await fh.close();
  }
}

/**
 * The header of a column file from its first bytes (`head`, at least {@link PREFIX} bytes and as
 * many as its length needs: `need` says how many when `head` is too short), checked as
 * {@link ColumnFile.open} checks it. `name` is what errors call the file.
 */
export function parseHeader(head: Buffer, name: string, kind: string | undefined, plan: string): { header: Header; dataStart: number } | { need: number } {
  if (head.length < PREFIX) throw new DamagedFileError(`${name}: truncated (${head.length} bytes)`);
  if (head.readUInt32LE(0) !== MAGIC) throw new DamagedFileError(`${name}: not a neardup intermediate file`);
  const version = head.readUInt32LE(4);
  if (version !== COLUMNS_VERSION) throw new DamagedFileError(`${name}: intermediate format version ${version}, this neardup reads version ${COLUMNS_VERSION}`);
  const len = head.readUInt32LE(8);
  if (head.length < PREFIX + len) return { need: PREFIX + len };
  const hb = head.subarray(PREFIX, PREFIX + len);
  if (crc32(hb) !== head.readUInt32LE(12)) throw new DamagedFileError(`${name}: damaged header (checksum mismatch)`);
  const header = JSON.parse(hb.toString('utf8')) as Header;
  if (!(Number.isInteger(header.block) && header.block >= 64 && header.block <= 1 << 24))
    throw new DamagedFileError(`${name}: damaged header (block size ${header.block})`);
  if (kind !== undefined && header.kind !== kind) throw new DamagedFileError(`${name}: holds ${header.kind}, expected ${kind}`);
  if (header.plan !== plan) throw new DamagedFileError(`${name}: belongs to job ${header.plan}, not to this directory's job ${plan}`);
  return { header, dataStart: pad8(PREFIX + len) };
}

/** The whole checksummed blocks that bytes [offset, offset + length) of a file's data lie in: what a reader reads for them, [from, to). */
export function blockSpan(header: Header, dataStart: number, offset: number, length: number): [number, number] {
  const first = Math.floor((offset - dataStart) / header.block);
  const last = Math.ceil((offset + length - dataStart) / header.block);
  return [dataStart + first * header.block, Math.min(dataStart + last * header.block, header.crcAt)];
}

/** How a fixed-width column type is read: its name, bytes per value and a view of bytes read. */
interface FixedView {
  type: string;
  width: number;
  view(b: Buffer): ArrayLike<number>;
}
const U32_VIEW: FixedView = { type: 'u32', width: 4, view: (b) => new Uint32Array(b.buffer, b.byteOffset, b.length / 4) };
const I32_VIEW: FixedView = { type: 'i32', width: 4, view: (b) => new Int32Array(b.buffer, b.byteOffset, b.length / 4) };
const F64_VIEW: FixedView = { type: 'f64', width: 8, view: (b) => new Float64Array(b.buffer, b.byteOffset, b.length / 8) };

/** A column file opened for reading; columns are read on demand with positional reads, each block checked. */
export class ColumnFile {
  /** The schema name. */
  readonly kind: string;
  /** Free-form metadata written with the file. */
  readonly meta: Record<string, unknown>;
  private readonly fd: number;
  private readonly cols = new Map<string, ColumnInfo>();
  private readonly dataStart: number;
  private readonly dataEnd: number;
  private readonly crcs: Uint32Array;
  private readonly block: number;

  private constructor(
    readonly path: string,
    fd: number,
    header: Header,
    dataStart: number,
  ) {
    this.fd = fd;
    this.kind = header.kind;
    this.meta = header.meta;
    this.dataStart = dataStart;
    this.dataEnd = header.crcAt;
    for (const c of header.columns) this.cols.set(c.name, c);
    this.block = header.block;
    const n = Math.ceil((this.dataEnd - dataStart) / this.block);
    const raw = this.raw(this.dataEnd, n * 4);
    this.crcs = new Uint32Array(raw.buffer, raw.byteOffset, n);
  }

  /** Opens `file`, checking magic, version, header checksum, kind, plan and size. */
  static open(file: string, kind: string, plan: string): ColumnFile {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (e) {
      throw new DamagedFileError(`${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    try {
      const size = fstatSync(fd).size;
      const pre = Buffer.alloc(PREFIX);
      if (size < PREFIX || readSync(fd, pre, 0, PREFIX, 0) < PREFIX) throw new DamagedFileError(`${file}: truncated (${size} bytes)`);
      let parsed = parseHeader(pre, file, kind, plan);
      if ('need' in parsed) {
        if (parsed.need > size) throw new DamagedFileError(`${file}: truncated (${size} bytes, shorter than its header)`);
        const head = Buffer.alloc(parsed.need);
        readSync(fd, head, 0, parsed.need, 0);
        parsed = parseHeader(head, file, kind, plan);
      }
      if ('need' in parsed) throw new DamagedFileError(`${file}: damaged header`);
      const { header, dataStart } = parsed;
      if (size !== header.size) throw new DamagedFileError(`${file}: truncated or damaged (${size} bytes, header says ${header.size})`);
      return new ColumnFile(file, fd, header, dataStart);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  private info(name: string): ColumnInfo {
    const c = this.cols.get(name);
    if (!c) throw new DamagedFileError(`${this.path}: no column ${name}`);
    return c;
  }

  private raw(offset: number, length: number): Buffer {
    // Not zero-filled: every byte is read over, or the read throws.
    const b = Buffer.allocUnsafeSlow(length);
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, b, got, length - got, offset + got);
      if (n === 0) throw new DamagedFileError(`${this.path}: unexpected end of file`);
      got += n;
    }
    return b;
  }

  /** Bytes [offset, offset + length) of the data, read in whole blocks whose checksums are checked. */
  private bytes(offset: number, length: number): Buffer {
    if (length === 0) return Buffer.alloc(0);
    const end = offset + length;
    if (offset < this.dataStart || end > this.dataEnd) throw new DamagedFileError(`${this.path}: damaged (a column points outside the file)`);
    const BLOCK = this.block;
    const first = Math.floor((offset - this.dataStart) / BLOCK);
    const last = Math.ceil((end - this.dataStart) / BLOCK);
    const from = this.dataStart + first * BLOCK;
    const to = Math.min(this.dataStart + last * BLOCK, this.dataEnd);
    const b = this.raw(from, to - from);
    for (let k = first; k < last; k++) {
      const s = (k - first) * BLOCK;
      if (crc32(b.subarray(s, Math.min(s + BLOCK, b.length))) !== this.crcs[k]) {
        throw new DamagedFileError(`${this.path}: damaged (checksum mismatch in bytes ${this.dataStart + k * BLOCK}–${this.dataStart + (k + 1) * BLOCK})`);
      }
    }
    return b.subarray(offset - from, end - from);
  }

  /** Number of values in a column. */
  count(name: string): number {
    return this.info(name).count;
  }

  /** Values [start, end) of a uint32 column (the whole column by default). */
  u32(name: string, start = 0, end?: number): Uint32Array {
    return this.fixed(name, U32_VIEW, start, end) as Uint32Array;
  }

  /**
   * Values [start, end) of a uint32 column, read into `out` (of at least end − start values) through
   * one bounded buffer: a reader that keeps the values in its own arrays makes no garbage the size of
   * the range (join's pieces of every shard's keys, freed only after the task, grew its process).
   */
  u32Into(name: string, start: number, end: number, out: Uint32Array): void {
    this.into(name, start, end, out);
  }

  /** Values [start, end) of a float64 column, read into `out` through one bounded buffer (as {@link u32Into}). */
  f64Into(name: string, start: number, end: number, out: Float64Array): void {
    this.into(name, start, end, out);
  }

  private into(name: string, start: number, end: number, out: Uint32Array | Float64Array): void {
    const type = out instanceof Float64Array ? 'f64' : 'u32';
    const c = this.checked(name, type, start, end);
    const width = out.BYTES_PER_ELEMENT;
    if (out.length < end - start) throw new RangeError(`${type}Into: ${end - start} values do not fit in ${out.length}`);
    const dst = new Uint8Array(out.buffer, out.byteOffset, (end - start) * width);
    // About 1 MiB per read, each ending on a block boundary, so that no block is read twice.
    const step = Math.max(1, Math.floor((1 << 20) / this.block)) * this.block;
    const from = c.offset + start * width;
    for (let at = 0; at < dst.length;) {
      const pos = from + at;
      const edge = this.dataStart + (Math.floor((pos - this.dataStart) / this.block) * this.block) + step;
      const len = Math.min(edge - pos, dst.length - at);
      dst.set(this.bytes(pos, len), at);
      at += len;
    }
  }

  /** Column `name`, refused unless it is of `type` and has rows [start, end). */
  private checked(name: string, type: string, start: number, end: number): ColumnInfo {
    const c = this.info(name);
    if (c.type !== type) throw new DamagedFileError(`${this.path}: column ${name} is ${c.type}, not ${type}`);
    if (!(start >= 0 && end >= start && end <= c.count))
      throw new DamagedFileError(`${this.path}: damaged (rows ${start}–${end} of column ${name}, which has ${c.count})`);
    return c;
  }

  /** Values [start, end) of an int32 column. */
  i32(name: string, start = 0, end?: number): Int32Array {
    return this.fixed(name, I32_VIEW, start, end) as Int32Array;
  }

  /** Values [start, end) of a float64 column. */
  f64(name: string, start = 0, end?: number): Float64Array {
    return this.fixed(name, F64_VIEW, start, end) as Float64Array;
  }

  private fixed(name: string, as: FixedView, start: number, end: number | undefined): ArrayLike<number> {
    const e = end ?? this.info(name).count;
    const c = this.checked(name, as.type, start, e);
    // Block reads start 8-aligned in a fresh buffer, and columns start 8-aligned in the file.
    return as.view(this.bytes(c.offset + start * as.width, (e - start) * as.width));
  }

  /** A reader of a string column: the offsets are loaded, strings are read one by one or by range. */
  strings(
    name: string,
  ): {
    count: number;
    raw(a: number, b: number): { bytes: Buffer; offs: Float64Array };
    get(i: number): string;
    range(a: number, b: number): string[];
    lazy(a: number, b: number): ((i: number) => string) & { bytes: number };
    all(): string[];
  } {
    const c = this.info(name);
    if (c.type !== 'str') throw new DamagedFileError(`${this.path}: column ${name} is ${c.type}, not str`);
    const base = c.offset + (c.count + 1) * 8;
    // Only the offsets of the rows asked for: a reader of one shard's rows of a task's file of many
    // shards must not load the whole column's offsets (once per shard, that grew as shards²).
    const offsets = (a: number, b: number): Float64Array => {
      if (!(a >= 0 && b >= a && b <= c.count)) throw new DamagedFileError(`${this.path}: damaged (strings ${a}–${b} of ${c.count})`);
      const offs = new Float64Array(b - a + 1);
      new Uint8Array(offs.buffer).set(this.bytes(c.offset + a * 8, (b - a + 1) * 8));
      return offs;
    };
    const range = (a: number, b: number): string[] => {
      if (a === b && a >= 0 && a <= c.count) return [];
      const offs = offsets(a, b);
      const blob = this.bytes(base + offs[0]!, offs[b - a]! - offs[0]!);
      const out: string[] = new Array(b - a);
      for (let i = 0; i < b - a; i++) out[i] = blob.toString('utf8', offs[i]! - offs[0]!, offs[i + 1]! - offs[0]!);
      return out;
    };
    // One read of rows a..b, each string decoded when asked for (a reader that needs a few ids of a big range).
    const lazy = (a: number, b: number): ((i: number) => string) & { bytes: number } => {
      const offs = offsets(a, b);
      const blob = this.bytes(base + offs[0]!, offs[b - a]! - offs[0]!);
      return Object.assign((i: number) => blob.toString('utf8', offs[i]! - offs[0]!, offs[i + 1]! - offs[0]!), { bytes: blob.length + offs.byteLength });
    };
    // Rows a..b undecoded: their UTF-8 bytes, and offsets into them (b − a + 1, from 0).
    const raw = (a: number, b: number): { bytes: Buffer; offs: Float64Array } => {
      const offs = offsets(a, b);
      const bytes = this.bytes(base + offs[0]!, offs[b - a]! - offs[0]!);
      const o0 = offs[0]!;
      for (let i = 0; i < offs.length; i++) offs[i]! -= o0;
      return { bytes, offs };
    };
    return {
      count: c.count,
      raw,
      get: (i) => range(i, i + 1)[0]!,
      range,
      lazy,
      all: () => range(0, c.count),
    };
  }

  /** Closes the file. */
  close(): void {
    closeSync(this.fd);
  }
}

/** The files of one kind (schema) that the tasks of a stage of job `plan` wrote. */
export interface StageFiles {
  files: readonly string[];
  kind: string;
  plan: string;
}

/**
 * Group g's rows (`pstart[g]` to `pstart[g + 1]`) of the float64 `columns` of each file, in file
 * order, concatenated: what a task reads of every task of another stage.
 */
export function groupRows<K extends string>(of: StageFiles, g: number, columns: readonly K[]): Record<K, Float64Array> {
  const { kind, plan } = of;
  // Counted first, then read straight into the columns: no copy of a giant component's rows as garbage.
  const ranges = groupRanges(of, g);
  const n = ranges.reduce((a, r) => a + r.to - r.from, 0);
  const out = {} as Record<K, Float64Array>;
  for (const c of columns) out[c] = new Float64Array(n);
  let at = 0;
  for (const r of ranges) {
    if (r.to === r.from) continue;
    const f = ColumnFile.open(r.file, kind, plan);
    try {
      for (const c of columns) f.f64Into(c, r.from, r.to, out[c].subarray(at));
    } finally {
      f.close();
    }
    at += r.to - r.from;
  }
  return out;
}

/** Each file's rows of group g: `pstart[g]` to `pstart[g + 1]`. */
function groupRanges({ files, kind, plan }: StageFiles, g: number): { file: string; from: number; to: number }[] {
  return files.map((file) => {
    const f = ColumnFile.open(file, kind, plan);
    try {
      const ps = f.f64('pstart', g, g + 2);
      return { file, from: ps[0]!, to: Math.max(ps[0]!, ps[1]!) };
    } finally {
      f.close();
    }
  });
}

/** The number of group g's rows over `files` (see {@link groupRows}). */
export function groupRowCount(of: StageFiles, g: number): number {
  return groupRanges(of, g).reduce((a, r) => a + r.to - r.from, 0);
}

/** What {@link forEachGroupChunk} reads, and how much at a time. */
export interface GroupChunks<K extends string> extends StageFiles {
  g: number;
  columns: readonly K[];
  /** Most rows a chunk holds. */
  chunk: number;
}

/**
 * Group g's rows as {@link groupRows} gives them (same order), `chunk` rows at a time: `each` gets
 * the columns (views into buffers reused for the next chunk) and the chunk's row count. For a task
 * whose rows need not all be held at once.
 */
export function forEachGroupChunk<K extends string>(o: GroupChunks<K>, each: (rows: Record<K, Float64Array>, n: number) => void): void {
  const bufs = {} as Record<K, Float64Array>;
  for (const c of o.columns) bufs[c] = new Float64Array(o.chunk);
  for (const r of groupRanges(o, o.g)) {
    if (r.to === r.from) continue;
    const f = ColumnFile.open(r.file, o.kind, o.plan);
    try {
      for (let at = r.from; at < r.to; at += o.chunk) {
        const end = Math.min(r.to, at + o.chunk);
        for (const c of o.columns) f.f64Into(c, at, end, bufs[c]);
        each(bufs, end - at);
      }
    } finally {
      f.close();
    }
  }
}
