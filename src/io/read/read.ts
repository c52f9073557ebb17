/**
 * Opening any supported input as a stream of {@link InputRecord}s.
 * @module
 */
import { promises as fsp } from 'node:fs';
import type { Readable } from 'node:stream';
import { excerpt, InputError, UsageError } from '../../common/errors.js';
import { formatFromExtension, sniffFormat, type InputFormat } from './formats.js';
import { openSource, STDIN_NAME } from './source.js';
import { textLines, utf8Chunks, type TextChunk } from '../codec/utf8.js';
import { makeContext, type InputRecord, type SkipStats } from './record.js';
import { readDelimited, type ColumnSpec, type DelimitedHeader } from './delimited.js';
import { readJsonl, type FieldSpec } from './jsonl.js';
import { readIdTextLines, readTextLines } from './lines.js';
import { readDirectory } from './dir.js';
import { readParquet } from './parquet.js';
import { resolveShards, type ShardList } from './shards.js';

/** Options of {@link openInput}. */
export interface ReadOptions {
  /** The format; `auto` (default) decides from the extension, or from the first line when that says nothing. */
  format?: InputFormat | 'auto';
  /** TSV/CSV columns. */
  columns?: ColumnSpec;
  /** JSONL fields and Parquet columns (dotted paths reach into objects and structs). */
  fields?: FieldSpec;
  /** CSV field delimiter. Default `,` (TSV always uses a tab). */
  delimiter?: string;
  /**
   * Read TSV with CSV-style quotes (a field starting with `"` may hold tabs and line breaks).
   * Default false: TSV is IANA text/tab-separated-values, one record per line, no quoting.
   */
  tsvQuotes?: boolean;
  /** Skip invalid records (counted in `skips`) instead of failing on the first. Default false. */
  skipInvalid?: boolean;
  /** Keep each record's raw text, to rewrite the input. Default false. */
  raw?: boolean;
  /** Standard input, for `-`. Default `process.stdin`. */
  stdin?: Readable;
  /** The name used in messages instead of the path (e.g. `<stdin>` for a spooled copy). */
  displayName?: string;
  /**
   * Several inputs read as one, in the order given (the CLI's several positional inputs): their
   * shards. {@link openInput} then reads these and its path only names them in messages.
   */
  inputs?: ShardList;
  /** Read only the first `limit` records (e.g. 500 for a quick look). Default: all. */
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
  /** True once the input was seen to start with a UTF-8 byte-order mark (dropped from the text). */
  bom?: boolean;
  /** The records, in input order. Iterate once. */
  readonly records: AsyncGenerator<InputRecord>;
  /**
   * For a sharded input (a glob or a directory of shards): the shards, in reading order. Records
   * then carry their shard's index, and rows are numbered across all shards.
   */
  readonly shards?: ShardList;
  /** For a sharded input: the resolved format of each shard opened so far, by shard index. */
  readonly shardFormats?: InputFormat[];
  /** Closes a single file whose records were not read (a reader that read its bytes another way). */
  close?(): void;
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

/** Whether `path` starts as a Parquet file does (PAR1, its first and last four bytes). */
export async function isParquetFile(path: string): Promise<boolean> {
  const fh = await fsp.open(path, 'r').catch(() => undefined);
  if (!fh) return false;
  try {
    const b = Buffer.alloc(4);
    const { bytesRead } = await fh.read(b, 0, 4, 0);
    return bytesRead === 4 && b.toString('latin1') === 'PAR1';
  } finally {
    await fh.close();
  }
}

/**
 * Opens `path` for reading records: a file (`.gz` and `.zst` decompressed), `-` for standard
 * input, a directory (of documents, or of shards), or a glob of shards (see ./shards.ts).
 */
export async function openInput(path: string, options: ReadOptions = {}): Promise<OpenedInput> {
  // The limit applies to the whole input (all shards together), so it is applied here only.
  const { limit, inputs, ...rest } = options;
  // Each shard of `inputs` is opened without it (openShards gets `rest`), so they are never read twice.
  const shards = inputs ?? (await resolveShards(path, rest.format ?? 'auto', rest.skipInvalid ?? false));
  const opened = shards ? await openShards(shards, rest) : await openSingle(path, rest, { count: 0, examples: [] });
  if (limit !== undefined) (opened as { records: AsyncGenerator<InputRecord> }).records = firstRecords(opened.records, limit);
  return opened;
}

/**
 * The rows of one file read with `skipped` invalid records skipped, from its last valid record's
 * row and its count of valid records: invalid records after the last valid one are rows too, as
 * in the concatenation of shards. Every reader of shards in sequence numbers the next shard from it.
 */
export function rowCount(lastRow: number, valid: number, skipped: number): number {
  return Math.max(lastRow + 1, valid + skipped);
}

/** Opens the shards of a sharded input one after the other, as one stream of records. */
async function openShards(list: ShardList, options: ReadOptions): Promise<OpenedInput> {
  const skips: SkipStats = { count: 0, examples: [] };
  // Refused symbolic links (with --skip-invalid): skipped records, counted and named.
  const refusedCtx = makeContext(list.name, false, true, skips);
  for (const r of list.refused ?? []) refusedCtx.invalid(undefined, r.reason, r.path);
  let size = 0;
  for (const s of list.shards) size += (await fsp.stat(s.path).catch(() => undefined))?.size ?? 0;
  let done = 0;
  let current: OpenedInput | undefined;
  const formats: InputFormat[] = [];
  const opened: OpenedInput = {
    name: list.name,
    format: 'jsonl',
    delimiter: undefined,
    size,
    bytesRead: () => done + (current?.bytesRead() ?? 0),
    header: undefined,
    skips,
    records: undefined as unknown as AsyncGenerator<InputRecord>,
    shards: list,
    shardFormats: formats,
  };
  // The first shard is opened now, so that its format and errors show before any record is read.
  current = await openSingle(list.shards[0]!.path, { ...options, displayName: list.shards[0]!.name }, skips);
  formats.push(current.format);
  (opened as { format: InputFormat }).format = current.format;
  (opened as { delimiter: string | undefined }).delimiter = current.delimiter;
  async function* records(): AsyncGenerator<InputRecord> {
    // Rows continue across shards: a shard's rows start after the last row of the one before.
    let offset = 0;
    for (let k = 0; k < list.shards.length; k++) {
      if (k > 0) {
        current = await openSingle(list.shards[k]!.path, { ...options, displayName: list.shards[k]!.name }, skips);
        formats.push(current.format);
      }
      const input = current!;
      const skippedBefore = skips.count;
      let valid = 0;
      let last = -1;
      for await (const r of input.records) {
        if (k === 0 && opened.header === undefined) opened.header = input.header;
        last = r.row;
        valid++;
        r.row += offset;
        r.shard = k;
        yield r;
      }
      done += input.size ?? input.bytesRead();
      current = undefined;
      offset += rowCount(last, valid, skips.count - skippedBefore);
    }
  }
  (opened as { records: AsyncGenerator<InputRecord> }).records = records();
  return opened;
}

/**
 * JSONL field paths given for a format that has columns or none (`--id-field` on TSV): the CLI
 * passes `--text-field`/`--id-field` as `fields` and `--text`/`--id` as both, so `fields` that
 * differ from `columns` were asked for by name, and would be ignored silently.
 */
export function refuseFieldFlags(name: string, format: InputFormat, options: ReadOptions): void {
  if (format === 'jsonl' || format === 'parquet') return;
  const f = options.fields ?? {};
  const c = options.columns ?? {};
  const what = format === 'tsv' || format === 'csv'
    ? `${format.toUpperCase()} has columns: name the id column with --id, the text columns with --text`
    : `${format} input has no fields`;
  if (f.id !== undefined && f.id !== c.id) throw new UsageError(`--id-field ${f.id} names a JSONL field, but ${name} is ${format}: ${what}`);
  // Compared by value: a job's read options come back from job.json as new arrays.
  if (f.text !== undefined && JSON.stringify(f.text) !== JSON.stringify(c.text))
    throw new UsageError(`--text-field ${f.text.join(',')} names JSONL fields, but ${name} is ${format}: ${what}`);
}

/** Other delimiters a CSV header may be split by: the option that reads them. */
const OTHER_DELIMITERS: readonly [string, string][] = [[';', "--delimiter ';'"], ['|', "--delimiter '|'"], ['\t', '--format tsv']];

/**
 * Refuses (exit 2, naming the file and the option) a TSV/CSV header that says the input is not what
 * it is read as: a JSON object (JSON lines given `--format tsv` or named .csv), or, read as CSV
 * with the default comma, one column that another delimiter splits (a semicolon-separated CSV,
 * whose ids would silently become part of every text). An explicit `--delimiter ,` reads it as given.
 */
function refuseMisreadHeader(name: string, fmt: 'tsv' | 'csv', delimiter: string | undefined, header: string): void {
  if (header.trimStart().startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(header);
    } catch {
      // not JSON: an odd header, read as such
    }
    if (json !== null && typeof json === 'object' && !Array.isArray(json)) {
      throw new InputError(name, 1, `the first line is a JSON object, not a ${fmt.toUpperCase()} header: the input looks like JSON lines`, undefined, {
        option: 'format',
        value: 'jsonl',
      });
    }
  }
  if (fmt !== 'csv' || delimiter !== undefined || header.includes(',')) return;
  for (const [d, option] of OTHER_DELIMITERS) {
    if (header.split(d).filter((f) => f.trim() !== '').length >= 2) {
      throw new InputError(
        name,
        1,
        `the header "${excerpt(header, 80)}" is one column with the default comma delimiter, but it looks ${
          d === '\t' ? 'tab' : `"${d}"`
        }-separated: read it with ${option} (or give --delimiter , to read it as one column)`,
      );
    }
  }
}

