/**
 * Line formats (JSONL, text, id⇥text) read in parallel: a file is cut at line ends into byte ranges
 * that workers read and parse on their own, with the same readers as a sequential pass. Each range
 * reports its line and row counts, so the caller turns range-local line and row numbers into the
 * file's by summing over the ranges before it, in order.
 * @module
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { linesOf, utf8Chunks, utf8LinesOf } from '../codec/utf8.js';
import { makeContext, type InputRecord, type SkipStats } from '../read/record.js';
import { jsonlLineReader, type FieldSpec } from '../read/jsonl.js';
import { idTextLineReader, textLineReader } from '../read/lines.js';
import { delimitedLineReader, type ColumnSpec } from '../read/delimited.js';
import { InputError } from '../../common/errors.js';
import { formatFromExtension, sniffFormat, type InputFormat } from '../read/formats.js';
import { isZstd } from '../codec/zstd.js';
import { noteInput } from '../read/inputStamps.js';

/** The line formats that can be cut at any line end (TSV read without quotes: one record per line). */
export type LineFormat = 'jsonl' | 'text' | 'idtext' | 'tsv';

/** True for a format whose every record is one line (so a file can be cut at any line end). */
export function isLineFormat(format: string): format is LineFormat {
  return format === 'jsonl' || format === 'text' || format === 'idtext' || format === 'tsv';
}

/**
 * The line format of `path` when it can be read in byte ranges: a regular, uncompressed file whose
 * format (given, else from the extension, else sniffed from the first line as a sequential read
 * would) is a line format. Undefined otherwise (the caller reads it sequentially).
 */
export function rangeableFormat(path: string, format: InputFormat | 'auto', tsvQuotes = false): LineFormat | undefined {
  if (path === '-') return undefined;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const head = Buffer.alloc(1 << 16);
    const got = readSync(fd, head, 0, head.length, 0);
    const b = head.subarray(0, got);
    if ((b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) || isZstd(b)) return undefined;
    let f = format === 'auto' ? formatFromExtension(path) : format;
    if (f === undefined) {
      if (b.length === 0) return undefined;
      const body = b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? b.subarray(3) : b;
      const nl = body.indexOf(10);
      // A first line longer than the window: leave it to the sequential reader.
      if (nl < 0 && got === head.length) return undefined;
      f = sniffFormat(body.subarray(0, nl < 0 ? body.length : nl).toString('utf8'));
    }
    if (f === 'tsv' && tsvQuotes) return undefined;
    return isLineFormat(f) ? f : undefined;
  } finally {
    closeSync(fd);
  }
}

/** How to parse the records of a line-format file (plain data, posted to workers). */
export interface LineParseSpec {
  /** The file's path. */
  path: string;
  /** The name used in messages. */
  name: string;
  format: LineFormat;
  /** JSONL fields. */
  fields?: FieldSpec;
  /** TSV columns. */
  columns?: ColumnSpec;
  /**
   * TSV: the header line (without its line break), read before every block but the first, which
   * holds it (see {@link tsvHeaderOf}).
   */
  header?: string;
  /** Skip invalid records (counted) instead of failing on the first. */
  skipInvalid: boolean;
}

/** A byte range [start, end) of a file that starts at a line start and ends after a line end (or at the end of the file). */
export interface ByteRange {
  start: number;
  end: number;
}

/** The file's identity when it was planned, to notice it changing between passes. */
export interface FileStamp {
  size: number;
  mtimeMs: number;
}

/** The current size and modification time of an open file. */
export function stampOf(fd: number): FileStamp {
  const st = fstatSync(fd);
  return { size: st.size, mtimeMs: st.mtimeMs };
}

/**
 * Cuts `path` into ranges of about `chunkBytes` each, every cut just after a newline (a line longer
 * than a chunk stays whole). Reads only a small window at each cut.
 */
export function planLineRanges(path: string, chunkBytes = 8 << 20, firstEnd = 0): { ranges: ByteRange[]; stamp: FileStamp } {
  noteInput(path);
  const fd = openSync(path, 'r');
  try {
    const stamp = stampOf(fd);
    const ranges: ByteRange[] = [];
    const window = Buffer.allocUnsafe(1 << 16);
    let start = 0;
    while (start < stamp.size) {
      // The first range reaches at least `firstEnd` (past a TSV header).
      let cut = Math.max(start + chunkBytes, start === 0 ? firstEnd : 0);
      if (cut >= stamp.size) {
        ranges.push({ start, end: stamp.size });
        break;
      }
      // Move the cut to just after the next newline at or after it. The window starts small (a
      // 64 KB read per cut was 60 ms of a 1.4 GB file's start, before any worker had a range) and
      // doubles while a line goes on.
      for (let size = 4096;; size = Math.min(2 * size, window.length)) {
        const got = readSync(fd, window, 0, size, cut - 1);
        if (got === 0) {
          cut = stamp.size;
          break;
        }
        const nl = window.subarray(0, got).indexOf(10);
        if (nl >= 0) {
          cut = cut - 1 + nl + 1;
          break;
        }
        cut += got;
      }
      ranges.push({ start, end: Math.min(cut, stamp.size) });
      start = cut;
    }
    return { ranges, stamp };
  } finally {
    closeSync(fd);
  }
}

/**
 * A TSV file's header: the first non-empty line (after a byte-order mark), as text without its
 * line break, and the byte offset just past it. Undefined when the file has no such line.
 */
