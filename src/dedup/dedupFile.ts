/**
 * A deduplicated (or annotated) copy of an input file: {@link dedupFile} for the library, and
 * {@link writeCopy}, the second pass that `neardup dedup --output dedup|annotate` runs too. The
 * copy keeps the input's format and compression (Parquet stays Parquet, shards give a directory of
 * shards with the same names) and is written atomically.
 * @module
 */
import path from 'node:path';
import { stat } from 'node:fs/promises';
import { openInput, type OpenedInput, type ReadOptions } from '../io/read/read.js';
import { openOutput, type OutputSink, type PendingCommits } from '../io/write/output.js';
import { refuseAliasedOutputs } from '../io/write/alias.js';
import { InputError, UsageError } from '../common/errors.js';
import { copyNameProblem, rewriteFile, rewriteRecords, rewriteShards, type RewriteMode, type RowVerdict } from '../io/write/rewrite.js';
import type { InputRecord } from '../io/read/record.js';
import { shardName } from '../io/read/shards.js';
import { dedup } from './dedup.js';
import type { DedupOptions, DedupResult } from './options.js';
import { withIds, type DedupRecordsResult } from './records.js';
import { keptSimilarities } from '../cluster/dropped.js';
import { keepReadError, keepReadOptions, parseKeepPolicy } from '../cluster/keepPolicy.js';
import { readingInputs } from '../io/read/inputStamps.js';

/** The documents of an input as read: their count, input rows, and explicit ids if any. */
export interface CopyCorpus {
  /** Number of documents. */
  count: number;
  /** The input row number of each document. */
  rows: number[];
  /** Explicit ids (an id column or field, id⇥text, directory paths), or undefined when the row number is the id. */
  ids: string[] | undefined;
  /** The input: its name, format and shards. */
  input: OpenedInput;
}

/** The id of document i: its explicit id, else its input row number. */
export function idOf(corpus: Pick<CopyCorpus, 'ids' | 'rows'>, i: number): string | number {
  return corpus.ids ? corpus.ids[i]! : corpus.rows[i]!;
}

/** Where each explicit id was first seen, to refuse duplicates (pairs "A⇥A" and clusters ["A","A"] mean nothing). */
const idLines = new WeakMap<object, Map<string, { file: string; line: number }>>();

/** The file a record came from: its shard's path for a sharded input (or several inputs), else the input's name. */
export function recordFile(input: Pick<OpenedInput, 'name' | 'shards'>, r: Pick<InputRecord, 'shard'>): string {
  return r.shard !== undefined && input.shards ? shardName(input.shards.shards[r.shard]!) : input.name;
}

/**
 * Records a document's id (explicit ids switch on at the first one; earlier rows become ids) and row.
 * An explicit id seen before is an {@link InputError} naming both places (file and line, as a
 * sharded job names them): `input` is the input's name, or the opened input to name its shards.
 */
export function keepIdAndRow(corpus: Pick<CopyCorpus, 'ids' | 'rows'>, r: InputRecord, input: string | Pick<OpenedInput, 'name' | 'shards'>): void {
  if (r.id !== undefined) {
    let seen = idLines.get(corpus);
    if (!seen) idLines.set(corpus, seen = new Map());
    const first = seen.get(r.id);
    const file = typeof input === 'string' ? input : recordFile(input, r);
    if (first !== undefined) {
      const where = first.file === file ? `line ${first.line}` : `${first.file}:${first.line}`;
      throw new InputError(file, r.line, `duplicate id "${r.id}" (first on ${where}); ids must be unique`);
    }
    seen.set(r.id, { file, line: r.line });
    if (!corpus.ids) corpus.ids = corpus.rows.map(String);
    corpus.ids.push(r.id);
  } else if (corpus.ids) corpus.ids.push(String(r.row));
  corpus.rows.push(r.row);
}

/** Forgets the ids seen for `corpus` (once it is read). */
export function forgetIdLines(corpus: object): void {
  idLines.delete(corpus);
}

/**
 * A second pass over an input, writing its copy ({@link writeCopy}, {@link writeVerdicts}): what is
 * read again, how, and where the copy goes.
 */
export interface CopyPass {
  /** The input, read again in the same order as the first pass. */
  file: string;
  corpus: CopyCorpus;
  /** `dedup` keeps the kept documents; `annotate` keeps every document with its tags. */
  mode: RewriteMode;
  target: CopyTarget;
  /** The sink of a `sink` target. */
  sink?: OutputSink;
  /** The reader options of the first pass. */
  read: ReadOptions;
  /** `--tag-prefix`: annotate's column names. */
  tagPrefix?: string;
  /** When given, the files written are put in place by {@link PendingCommits.commit} (with the audit), not here. */
  commits?: PendingCommits;
  /** Told the documents passed so far (every 1024, and at the end). */
  onProgress?: (done: number) => void;
}

