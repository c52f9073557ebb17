/**
 * Reading an input into memory for the core: the texts once (never the raw file), with ids and rows.
 * @module
 */
import { createReadStream, createWriteStream, mkdtempSync, promises as fsp } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { openInput, refuseFieldFlags, type OpenedInput, type ReadOptions } from '../io/read/read.js';
import { InputError } from '../common/errors.js';
import { removeOnSignal } from '../io/write/output.js';
import { skipReport, type SkipReport, type SkipStats } from '../io/read/record.js';
import { rangeableFormat } from '../io/ranges/lineRanges.js';
import type { RangedSource } from '../dedup/rangedSource.js';
import { forgetIdLines, keepIdAndRow } from '../dedup/dedupFile.js';
import type { Reporter } from './report.js';
import { int } from './report.js';
import { checkHeap, checkStreamHeap, inMemoryMost } from './heap.js';
import { ownTempDir } from '../io/read/inputStamps.js';

/** A corpus read into memory (or, streamed, its ids and rows only). */
export interface Corpus {
  /** Document texts; empty when the corpus is streamed ({@link streamCorpus}). */
  texts: string[];
  /** Number of documents. */
  count: number;
  /** Explicit ids (from --id, id⇥text, directory paths), or undefined when the row number is the id. */
  ids: string[] | undefined;
  /** The input row number of each document. */
  rows: number[];
  /** The input, for its name, format, header and skip counts. */
  input: OpenedInput;
  /** Bytes read. */
  bytes: number;
  /** Time spent reading, ms. */
  readMs: number;
}

export { idOf } from '../dedup/dedupFile.js';

/**
 * The input's format for the summary line: its format, or for shards of several formats each
 * format with its number of shards (`mixed: 3 jsonl, 1 parquet, 1 csv`), in order of appearance.
 */
export function formatLabel(input: OpenedInput): string {
  const formats = input.shardFormats;
  if (!formats || formats.length === 0 || formats.every((f) => f === formats[0])) return input.format;
  const counts = new Map<string, number>();
  for (const f of formats) counts.set(f, (counts.get(f) ?? 0) + 1);
  return `mixed: ${[...counts].map(([f, n]) => `${n} ${f}`).join(', ')}`;
}

/** Reads every record of `file`, with a progress bar on a TTY. */
export async function loadCorpus(file: string, options: ReadOptions, reporter: Reporter): Promise<Corpus> {
  const t0 = performance.now();
  const input = await openInput(file, options);
  // Every text is held in memory: fail with a clear message before V8 aborts with a native stack.
  const gb = (b: number) => `${(b / 1e9).toFixed(b < 1e8 ? 3 : 2)} GB`;
  const advice =
    'use --stream (texts stay on disk and are read again for each pass), raise the limit (NODE_OPTIONS=--max-old-space-size=MB) or split the input';
  const most = inMemoryMost();
  if (input.size !== undefined && input.size > most) {
    throw new InputError(input.name, undefined, `is ${gb(input.size)}, more than the ${gb(most)} this process may hold; ${advice}`);
  }
  const bar = reporter.progress('read', 'bytes', input.size);
  const texts: string[] = [];
  const idsAndRows: Pick<Corpus, 'ids' | 'rows'> = { ids: undefined, rows: [] };
  // The texts held, and 1.5× their bytes more for the later steps (2.5× the input in all, docs/operations.md).
  const check = (): void => checkHeap(1, () => `${int(texts.length)} documents (${gb(input.bytesRead())} of ${input.name})`, advice, 1.5 * input.bytesRead());
  try {
    for await (const r of input.records) {
      keepIdAndRow(idsAndRows, r, input);
      texts.push(r.text);
      if ((texts.length & 1023) === 0) {
        bar.update(input.bytesRead(), texts.length);
        check();
      }
    }
    check();
  } finally {
    bar.stop();
    forgetIdLines(idsAndRows);
  }
  const readMs = performance.now() - t0;
  const bytes = input.bytesRead();
  reporter.verbose(
    `read ${int(texts.length)} docs from ${input.name} [${input.format}]: ${(bytes / 1e6).toFixed(1)} MB in ${Math.round(readMs)} ms (${
      (bytes / 1e3 / Math.max(readMs, 1e-3)).toFixed(1)
    } MB/s)`,
  );
  warnSkipped(reporter, input);
  return { texts, count: texts.length, ...idsAndRows, input, bytes, readMs };
}

