/**
 * Pass 2 over a plain JSONL file read as bytes: a record that loses nothing is copied as its bytes,
 * with no decoding, no `JSON.parse` and no re-encoding (most records of a typical corpus), and
 * consecutive ones are written as one run; a record the caller can read from its bytes
 * ({@link RawPassHooks.takes}) is the caller's; every other line is decoded and handed to the JSONL
 * reader of pass 1 ({@link jsonlLineReader}), so its record, row, line number and errors are that
 * reader's. Pass 1 over bytes (./bytePass1.ts) reads the file the same way, each block checked as UTF-8.
 *
 * Why: pass 2 decoded and parsed every record, and encoded every record it wrote back unchanged.
 * @module
 */
import { isUtf8 } from 'node:buffer';
import { promises as fsp } from 'node:fs';
import { isZstd } from '../../io/codec/zstd.js';
import { jsonlLineReader } from '../../io/read/jsonl.js';
import type { OpenedInput, ReadOptions } from '../../io/read/read.js';
import { makeContext, type InputRecord, type SkipStats } from '../../io/read/record.js';
import type { OutputSink } from '../../io/write/output.js';

/** Bytes read at a time. */
const BLOCK = 4 << 20;

/**
 * Whether pass 2 may read `path` as bytes ({@link rawJsonlPass}): a JSONL file on disk, whole (no
 * limit), stored plain (no gzip or zstd data, whatever its name), read without skipping invalid
 * records, written (if at all) to a sink that takes bytes.
 */
export async function rawPassFits(path: string, read: ReadOptions, input: OpenedInput, out: OutputSink | undefined): Promise<boolean> {
  if (path === '-' || input.format !== 'jsonl' || input.shards || read.limit !== undefined || read.skipInvalid || read.stdin) return false;
  if (out && !out.writeBytes) return false;
  if (/\.(gz|zst|zstd)$/i.test(path)) return false;
  const st = await fsp.stat(path).catch(() => undefined);
  if (!st?.isFile()) return false;
  const head = Buffer.alloc(4);
  const f = await fsp.open(path, 'r');
  try {
    const { bytesRead } = await f.read(head, 0, 4, 0);
    const h = head.subarray(0, bytesRead);
    return !(h.length >= 2 && h[0] === 0x1f && h[1] === 0x8b) && !isZstd(h);
  } finally {
    await f.close();
  }
}

/** What {@link rawJsonlPass} asks of its caller. */
export interface RawPassHooks {
  /** Called first, with whether the file starts with a byte-order mark, before any record. */
  start(bom: boolean): void;
  /**
   * Called for each record line with its row and its bytes `line[start, stop)` (no line break),
   * before the reader reads it: true when the caller took the record as it is (pass 2: it loses
   * nothing, and its bytes are copied as they are); else {@link record} gets it.
   */
  passes(row: number, line: Buffer, start: number, stop: number): boolean;
  /**
   * Optional, for a record that does not pass, its bytes `line[start, stop)` and its line break up
   * to `next`: true when the caller read it from the bytes and wrote what it writes (after the
   * records copied before it); else {@link record} gets it.
   * Why these parameters: once per record, where an object would allocate per record.
   */
  takes?(row: number, line: Buffer, start: number, stop: number, next: number): Promise<boolean>;
  /** A record that does not pass: as the JSONL reader reads it, with its raw text and line break. */
  record(r: InputRecord): Promise<void>;
  /** Before bytes are written: the header (the byte-order mark) goes first. */
  header(): Promise<void>;
}

/** True when `b[a, e)` is all JSON/ASCII whitespace (a blank line to the reader, which trims it). */
function asciiBlank(b: Buffer, a: number, e: number): boolean {
  for (let i = a; i < e; i++) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0b && c !== 0x0c && c !== 0x0d) return false;
  }
  return true;
}

/** The first byte of `b[a, e)` that is not JSON whitespace (which `JSON.parse` skips), or −1. */
function firstByte(b: Buffer, a: number, e: number): number {
  for (let i = a; i < e; i++) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return c;
  }
  return -1;
}