/** Where a copy goes: a sink (a text file or stdout), a file written in place of a sink (Parquet), or a directory of shards. */
export type CopyTarget = { kind: 'sink' } | { kind: 'file'; path: string } | { kind: 'shards'; path: string };

/**
 * Writes the copy of the pass's input that keeps one document per cluster (`dedup`: the cluster's
 * representative, and every document outside a cluster) or every document with its cluster
 * (`annotate`), in a second pass over the input in the same order as the first. `similarity`: each
 * document's similarity to its kept member (NaN: none), from {@link keptSimilarities}; without it
 * annotate's tag is null. Returns the number of records written. Throws when the input changed
 * between the passes.
 */
export async function writeCopy(pass: CopyPass, result: DedupResult, similarity?: Float64Array): Promise<number> {
  const clusterNo = new Int32Array(pass.corpus.count).fill(-1);
  result.clusters.forEach((c, k) => {
    for (const m of c.members) clusterNo[m] = k;
  });
  const removal = result.removal;
  return writeVerdicts(pass, (i) => {
    const c = clusterNo[i]!;
    const rep = removal ? removal.keptBy[i]! : c >= 0 ? (result.clusters[c]!.representative ?? result.clusters[c]!.members[0]!) : i;
    // rep < 0: --keep none kept no member, so no member is a duplicate of another.
    const dup = rep !== i && rep >= 0;
    const sim = dup ? similarity?.[i] : undefined;
    return {
      keep: rep === i,
      cluster: c >= 0 ? c : undefined,
      clusterSize: c >= 0 ? result.clusters[c]!.members.length : undefined,
      duplicateOf: dup ? String(idOf(pass.corpus, rep)) : undefined,
      similarity: sim === undefined || Number.isNaN(sim) ? undefined : sim,
    };
  });
}

/**
 * The second pass of {@link writeCopy}, for any verdict: writes the records of the pass's input to
 * its target, keeping (`dedup`) or tagging (`annotate`) document i as `verdictOf(i)` says, in the
 * input's order (a sharded input: one output shard per input shard, each in its own format, and
 * `_SUCCESS`). `neardup dedup --against` writes its copy with it too. Throws when the input changed
 * between the passes.
 */
export async function writeVerdicts(pass: CopyPass, verdictOf: (i: number) => RowVerdict): Promise<number> {
  const { file, corpus, mode, target, sink, tagPrefix, commits, onProgress } = pass;
  const n = corpus.count;
  let i = 0;
  const name = corpus.input.name;
  const verdict = (r: InputRecord): RowVerdict => {
    if (i >= n || r.row !== corpus.rows[i]) throw new Error(`${name} changed while it was being read (record ${i})`);
    if (onProgress && (i & 1023) === 0) onProgress(i);
    return verdictOf(i++);
  };
  // Sharded input: a directory of output shards; Parquet: a Parquet file.
  const readOptions = { ...pass.read, displayName: corpus.input.shards ? undefined : name, raw: true };
  let written: number;
  const how = { mode, verdict, tagPrefix, commits };
  if (target.kind === 'shards') {
    written = await rewriteShards(corpus.input.shards!, target.path, readOptions, how);
  } else if (target.kind === 'file') {
    written = (await rewriteFile(file, target.path, { ...readOptions, format: corpus.input.format }, how)).written;
  } else {
    if (!sink) throw new TypeError('writeCopy: a sink target needs a sink');
    const input = await openInput(file, { ...readOptions, format: corpus.input.format });
    written = await rewriteRecords(input, sink, how);
  }
  if (i !== n) throw new Error(`${name} changed while it was being read (${i} records instead of ${n})`);
  onProgress?.(i);
  return written;
}

/** Options of {@link dedupFile}. */
export interface DedupFileOptions {
  /** How to read the input: format, text columns or fields, id, delimiter… (as {@link openInput}). */
  read?: ReadOptions;
  /** The near-duplicate search, as {@link dedup}'s options. */
  dedup?: DedupOptions;
  /**
   * `dedup` (default): keep the first document of each cluster (its representative under
   * `dedup.representative`) and every document outside a cluster. `annotate`: keep every document
   * and add its cluster and the id of the document it duplicates.
   */
  mode?: RewriteMode;
}

/** The result of {@link dedupFile}: the dedup result with the documents' ids, and what was written. */
export interface DedupFileResult {
  /** The dedup result; `ids` are the input's ids (an id column or field), else its row numbers. */
  result: DedupRecordsResult;
  /** Records written to the copy. */
  written: number;
  /** Where the copy went: a file, or a directory of shards for a sharded input. */
  output: string;
}