/** Warns once about the invalid records an input skipped (--skip-invalid), naming the first. */
export function warnSkipped(reporter: Reporter, input: OpenedInput): void {
  warnSkips(reporter, skipReport(input.skips, input.shards !== undefined));
}

/**
 * The warning about skipped records, for one process and for a sharded job's end alike: how many,
 * in which files (several files: each with its count), and the first problem.
 */
export function warnSkips(reporter: Reporter, r: SkipReport): void {
  if (r.count > 0) {
    const per = r.perFile;
    const where = per
      ? ` in ${per.size} file${per.size === 1 ? '' : 's'} (${[...per].slice(0, 10).map(([f, c]) => `${f}: ${int(c)}`).join(', ')}${per.size > 10 ? ', …' : ''})`
      : '';
    reporter.warn(`skipped ${int(r.count)} invalid record${r.count === 1 ? '' : 's'}${where}${r.first !== undefined ? `; first: ${r.first}` : ''}`);
  }
  // Quoted line breaks are legal CSV, but a record made of several lines should never go unnoticed.
  const m = r.multiline ?? 0;
  if (m > 0) reporter.warn(`${int(m)} record${m === 1 ? ' spans' : 's span'} several lines (line breaks inside quoted fields); first: ${r.firstMultiline}`);
}

/** Documents per batch handed to the pipeline while streaming. */
const STREAM_BATCH = 1024;
/**
 * The share of the heap a streamed run's first pass may fill (ids, rows and the band keys' bookkeeping
 * grow with the documents; the later passes add little on the heap), and what to do past it.
 */
const STREAM_HEAP = 0.85;
const STREAM_ADVICE = 'raise the limit (NODE_OPTIONS=--max-old-space-size=MB) or split the input';
const mbOf = (b: number): string => `${(b / 1e6).toFixed(1)} MB`;

/**
 * A corpus whose texts stay on disk: `source` reads `file` again for each pass of the streaming
 * pipeline (signing, then exact verification). The first pass also collects ids and rows into `corpus` (complete once it has run);
 * later passes must find the same number of documents.
 */
export async function streamCorpus(file: string, options: ReadOptions, reporter: Reporter): Promise<{ corpus: Corpus; source: () => AsyncIterable<string[]> }> {
  checkStreamHeap(options.displayName ?? file);
  const first = await openInput(file, options);
  // readMs stays 0: reading is part of the pipeline's passes, timed there.
  const corpus: Corpus = { texts: [], count: 0, ids: undefined, rows: [], input: first, bytes: 0, readMs: 0 };
  let passes = 0;
  async function* pass(): AsyncGenerator<string[]> {
    const n = passes++;
    // A sharded input is resolved again (each shard's format from its name); one file keeps the format found.
    const input = n === 0 ? first : await openInput(file, first.shards ? options : { ...options, format: first.format, displayName: first.name });
    // Later passes verify: the pipeline's own verify bar shows them.
    const bar = n === 0 ? reporter.progress('sign', 'bytes', input.size) : { update: () => undefined, stop: () => undefined };
    let batch: string[] = [];
    let count = 0;
    try {
      for await (const r of input.records) {
        if (n === 0) keepIdAndRow(corpus, r, input);
        else if (r.row !== corpus.rows[count]) {
          throw new Error(`${input.name} changed while it was being read (record ${count})`);
        }
        count++;
        batch.push(r.text);
        if (batch.length === STREAM_BATCH) {
          yield batch;
          batch = [];
          bar.update(input.bytesRead(), count);
          if (n === 0) checkHeap(STREAM_HEAP, () => `${int(count)} documents (${mbOf(input.bytesRead())} of ${input.name})`, STREAM_ADVICE);
        }
      }
      if (batch.length > 0) yield batch;
    } finally {
      bar.stop();
    }
    if (n === 0) {
      forgetIdLines(corpus);
      corpus.count = count;
      corpus.bytes = input.bytesRead();
      warnSkipped(reporter, input);
    } else if (count !== corpus.count) {
      throw new Error(`${input.name} changed while it was being read (${int(count)} records instead of ${int(corpus.count)})`);
    }
  }
  return { corpus, source: pass };
}

