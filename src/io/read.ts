/**
 * Opening any supported input as a stream of {@link InputRecord}s.
 * @module
 */
import { promises as fsp } from 'node:fs';
import type { Readable } from 'node:stream';
import { UsageError } from './errors.js';
import { formatFromExtension, sniffFormat, type InputFormat } from './formats.js';
import { openSource, STDIN_NAME } from './source.js';
import { textLines, utf8Chunks, type TextChunk } from './utf8.js';
import { makeContext, type InputRecord, type SkipStats } from './record.js';
import { readDelimited, type ColumnSpec, type DelimitedHeader } from './delimited.js';
import { readJsonl, type FieldSpec } from './jsonl.js';
import { readIdTextLines, readTextLines } from './lines.js';
import { readDirectory } from './dir.js';

/** Options of {@link openInput}. */
export interface ReadOptions {
  /** The format; `auto` (default) decides from the extension, or from the first line when that says nothing. */
  format?: InputFormat | 'auto';
  /** TSV/CSV columns. */
  columns?: ColumnSpec;
  /** JSONL fields. */
  fields?: FieldSpec;
  /** CSV field delimiter. Default `,` (TSV always uses a tab). */
  delimiter?: string;
  /** Skip invalid records (counted in `skips`) instead of failing on the first. Default false. */
  skipInvalid?: boolean;
  /** Keep each record's raw text, to rewrite the input. Default false. */
  raw?: boolean;
  /** Standard input, for `-`. Default `process.stdin`. */
  stdin?: Readable;
  /** The name used in messages instead of the path (e.g. `<stdin>` for a spooled copy). */
  displayName?: string;
  /** Read only the first `limit` records (seed 001's experiment on the first 500 documents). Default: all. */
  limit?: number;
}

/** The first `limit` records of `records`; stops (and closes) the reader there. */
async function* firstRecords(records: AsyncGenerator<InputRecord>, limit: number): AsyncGenerator<InputRecord> {
  if (limit <= 0) return;
  let n = 0;
  for await (const r of records) {
    yield r;
    if (++n >= limit) return;
  }
}

/** An opened input. */
export interface OpenedInput {
  /** The path, or `<stdin>`. */
  readonly name: string;
  /** The resolved format. */
  readonly format: InputFormat;
  /** CSV/TSV delimiter. */
  readonly delimiter: string | undefined;
  /** Bytes on disk, when known (for progress). */
  readonly size: number | undefined;
  /** Bytes read so far. */
  bytesRead(): number;
  /** The header of a TSV/CSV input, once the first record has been read. */
  header: DelimitedHeader | undefined;
  /** Skipped invalid records. */
  readonly skips: SkipStats;
  /** The records, in input order. Iterate once. */
  readonly records: AsyncGenerator<InputRecord>;
}

async function isDirectory(path: string): Promise<boolean> {
  if (path === '-') return false;
  try {
    return (await fsp.stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function* prepend(first: TextChunk, rest: AsyncIterator<TextChunk>): AsyncGenerator<TextChunk> {
  yield first;
  for (;;) {
    const n = await rest.next();
    if (n.done) return;
    yield n.value;
  }
}

function limited(records: AsyncGenerator<InputRecord>, limit: number | undefined): AsyncGenerator<InputRecord> {
  return limit === undefined ? records : firstRecords(records, limit);
}

/** Opens `path` (`-` for standard input, or a directory) for reading records. */
export async function openInput(path: string, options: ReadOptions = {}): Promise<OpenedInput> {
  const skips: SkipStats = { count: 0, examples: [] };
  const raw = options.raw ?? false;
  const skipInvalid = options.skipInvalid ?? false;
  let format = options.format ?? 'auto';
  const dir = await isDirectory(path);
  if (format === 'auto' && dir) format = 'dir';
  if (format === 'dir') {
    if (!dir) throw new UsageError(`--format dir needs a directory, but ${path === '-' ? STDIN_NAME : path} is not one`);
    let read = 0;
    const ctx = makeContext(path, raw, skipInvalid, skips);
    return {
      name: path,
      format: 'dir',
      delimiter: undefined,
      size: undefined,
      bytesRead: () => read,
      header: undefined,
      skips,
      records: limited(readDirectory(path, ctx, (n) => (read += n)), options.limit),
    };
  }
  if (dir) throw new UsageError(`${path} is a directory: use --format dir (or auto)`);
  const source = await openSource(path, options.stdin);
  const name = options.displayName ?? source.name;
  const ctx = makeContext(name, raw, skipInvalid, skips);
  let chunks: AsyncIterable<TextChunk> = utf8Chunks(source.chunks, { file: name, badLines: ctx.badLines });
  if (format === 'auto' && path !== '-') format = formatFromExtension(path) ?? 'auto';
  if (format === 'auto') {
    const it = chunks[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done) {
      format = 'text';
      chunks = (async function* () {})();
    } else {
      const nl = first.value.text.indexOf('\n');
      format = sniffFormat(nl < 0 ? first.value.text : first.value.text.slice(0, nl));
      chunks = prepend(first.value, it);
    }
  }
  const fmt = format as Exclude<InputFormat, 'dir'>;
  const delimiter = fmt === 'tsv' ? '\t' : fmt === 'csv' ? (options.delimiter ?? ',') : undefined;
  const opened: OpenedInput = {
    name,
    format: fmt,
    delimiter,
    size: source.size,
    bytesRead: source.bytesRead,
    header: undefined,
    skips,
    records: undefined as unknown as AsyncGenerator<InputRecord>,
  };
  let records: AsyncGenerator<InputRecord>;
  if (fmt === 'tsv' || fmt === 'csv') {
    records = readDelimited(chunks, ctx, delimiter!, options.columns ?? {}, (h) => (opened.header = h));
  } else if (fmt === 'jsonl') {
    records = readJsonl(textLines(chunks), ctx, options.fields ?? {});
  } else if (fmt === 'idtext') {
    records = readIdTextLines(textLines(chunks), ctx);
  } else {
    records = readTextLines(textLines(chunks), ctx);
  }
  (opened as { records: AsyncGenerator<InputRecord> }).records = limited(records, options.limit);
  return opened;
}