/** Opens a directory of documents (format dir). */
function openDirectoryInput(path: string, options: ReadOptions, skips: SkipStats): OpenedInput {
  refuseFieldFlags(path, 'dir', options);
  let read = 0;
  const ctx = makeContext(path, options.raw ?? false, options.skipInvalid ?? false, skips);
  return {
    name: path,
    format: 'dir',
    delimiter: undefined,
    size: undefined,
    bytesRead: () => read,
    header: undefined,
    skips,
    bom: false,
    records: readDirectory(path, ctx, (n) => (read += n)),
  };
}

/** Opens a Parquet file (not standard input: the footer is at the end). */
async function openParquetInput(path: string, options: ReadOptions, skips: SkipStats): Promise<OpenedInput> {
  let read = 0;
  const name = options.displayName ?? path;
  const ctx = makeContext(name, options.raw ?? false, options.skipInvalid ?? false, skips);
  const st = await fsp.stat(path).catch(() => undefined);
  return {
    name,
    format: 'parquet',
    delimiter: undefined,
    size: st?.size,
    bytesRead: () => read,
    header: undefined,
    skips,
    records: readParquet(path, ctx, options.fields ?? {}, (n) => (read += n)),
  };
}

/** Opens one file, standard input or directory of documents. */
async function openSingle(path: string, options: ReadOptions, skips: SkipStats): Promise<OpenedInput> {
  const raw = options.raw ?? false;
  const skipInvalid = options.skipInvalid ?? false;
  let format = options.format ?? 'auto';
  const dir = await isDirectory(path);
  if (format === 'auto' && dir) format = 'dir';
  if (format === 'dir') {
    if (!dir) throw new UsageError(`format dir needs a directory, but ${path === '-' ? STDIN_NAME : path} is not one`, { option: 'format' });
    return openDirectoryInput(path, options, skips);
  }
  if (dir) throw new UsageError(`${path} is a directory, not a ${format} file: read it as format dir (or auto)`, { option: 'format', value: 'dir' });
  if (format === 'auto' && path !== '-') format = formatFromExtension(path) ?? ((await isParquetFile(path)) ? 'parquet' : 'auto');
  if (format === 'parquet') {
    if (path === '-') throw new UsageError('Parquet cannot be read from standard input (the footer is at the end of the file): give the file');
    return openParquetInput(path, options, skips);
  }
  const source = await openSource(path, options.stdin);
  const name = options.displayName ?? source.name;
  const ctx = makeContext(name, raw, skipInvalid, skips);
  const bomSeen = { bom: false };
  let chunks: AsyncIterable<TextChunk> = utf8Chunks(source.chunks, { file: name, badLines: ctx.badLines, onBom: () => (bomSeen.bom = true) });
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
  const fmt = format as Exclude<InputFormat, 'dir' | 'parquet'>;
  const delimiter = fmt === 'tsv' ? '\t' : fmt === 'csv' ? (options.delimiter ?? ',') : undefined;
  const opened: OpenedInput = {
    name,
    format: fmt,
    delimiter,
    size: source.size,
    bytesRead: source.bytesRead,
    header: undefined,
    skips,
    get bom() {
      return bomSeen.bom;
    },
    records: undefined as unknown as AsyncGenerator<InputRecord>,
    close: () => source.close(),
  };
  let records: AsyncGenerator<InputRecord>;
  refuseFieldFlags(name, fmt, options);
  if (fmt === 'tsv' || fmt === 'csv') {
    // The header line, read ahead: JSON lines or another delimiter read as TSV/CSV are refused.
    const it = chunks[Symbol.asyncIterator]();
    const first = await it.next();
    if (!first.done) {
      const nl = first.value.text.indexOf('\n');
      refuseMisreadHeader(name, fmt, options.delimiter, (nl < 0 ? first.value.text : first.value.text.slice(0, nl)).replace(/\r$/, ''));
      chunks = prepend(first.value, it);
    } else chunks = (async function* () {})();
    records = readDelimited(chunks, ctx, {
      delimiter: delimiter!,
      spec: options.columns ?? {},
      onHeader: (h) => (opened.header = h),
      quotes: fmt === 'csv' || options.tsvQuotes === true,
    });
  } else if (fmt === 'jsonl') {
    records = readJsonl(textLines(chunks), ctx, options.fields ?? {});
  } else if (fmt === 'idtext') {
    records = readIdTextLines(textLines(chunks), ctx);
  } else {
    records = readTextLines(textLines(chunks), ctx);
  }
  (opened as { records: AsyncGenerator<InputRecord> }).records = records;
  return opened;
}