/**
 * A corpus whose texts stay on disk and that the pipeline's workers read themselves, in byte ranges
 * (see dedup/rangedSource.ts): for a plain, uncompressed JSONL, text, id⇥text or TSV (without
 * quotes) file, not sharded,
 * read whole. Undefined when the input is not such a file (then {@link streamCorpus} reads it).
 * The corpus's ids, rows and skip counts fill in as pass 1 places each range, with the same
 * values, the same duplicate-id check and the same errors as a sequential read.
 */
export async function rangedCorpus(file: string, options: ReadOptions, reporter: Reporter): Promise<{ corpus: Corpus; source: RangedSource } | undefined> {
  if (options.limit !== undefined || options.raw || options.inputs) return undefined;
  const format = rangeableFormat(file, options.format ?? 'auto', options.tsvQuotes);
  if (!format) return undefined;
  const st = await fsp.stat(file);
  const name = options.displayName ?? file;
  checkStreamHeap(name);
  refuseFieldFlags(name, format, options);
  const skips: SkipStats = { count: 0, examples: [] };
  let bytes = 0;
  let bom = false;
  const input: OpenedInput = {
    name,
    format,
    delimiter: format === 'tsv' ? '\t' : undefined,
    size: st.size,
    bytesRead: () => bytes,
    header: undefined,
    skips,
    get bom() {
      return bom;
    },
    records: (async function* () {})(),
  };
  const corpus: Corpus = { texts: [], count: 0, ids: undefined, rows: [], input, bytes: 0, readMs: 0 };
  const bar = reporter.progress('sign', 'bytes', st.size);
  const seen = new Map<string, number>();
  const source: RangedSource = {
    kind: 'ranges',
    spec: { path: file, name, format, fields: options.fields, columns: options.columns, skipInvalid: options.skipInvalid ?? false },
    onRecords: (r) => {
      for (let i = 0; i < r.count; i++) {
        const id = r.ids?.[i];
        if (id !== undefined) {
          const first = seen.get(id);
          if (first !== undefined) throw new InputError(name, r.lines[i], `duplicate id "${id}" (first on line ${first}); ids must be unique`);
          seen.set(id, r.lines[i]!);
          if (!corpus.ids) corpus.ids = corpus.rows.map(String);
          corpus.ids.push(id);
        } else if (corpus.ids) corpus.ids.push(String(r.rows[i]));
        corpus.rows.push(r.rows[i]!);
      }
      if (r.bom) bom = true;
      if (r.skipped > 0) {
        skips.count += r.skipped;
        skips.perFile ??= new Map();
        skips.perFile.set(name, (skips.perFile.get(name) ?? 0) + r.skipped);
        for (const e of r.examples) if (skips.examples.length < 5) skips.examples.push(e);
      }
      corpus.count += r.count;
      bytes = corpus.bytes = r.bytesRead;
      bar.update(bytes, corpus.count);
      checkHeap(STREAM_HEAP, () => `${int(corpus.count)} documents (${mbOf(bytes)} of ${name})`, STREAM_ADVICE);
    },
    onEnd: (ok) => {
      bar.stop();
      if (ok) warnSkipped(reporter, input);
    },
  };
  return { corpus, source };
}

