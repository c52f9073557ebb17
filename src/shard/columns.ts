/**
 * The intermediate file format of the sharded pipeline: a small, versioned column file.
 *
 * Layout (little-endian): the magic `NDSH`, a uint32 format version, a uint32 length L, L bytes of
 * JSON header `{ kind, count, meta, columns: [{ name, type, offset, bytes }] }`, then the columns,
 * each starting at a multiple of 8 from the start of the file. Column types: `u32`, `i32`, `f64`,
 * and `str` (a string column: its `offset` points at count + 1 float64 byte offsets, followed by the
 * UTF-8 bytes). The header also holds the total file size, so a truncated file is rejected.
 *
 * Why not Parquet: every consumer of these files is a neardup stage, the columns are fixed-width
 * integers read back as typed arrays without conversion, and a reader needs no native engine.
 * The schemas are documented (with their versions) in docs/distributed.md.
 * @module
 */
import { promises as fsp, openSync, readSync, closeSync, fstatSync } from 'node:fs';

/** The format version written; readers reject other versions. */
export const COLUMNS_VERSION = 1;
const MAGIC = 0x4853444e; // 'NDSH' little-endian

/** A column to write. */
export type ColumnData = Uint32Array | Int32Array | Float64Array | readonly string[];

/** One column in a header. */
interface ColumnInfo {
  name: string;
  type: 'u32' | 'i32' | 'f64' | 'str';
  offset: number;
  bytes: number;
  count: number;
}

interface Header {
  kind: string;
  meta: Record<string, unknown>;
  size: number;
  columns: ColumnInfo[];
}

const pad8 = (n: number): number => (n + 7) & ~7;

function typeOf(d: ColumnData): ColumnInfo['type'] {
  if (d instanceof Uint32Array) return 'u32';
  if (d instanceof Int32Array) return 'i32';
  if (d instanceof Float64Array) return 'f64';
  return 'str';
}

/**
 * Writes a column file to `file` (not atomically: callers write into a task's temp directory,
 * which is renamed into place once complete). `kind` names the schema, checked by readers.
 */