/** What {@link rawJsonlPass} reads and where it writes. */
export interface RawPassOptions {
  /** The input's name in errors. */
  name: string;
  /** How the input is read (its fields). */
  read: ReadOptions;
  /** Where records that pass are copied (nowhere when undefined). */
  out: OutputSink | undefined;
  /** The input's counts of skipped records. */
  skips: SkipStats;
  /**
   * Check that each block is valid UTF-8, and throw when one is not (pass 1, whose caller then
   * reads the input the other way, for its error). Pass 2 reads what pass 1 checked.
   */
  checkUtf8?: boolean;
}

/**
 * Reads the JSONL file `path` (see {@link rawPassFits}) for pass 2: `hooks.passes` decides each
 * record; those that pass are copied to `o.out`, the others go to `hooks.record`.
 */
export async function rawJsonlPass(path: string, o: RawPassOptions, hooks: RawPassHooks): Promise<void> {
  const { out } = o;
  const reader = jsonlLineReader(makeContext(o.name, true, false, o.skips), o.read.fields ?? {});
  const f = await fsp.open(path, 'r');
  try {
    // One buffer for the whole file (a new one per block, and a copy joining the carried line, made
    // garbage twice the file's size): nothing keeps its bytes past the hooks (ByteBatch copies them).
    let buf = Buffer.allocUnsafe(BLOCK);
    /** Bytes of an unfinished line carried at the start of {@link buf}. */
    let have = 0;
    let first = true;
    const state = { line: 1, row: 0 };
    for (;;) {
      if (have === buf.length) {
        // A line longer than the buffer: room for more of it.
        const grown = Buffer.allocUnsafe(2 * buf.length);
        buf.copy(grown, 0, 0, have);
        buf = grown;
      }
      const { bytesRead } = await f.read(buf, have, buf.length - have);
      const eof = bytesRead === 0;
      let base = 0;
      const end = have + bytesRead;
      if (first) {
        if (end < 3 && !eof) {
          have = end;
          continue;
        }
        first = false;
        const bom = end >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
        if (bom) base = 3;
        hooks.start(bom);
      }
      // Whole lines only; the last, unfinished one waits for the next block (or the end).
      const lastNl = eof ? end : Math.max(base, buf.lastIndexOf(0x0a, end - 1) + 1);
      const b = buf.subarray(base, lastNl);
      if (o.checkUtf8 && !isUtf8(b)) throw new Error(`${o.name}: not UTF-8`);
      await lines(b, state, { reader, out, hooks });
      if (eof) return;
      buf.copyWithin(0, lastNl, end);
      have = end - lastNl;
    }
  } finally {
    await f.close();
  }
}

/**
 * The lines of `b` (whole lines; the last may lack its break only at the end of the file), from
 * line `at.line` and row `at.row`; runs of records that pass are written as one copy.
 */
async function lines(
  b: Buffer,
  at: { line: number; row: number },
  c: { reader: ReturnType<typeof jsonlLineReader>; out: OutputSink | undefined; hooks: RawPassHooks },
): Promise<void> {
  const n = b.length;
  /** The run of passing records not written yet: [runStart, runEnd). */
  let runStart = 0;
  let runEnd = 0;
  const flush = async (): Promise<void> => {
    if (runEnd > runStart && c.out) {
      await c.hooks.header();
      await c.out.writeBytes!(b.subarray(runStart, runEnd));
    }
  };
  let start = 0;
  while (start < n) {
    let end = b.indexOf(0x0a, start);
    const next = end === -1 ? n : end + 1;
    if (end === -1) end = n;
    const stop = end > start && b[end - 1] === 0x0d ? end - 1 : end;
    const ln = at.line++;
    const blank = asciiBlank(b, start, stop);
    const rec = !blank && firstByte(b, start, stop) === 0x7b;
    const passes = rec && c.hooks.passes(at.row, b, start, stop);
    let taken = false;
    if (rec && !passes && c.hooks.takes) {
      // What the caller writes goes after the run copied before it.
      await flush();
      runStart = runEnd = next;
      taken = await c.hooks.takes(at.row, b, start, stop, next);
    }
    if (passes) {
      at.row++;
      if (runEnd !== start) {
        await flush();
        runStart = start;
      }
      runEnd = next;
      // A last line with no break is written with one, as the reader's records are.
      if (stop === next) {
        await flush();
        runStart = runEnd = next;
        if (c.out) await c.out.write('\n');
      }
    } else if (taken) {
      at.row++;
    } else if (!blank) {
      const eol = stop === next ? '' : next - stop === 1 ? (b[stop] === 0x0a ? '\n' : '\r') : '\r\n';
      const r = c.reader(b.toString('utf8', start, stop), ln, eol, at.row);
      if (r) {
        at.row++;
        await flush();
        runStart = runEnd = next;
        await c.hooks.record(r);
      }
    }
    start = next;
  }
  await flush();
}