/**
 * Whether input `file` is a pipe, not a file: `-`, a FIFO, a character device or a socket (`<(zcat
 * x.gz)` is `/dev/fd/63`). Such an input is read once, as it comes: the readers' positional reads
 * (a Parquet file's tail, byte ranges) and a second pass need a copy ({@link spoolInput}).
 */
export async function isPipe(file: string): Promise<boolean> {
  if (file === '-') return true;
  const st = await fsp.stat(file).catch(() => undefined);
  return st !== undefined && (st.isFIFO() || st.isCharacterDevice() || st.isSocket());
}

/**
 * Copies the pipe `from` names ({@link isPipe}; `-`: standard input) to a temp file. The copy keeps
 * the pipe's name, so its extension still tells its format. Returns its path and a cleanup
 * function; the copy is also removed on SIGINT, SIGTERM or SIGHUP before the cleanup runs, and at
 * once if the copy fails.
 */
async function spoolPipe(from: string): Promise<{ file: string; cleanup: () => Promise<void> }> {
  const stdin = from === '-' ? process.stdin : createReadStream(from);
  // Made and tracked in one turn of the event loop: a signal's handler runs only between turns.
  const dir = ownTempDir(mkdtempSync(path.join(os.tmpdir(), 'neardup-')));
  const untrack = removeOnSignal(dir);
  const cleanup = async (): Promise<void> => {
    await fsp.rm(dir, { recursive: true, force: true });
    untrack();
  };
  const file = path.join(dir, from === '-' ? 'stdin' : path.basename(from));
  try {
    const out = createWriteStream(file);
    await once(out, 'open');
    await pipeline(stdin, out);
  } catch (e) {
    await cleanup();
    throw e;
  }
  return { file, cleanup };
}

/** A pipe's copy ({@link spoolInput}): the file to read, the name messages give it, and its removal. */
export interface InputCopy {
  /** The copy, in a temp directory of its own, under the pipe's base name. */
  file: string;
  /** The input as the user named it (`<stdin>` for `-`). */
  displayName: string;
  /** Removes the copy (its directory). */
  cleanup: () => Promise<void>;
}

/**
 * The one way a command takes a pipe as an input: a named pipe `file` ({@link isPipe}) copied by
 * {@link spoolPipe}, for readers that sniff a format by a positional read or read twice; with
 * `stdin`, `-` too (named `<stdin>`). Undefined for a file, and for `-` without `stdin` (the caller
 * then reads standard input as it comes). Given `copies`, the copy joins them, for
 * {@link removeCopies} to remove at the end.
 */
export async function spoolInput(file: string, options: { stdin?: boolean; copies?: InputCopy[] } = {}): Promise<InputCopy | undefined> {
  if (file === '-' ? !options.stdin : !(await isPipe(file))) return undefined;
  const copy = { ...(await spoolPipe(file)), displayName: file === '-' ? '<stdin>' : file };
  options.copies?.push(copy);
  return copy;
}

/**
 * Runs `body` on input `file` as it is read: a named pipe's copy ({@link spoolInput}; with `stdin`,
 * standard input's too), with read options that name it as given. The copy is removed when `body`
 * ends, however it ends.
 */
export async function withInputCopy<T>(
  file: string,
  read: ReadOptions,
  body: (file: string, read: ReadOptions) => Promise<T>,
  options: { stdin?: boolean } = {},
): Promise<T> {
  const copy = await spoolInput(file, options);
  try {
    return await body(copy?.file ?? file, copy ? { ...read, displayName: copy.displayName } : read);
  } finally {
    await copy?.cleanup();
  }
}

/** Removes every copy of `copies` ({@link spoolInput}), each once, even if one removal fails. */
export async function removeCopies(copies: InputCopy[]): Promise<void> {
  const all = copies.splice(0);
  await Promise.allSettled(all.map((c) => c.cleanup()));
}