export async function writeColumns(file: string, kind: string, meta: Record<string, unknown>, columns: Record<string, ColumnData>): Promise<void> {
  const infos: ColumnInfo[] = [];
  const bodies: Buffer[][] = [];
  for (const [name, data] of Object.entries(columns)) {
    const type = typeOf(data);
    if (type === 'str') {
      const strs = data as readonly string[];
      const offsets = new Float64Array(strs.length + 1);
      const bufs: Buffer[] = [];
      let at = 0;
      for (let i = 0; i < strs.length; i++) {
        const b = Buffer.from(strs[i]!, 'utf8');
        bufs.push(b);
        at += b.length;
        offsets[i + 1] = at;
      }
      infos.push({ name, type, offset: 0, bytes: offsets.byteLength + at, count: strs.length });
      bodies.push([Buffer.from(offsets.buffer, offsets.byteOffset, offsets.byteLength), ...bufs]);
    } else {
      const a = data as Uint32Array | Int32Array | Float64Array;
      infos.push({ name, type, offset: 0, bytes: a.byteLength, count: a.length });
      bodies.push([Buffer.from(a.buffer, a.byteOffset, a.byteLength)]);
    }
  }
  // The header's length depends on the offsets it holds: iterate until it is stable.
  let headerLen = 0;
  let json = '';
  for (let round = 0; round < 4; round++) {
    let at = pad8(12 + headerLen);
    for (const c of infos) {
      c.offset = at;
      at = pad8(at + c.bytes);
    }
    const header: Header = { kind, meta, size: at, columns: infos };
    json = JSON.stringify(header);
    const len = Buffer.byteLength(json);
    if (len <= headerLen) break;
    headerLen = len + 64;
  }
  const head = Buffer.alloc(pad8(12 + headerLen));
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(COLUMNS_VERSION, 4);
  head.writeUInt32LE(headerLen, 8);
  head.write(json.padEnd(headerLen, ' '), 12, 'utf8');
  const parts: Buffer[] = [head];
  let at = head.length;
  for (let i = 0; i < infos.length; i++) {
    for (const b of bodies[i]!) {
      parts.push(b);
      at += b.length;
    }
    const gap = pad8(at) - at;
    if (gap > 0) {
      parts.push(Buffer.alloc(gap));
      at += gap;
    }
  }
  const fh = await fsp.open(file, 'w');
  try {
    await fh.writev(parts);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** A column file opened for reading; columns are read on demand with positional reads. */
export class ColumnFile {
  /** The schema name. */
  readonly kind: string;
  /** Free-form metadata written with the file. */
  readonly meta: Record<string, unknown>;
  private readonly fd: number;
  private readonly cols = new Map<string, ColumnInfo>();

  private constructor(
    readonly path: string,
    fd: number,
    header: Header,
  ) {
    this.fd = fd;
    this.kind = header.kind;
    this.meta = header.meta;
    for (const c of header.columns) this.cols.set(c.name, c);
  }

  /** Opens `file`, checking magic, version, kind and size. */
  static open(file: string, kind: string): ColumnFile {
    const fd = openSync(file, 'r');
    try {
      const pre = Buffer.alloc(12);
      readSync(fd, pre, 0, 12, 0);
      if (pre.readUInt32LE(0) !== MAGIC) throw new Error(`${file}: not a neardup intermediate file`);
      const version = pre.readUInt32LE(4);
      if (version !== COLUMNS_VERSION) throw new Error(`${file}: intermediate format version ${version}, this neardup reads version ${COLUMNS_VERSION}`);
      const len = pre.readUInt32LE(8);
      const hb = Buffer.alloc(len);
      readSync(fd, hb, 0, len, 12);
      const header = JSON.parse(hb.toString('utf8')) as Header;
      if (header.kind !== kind) throw new Error(`${file}: holds ${header.kind}, expected ${kind}`);
      const size = fstatSync(fd).size;
      if (size !== header.size) throw new Error(`${file}: truncated or damaged (${size} bytes, header says ${header.size})`);
      return new ColumnFile(file, fd, header);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  private info(name: string): ColumnInfo {
    const c = this.cols.get(name);
    if (!c) throw new Error(`${this.path}: no column ${name}`);
    return c;
  }

  private bytes(offset: number, length: number): Buffer {
    const b = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, b, got, length - got, offset + got);
      if (n === 0) throw new Error(`${this.path}: unexpected end of file`);
      got += n;
    }
    return b;
  }

  /** Number of values in a column. */
  count(name: string): number {
    return this.info(name).count;
  }

  /** Values [start, end) of a uint32 column (the whole column by default). */
  u32(name: string, start = 0, end?: number): Uint32Array {
    return this.fixed(name, 'u32', 4, start, end, (b) => new Uint32Array(b.buffer, b.byteOffset, b.length / 4)) as Uint32Array;
  }

  /** Values [start, end) of an int32 column. */
  i32(name: string, start = 0, end?: number): Int32Array {
    return this.fixed(name, 'i32', 4, start, end, (b) => new Int32Array(b.buffer, b.byteOffset, b.length / 4)) as Int32Array;
  }

  /** Values [start, end) of a float64 column. */
  f64(name: string, start = 0, end?: number): Float64Array {
    return this.fixed(name, 'f64', 8, start, end, (b) => new Float64Array(b.buffer, b.byteOffset, b.length / 8)) as Float64Array;
  }

  private fixed(name: string, type: string, width: number, start: number, end: number | undefined, view: (b: Buffer) => ArrayLike<number>): ArrayLike<number> {
    const c = this.info(name);
    if (c.type !== type) throw new Error(`${this.path}: column ${name} is ${c.type}, not ${type}`);
    const e = end ?? c.count;
    // Buffer.alloc gives a fresh, 8-aligned ArrayBuffer of its own for these sizes.
    return view(this.bytes(c.offset + start * width, (e - start) * width));
  }

  /** A reader of a string column: the offsets are loaded, strings are read one by one. */
  strings(name: string): { count: number; get(i: number): string; all(): string[] } {
    const c = this.info(name);
    if (c.type !== 'str') throw new Error(`${this.path}: column ${name} is ${c.type}, not str`);
    const offs = new Float64Array(this.bytes(c.offset, (c.count + 1) * 8).buffer.slice(0));
    const base = c.offset + (c.count + 1) * 8;
    return {
      count: c.count,
      get: (i) => this.bytes(base + offs[i]!, offs[i + 1]! - offs[i]!).toString('utf8'),
      all: () => {
        const blob = this.bytes(base, offs[c.count]!);
        const out: string[] = new Array(c.count);
        for (let i = 0; i < c.count; i++) out[i] = blob.toString('utf8', offs[i]!, offs[i + 1]!);
        return out;
      },
    };
  }

  /** Closes the file. */
  close(): void {
    closeSync(this.fd);
  }
}