/**
 * An {@link OutputSink} that gathers text and bytes into one buffer, written to `out` a megabyte
 * at a time: the runs of records copied are short (a record that loses a unit ends one), and a
 * write each cost more than the copies. {@link flush} before closing `out`.
 */
export class ByteBatch implements OutputSink {
  readonly name: string;
  private buf = Buffer.allocUnsafe(1 << 20);
  /**
   * The buffer written before {@link buf}, filled next: a fresh megabyte per flush was 256 pages
   * first touched (a page's first touch costs 12–20 µs here: 526 MB written, ~20,000 of a line
   * run's ~67,000 page faults). The sinks of ../../io/write/output.ts wait for `drain` when a write
   * passes their high-water mark (16 KiB), as a batch this large does: once {@link flush} has
   * awaited `writeBytes`, its stream has written the batch; two buffers in turn leave a sink one
   * more write in hand.
   */
  private spare = Buffer.allocUnsafe(1 << 20);
  private n = 0;

  constructor(private readonly out: OutputSink) {
    this.name = out.name;
  }

  /** Appends `text`, encoded as the sinks encode it (UTF-8; a lone surrogate as U+FFFD). */
  async write(text: string): Promise<void> {
    // A code unit is at most three bytes of UTF-8, so the text fits when this does.
    if (3 * text.length > this.buf.length - this.n) {
      await this.flush();
      if (3 * text.length > this.buf.length) return this.out.write(text);
    }
    this.n += this.buf.write(text, this.n, 'utf8');
  }

  /**
   * Whether `n` more bytes fit before the next flush: then {@link putBytes} and {@link putText}
   * append them with no promise. Why: a cut record was four awaited writes and three views of its line.
   */
  room(n: number): boolean {
    return n <= this.buf.length - this.n;
  }

  /** Appends `b[a, e)` (room checked first). */
  putBytes(b: Buffer, a: number, e: number): void {
    this.n += b.copy(this.buf, this.n, a, e);
  }

  /** Appends a copy of `bytes` (room checked first). */
  putView(bytes: Uint8Array): void {
    this.buf.set(bytes, this.n);
    this.n += bytes.length;
  }

  /** Appends `text` as UTF-8 (room checked first: three bytes a code unit; a lone surrogate as U+FFFD, as {@link write}). */
  putText(text: string): void {
    this.n += this.buf.write(text, this.n, 'utf8');
  }

  /** Appends a copy of `bytes` (kept nowhere else: the caller may reuse them once this returns). */
  async writeBytes(bytes: Uint8Array): Promise<void> {
    // Copied, in pieces as large as the buffer, never handed on: the pass reuses its bytes.
    let at = 0;
    while (bytes.length - at > this.buf.length - this.n) {
      const k = this.buf.length - this.n;
      this.buf.set(bytes.subarray(at, at + k), this.n);
      this.n += k;
      at += k;
      await this.flush();
    }
    this.buf.set(bytes.subarray(at), this.n);
    this.n += bytes.length - at;
  }

  /** Writes what is gathered to `out`, then gathers into the other buffer ({@link spare}). */
  async flush(): Promise<void> {
    if (this.n === 0) return;
    const b = this.buf.subarray(0, this.n);
    [this.buf, this.spare] = [this.spare, this.buf];
    this.n = 0;
    await this.out.writeBytes!(b);
  }

  /** Flushes; `out` is closed by its owner. */
  close(): Promise<void> {
    return this.flush();
  }

  /** Drops what is gathered; `out` is aborted by its owner. */
  abort(): Promise<void> {
    this.n = 0;
    return Promise.resolve();
  }
}
