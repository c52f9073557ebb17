/**
 * Reading an input into memory for the core: the texts once (never the raw file), with ids and rows.
 * @module
 */
import { createWriteStream, promises as fsp } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { getHeapStatistics } from 'node:v8';
import { openInput, type OpenedInput, type ReadOptions } from '../io/read.js';
import { InputError } from '../io/errors.js';
import type { InputRecord } from '../io/record.js';
import type { Reporter } from './report.js';
import { int } from './report.js';

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

/** The id of document i: its explicit id, else its row number. */
export function idOf(corpus: Pick<Corpus, 'ids' | 'rows'>, i: number): string | number {
  return corpus.ids ? corpus.ids[i]! : corpus.rows[i]!;
}

/** Reads every record of `file`, with a progress bar on a TTY. */
export async function loadCorpus(file: string, options: ReadOptions, reporter: Reporter): Promise<Corpus> {
  const t0 = performance.now();
  const input = await openInput(file, options);
  // Every text is held in memory: fail with a clear message before V8 aborts with a native stack.
  const heapLimit = getHeapStatistics().heap_size_limit;
  const gb = (b: number) => `${(b / 1e9).toFixed(2)} GB`;
  const advice = 'use --stream (texts stay on disk and are read again for each pass), raise the limit (NODE_OPTIONS=--max-old-space-size=MB) or split the input';
  if (input.size !== undefined && input.size > heapLimit) {
    throw new InputError(input.name, undefined, `is ${gb(input.size)}, more than the ${gb(heapLimit)} this process may hold; ${advice}`);
  }
  const bar = reporter.progress('read', 'bytes', input.size);
  const texts: string[] = [];
  const idsAndRows: Pick<Corpus, 'ids' | 'rows'> = { ids: undefined, rows: [] };
  try {
    for await (const r of input.records) {
      keepIdAndRow(idsAndRows, r);
      texts.push(r.text);
      if ((texts.length & 1023) === 0) {
        bar.update(input.bytesRead(), texts.length);
        if ((texts.length & 4095) === 0 && getHeapStatistics().used_heap_size > 0.7 * heapLimit) {
          throw new Error(`out of memory after ${int(texts.length)} documents (${gb(input.bytesRead())} of ${input.name}): the heap limit is ${gb(heapLimit)}; ${advice}`);
        }
      }
    }
  } finally {
    bar.stop();
  }
  const readMs = performance.now() - t0;
  const bytes = input.bytesRead();
  reporter.verbose(
    `read ${int(texts.length)} docs from ${input.name} [${input.format}]: ${(bytes / 1e6).toFixed(1)} MB in ${Math.round(readMs)} ms (${((bytes / 1e3 / Math.max(readMs, 1e-3))).toFixed(1)} MB/s)`,
  );
  warnSkipped(reporter, input);
  return { texts, count: texts.length, ...idsAndRows, input, bytes, readMs };
}

/** Records a document's id (explicit ids switch on at the first one; earlier rows become ids) and row. */
function keepIdAndRow(corpus: Pick<Corpus, 'ids' | 'rows'>, r: InputRecord): void {
  if (r.id !== undefined) {
    if (!corpus.ids) corpus.ids = corpus.rows.map(String);
    corpus.ids.push(r.id);
  } else if (corpus.ids) corpus.ids.push(String(r.row));
  corpus.rows.push(r.row);
}

/** Warns once about the invalid records an input skipped (--skip-invalid), naming the first. */
export function warnSkipped(reporter: Reporter, input: OpenedInput): void {
  if (input.skips.count > 0) {
    const per = input.skips.perFile;
    // Several files (shards, or files in a directory): say which, and how many records each lost.
    const where =
      per && (per.size > 1 || input.shards)
        ? ` in ${per.size} file${per.size === 1 ? '' : 's'} (${[...per].slice(0, 10).map(([f, c]) => `${f}: ${int(c)}`).join(', ')}${per.size > 10 ? ', …' : ''})`
        : '';
    reporter.warn(`skipped ${int(input.skips.count)} invalid record${input.skips.count === 1 ? '' : 's'}${where}; first: ${input.skips.examples[0]!.message}`);
  }
}

/** Documents per batch handed to the pipeline while streaming. */
const STREAM_BATCH = 1024;

/**
 * A corpus whose texts stay on disk: `source` reads `file` again for each pass of the streaming
 * pipeline (signing, then exact verification). The first pass also collects ids and rows into `corpus` (complete once it has run);
 * later passes must find the same number of documents.
 */
export async function streamCorpus(file: string, options: ReadOptions, reporter: Reporter): Promise<{ corpus: Corpus; source: () => AsyncIterable<string[]> }> {
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
        if (n === 0) keepIdAndRow(corpus, r);
        else if (r.row !== corpus.rows[count]) {
          throw new Error(`${input.name} changed while it was being read (record ${count})`);
        }
        count++;
        batch.push(r.text);
        if (batch.length === STREAM_BATCH) {
          yield batch;
          batch = [];
          bar.update(input.bytesRead(), count);
        }
      }
      if (batch.length > 0) yield batch;
    } finally {
      bar.stop();
    }
    if (n === 0) {
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
 * Copies standard input to a temp file, for outputs that read the input twice. Returns its path and
 * a cleanup function.
 */
export async function spoolStdin(stdin: NodeJS.ReadableStream = process.stdin): Promise<{ file: string; cleanup: () => Promise<void> }> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'neardup-'));
  const file = path.join(dir, 'stdin');
  const out = createWriteStream(file);
  await once(out, 'open');
  await pipeline(stdin, out);
  return { file, cleanup: () => fsp.rm(dir, { recursive: true, force: true }) };
}