/**
 * Writes a deduplicated copy of `input` to `output`, what `neardup dedup FILE --output dedup --out
 * OUTPUT` does: the input is read once into memory (texts, ids and rows), deduplicated with
 * {@link dedup}, and read again to copy the records kept, byte for byte, in the input's own format
 * and compression, atomically (temp file + rename), refused (an `InputChangedError`) if the input
 * changed while it was read. A sharded input (a glob or a directory of shards)
 * gives a directory of shards with the same names; a Parquet input gives a Parquet file; an existing
 * directory as `output` gets the input's file name. `output` must not be the input.
 * @example
 * ```ts
 * const { result, written } = await dedupFile('ads.tsv', 'ads.dedup.tsv', { read: { columns: { text: ['Title', 'Short Description'] } } });
 * ```
 */
export function dedupFile(input: string, output: string, options: DedupFileOptions = {}): Promise<DedupFileResult> {
  return readingInputs(() => copyDeduplicated(input, output, options));
}

/** {@link dedupFile} within its run. */
async function copyDeduplicated(input: string, output: string, options: DedupFileOptions): Promise<DedupFileResult> {
  if (typeof input !== 'string' || typeof output !== 'string' || output === '' || output === '-') {
    throw new TypeError('dedupFile(input, output): both are file paths (output not "-"; use writeCopy for another sink)');
  }
  const mode = options.mode ?? 'dedup';
  if (mode !== 'dedup' && mode !== 'annotate') throw new RangeError(`unknown mode "${String(mode)}" (expected dedup or annotate)`);
  const read = options.read ?? {};
  const opened = await openInput(input, read);
  // Before the work: an output that is the input, or a Parquet copy not named .parquet, fails now.
  const target = await copyTarget(input, output, opened).catch(async (e: unknown) => {
    await opened.records.return(undefined);
    throw e;
  });
  const corpus: CopyCorpus = { count: 0, rows: [], ids: undefined, input: opened };
  const texts: string[] = [];
  // A keep policy ranking by a field reads it as the record's title, as the CLI does.
  const keep = options.dedup?.keep;
  const field = typeof keep === 'string' ? parseKeepPolicy(keep).field : undefined;
  const fields: (string | undefined)[] | undefined = field !== undefined ? [] : undefined;
  const records = field !== undefined
    ? await openInput(input, keepReadOptions(read, parseKeepPolicy(keep as string))).catch((e: unknown) => {
      throw keepReadError(e, parseKeepPolicy(keep as string));
    })
    : undefined;
  if (records) { for await (const r of records.records) fields!.push(r.title); }
  for await (const r of opened.records) {
    keepIdAndRow(corpus, r, opened);
    texts.push(r.text);
  }
  forgetIdLines(corpus);
  corpus.count = texts.length;
  const ids0 = corpus.ids ?? corpus.rows.map(String);
  const result = fields ? dedup(texts.map((text, i) => ({ id: ids0[i]!, text, [field!]: fields[i] })), options.dedup) : dedup(texts, options.dedup);
  const ids = corpus.ids ?? corpus.rows.map(String);
  let sink: OutputSink | undefined = target.kind === 'sink' ? await openOutput(output) : undefined;
  try {
    const similarity = mode !== 'annotate'
      ? undefined
      : result.removal?.rule === 'verified'
      ? result.removal.similarity
      : await keptSimilarities(result.clusters, { count: corpus.count, texts, file: input, read }, options.dedup);
    const written = await writeCopy({ file: input, corpus, mode, target, sink, read }, result, similarity);
    await sink?.close();
    sink = undefined;
    return { result: withIds(result, ids), written, output: target.kind === 'sink' ? output : target.path };
  } catch (e) {
    await sink?.abort();
    throw e;
  }
}

/** Where {@link dedupFile} writes: as the CLI's `--out` (see src/cli/dedup/output.ts), in the library's words. */
async function copyTarget(input: string, output: string, opened: OpenedInput): Promise<CopyTarget> {
  if (opened.shards) return { kind: 'shards', path: output };
  const st = await stat(output).catch(() => undefined);
  const target = st?.isDirectory() ? path.join(output, path.basename(input)) : output;
  const problem = st?.isDirectory() ? undefined : copyNameProblem(opened.format, output);
  if (problem) throw new UsageError(`output ${output}: ${problem}`, { option: 'out' });
  await refuseAliasedOutputs([{ what: 'the output', path: target }], [{ what: 'the input', path: input }]);
  return opened.format === 'parquet' || st?.isDirectory() ? { kind: 'file', path: target } : { kind: 'sink' };
}