export function tsvHeaderOf(path: string): { header: string; end: number } | undefined {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    let at = 0;
    const head = readRange(fd, 0, Math.min(size, 3));
    if (head.length === 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) at = 3;
    let window = 1 << 16;
    while (at < size) {
      const buf = readRange(fd, at, Math.min(size, at + window));
      let nl = buf.indexOf(10);
      if (nl < 0 && at + buf.length < size) {
        window *= 2;
        continue;
      }
      if (nl < 0) nl = buf.length;
      const line = buf.subarray(0, nl);
      const text = (line.length > 0 && line[line.length - 1] === 13 ? line.subarray(0, line.length - 1) : line).toString('utf8');
      if (line.length > 0) return { header: text, end: Math.min(size, at + nl + 1) };
      at += nl + 1;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Reads bytes [start, end) of an open file (into `into`, when given, of at least that length). */
export function readRange(fd: number, start: number, end: number, into?: Buffer): Buffer {
  const buf = into ? into.subarray(0, end - start) : Buffer.allocUnsafe(end - start);
  let off = 0;
  while (off < buf.length) {
    const got = readSync(fd, buf, off, buf.length - off, start + off);
    if (got === 0) break;
    off += got;
  }
  return off === buf.length ? buf : buf.subarray(0, off);
}

/** An invalid record or input error, located by a line number of the block it was found in. */
export interface BlockProblem {
  line: number | undefined;
  reason: string;
  position?: string;
  fix?: InputError['fix'];
}

/** The records of one block, and what the caller needs to place them in the file. */
export interface ParsedBlock {
  records: InputRecord[];
  /** Byte offset (within the block) and length (without the line break) of each record's line. */
  starts: Int32Array;
  lengths: Int32Array;
  /** Lines in the block. */
  lines: number;
  /** Data rows in the block (what the readers number records by: skipped records count too). */
  rows: number;
  /** Invalid records skipped (with `skipInvalid`): how many, and the first few. */
  skipped: number;
  examples: BlockProblem[];
  /** The block started with a byte-order mark, which was dropped. */
  bom: boolean;
}

async function* once(buf: Buffer): AsyncGenerator<Buffer> {
  if (buf.length > 0) yield buf;
}

/**
 * Parses a block of whole lines with the format's reader. Line numbers start at `firstLine` and rows
 * at 0; a byte-order mark is dropped only when `stripBom` (the file's first block). A TSV block
 * other than the first is read after `spec.header`. Throws an
 * {@link InputError} for the first invalid record unless the spec skips them.
 */
export async function parseLineBlock(buf: Buffer, spec: LineParseSpec, firstLine = 1, stripBom = false): Promise<ParsedBlock> {
  const skips: SkipStats = { count: 0, examples: [] };
  const ctx = makeContext(spec.name, false, spec.skipInvalid, skips);
  let bom = false;
  // TSV: a block that does not hold the header reads it first, as line firstLine − 1.
  const withHeader = spec.format === 'tsv' && !stripBom;
  if (withHeader && spec.header === undefined) throw new Error('a TSV block after the first needs the header line');
  const input = withHeader ? Buffer.concat([Buffer.from(spec.header! + '\n', 'utf8'), buf]) : buf;
  const start = withHeader ? firstLine - 1 : firstLine;
  let lines = 0;
  let rows = 0;
  const records: InputRecord[] = [];
  // Lines are read without an async step per line (three async generators per line cost about as
  // much as decoding and JSON.parse together).
  let each: (text: string, line: number, eol: string) => void;
  let finish = (): void => {};
  if (spec.format !== 'tsv') {
    const read = spec.format === 'jsonl' ? jsonlLineReader(ctx, spec.fields ?? {}) : spec.format === 'idtext' ? idTextLineReader(ctx) : textLineReader(ctx);
    each = (text, line, eol) => {
      lines++;
      if (spec.format === 'text' || text.trim() !== '') rows++;
      const r = read(text, line, eol);
      if (r) records.push(r);
    };
  } else {
    const reader = delimitedLineReader(ctx, { delimiter: '\t', spec: spec.columns ?? {}, onHeader: () => undefined, quotes: false });
    let headerSeen = withHeader;
    each = (text, line, eol) => {
      if (!(withHeader && line === start)) {
        lines++;
        // TSV skips empty lines; the first non-empty line is the header, not a row.
        if (text !== '') {
          if (headerSeen) rows++;
          headerSeen = true;
        }
      }
      reader.feed({ text, line, eol });
    };
    finish = () => {
      reader.finish();
      for (const r of reader.out) records.push(r);
    };
  }
  // Invalid UTF-8 takes the chunked route, which records the bad lines for the readers.
  if (!utf8LinesOf(input, { firstLine: start, stripBom, each, onBom: () => (bom = true) })) {
    const chunks = utf8Chunks(once(input), { file: spec.name, badLines: ctx.badLines, stripBom, firstLine: start, onBom: () => (bom = true) });
    for await (const chunk of chunks) linesOf(chunk, each);
  }
  finish();
  // Byte offsets of the records' lines: walk the newlines once, in order.
  const starts = new Int32Array(records.length);
  const lengths = new Int32Array(records.length);
  const base = bom ? 3 : 0;
  let line = firstLine;
  let at = base;
  for (let i = 0; i < records.length; i++) {
    const want = records[i]!.line;
    while (line < want) {
      at = buf.indexOf(10, at) + 1;
      line++;
    }
    let end = buf.indexOf(10, at);
    if (end < 0) end = buf.length;
    starts[i] = at;
    lengths[i] = end - at;
  }
  return {
    records,
    starts,
    lengths,
    lines,
    rows,
    skipped: skips.count,
    examples: skips.examples.map((e) => ({ line: e.line, reason: e.reason, position: e.position, fix: e.fix })),
    bom,
  };
}

/** The plain-data form of an error thrown while parsing a block, to post from a worker. */
export function problemOf(e: unknown): BlockProblem | undefined {
  return e instanceof InputError ? { line: e.line, reason: e.reason, position: e.position, fix: e.fix } : undefined;
}
