/**
 * `neardup spans` on Parquet: pass 2 writes the file again as `neardup dedup` writes Parquet (the
 * same schema, codecs and row groups, src/io/write/parquetWrite.ts), each record's text column cut
 * (`--output dedup`, dropped records left out) or every record as it is with two added columns,
 * `spans_removed` (the ranges cut, as JSON) and `spans_dropped` (`--output annotate`).
 * @module
 */
import { stat } from 'node:fs/promises';
import { InputError, UsageError } from '../../common/errors.js';
import { parsePath } from '../../io/read/jsonl.js';
import { defaultTextColumn, openParquet } from '../../io/read/parquet.js';
import type { OpenedInput, ReadOptions } from '../../io/read/read.js';
import { makeContext, type InputRecord } from '../../io/read/record.js';
import { editParquet, type AddedColumn, type RowEdit } from '../../io/write/parquetWrite.js';
import { copyNameProblem } from '../../io/write/rewrite.js';
import type { PendingCommits } from '../../io/write/output.js';
import type { DocVerdict } from '../deduper.js';
import { checkShardFormats, cutsJson, SPAN_TAGS } from './records.js';
import { shardName, type ShardList } from '../../io/read/shards.js';
import type { InputFormat } from '../../io/read/formats.js';

/** The columns `--output annotate` adds: the ranges cut (JSON text) and whether the document is dropped. */
const SPAN_COLUMNS: AddedColumn[] = [
  { name: SPAN_TAGS[0], type: { type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' } },
  { name: SPAN_TAGS[1], type: { type: 'BOOLEAN', repetition_type: 'REQUIRED' } },
];

/**
 * The text column of Parquet file `file` (named `name` in messages) that pass 2 rewrites, checked
 * before any pass: one top-level column (a field inside a struct is refused), of strings for
 * `dedup` (a cut text goes back into it), and no column named as a tag `annotate` adds.
 */
export async function parquetTextColumn(file: string, name: string, read: ReadOptions, mode: 'dedup' | 'annotate'): Promise<string> {
  const { tree } = await openParquet(file);
  const column = read.fields?.text?.[0] ?? defaultTextColumn(name, tree);
  if (parsePath(column).length !== 1)
    throw new UsageError(`spans cuts ranges out of a top-level Parquet column, and "${column}" of ${name} is a field inside one: name a top-level column`, {
      option: 'text',
    });
  const node = tree.children.find((c) => c.element.name === column);
  if (!node) throw new UsageError(`${name}: no column "${column}"; columns: ${tree.children.map((c) => c.element.name).join(', ')}`, { option: 'text' });
  const strings = node.children.length === 0 && node.element.type === 'BYTE_ARRAY' && node.element.repetition_type !== 'REPEATED';
  if (mode === 'dedup' && !strings)
    throw new UsageError(
      `spans writes the cut texts back into the text column, and column "${column}" of ${name} does not hold strings (${
        node.element.type ?? 'a group'
      }): name a string column, or annotate (which leaves it as it is)`,
      { option: 'text' },
    );
  if (mode === 'annotate') {
    for (const t of SPAN_TAGS)
      if (tree.children.some((c) => c.element.name === t))
        throw new InputError(name, undefined, `the input already has a column "${t}", a tag annotating adds`);
  }
  return column;
}

/** How {@link rewriteSpansParquet} reads, decides and writes. */
export interface SpansParquetPass {
  read: ReadOptions;
  /** The input's name in messages. */
  name: string;
  mode: 'dedup' | 'annotate';
  /** The verdict of each valid record, asked once per record in row order. */
  decide: (r: InputRecord) => Promise<DocVerdict>;
  /** When given, the output's rename waits for {@link PendingCommits.commit}. */
  commits?: PendingCommits;
}

/** Writes Parquet file `file` into `target` as pass 2 decides its records; returns the rows written and the records skipped as invalid. */
export async function rewriteSpansParquet(file: string, target: string, pass: SpansParquetPass): Promise<{ written: number; skipped: number }> {
  const { read, mode, decide } = pass;
  const textColumn = await parquetTextColumn(file, pass.name, read, mode);
  const ctx = makeContext(pass.name, false, read.skipInvalid ?? false, { count: 0, examples: [] });
  const row = async (r: InputRecord): Promise<RowEdit> => {
    const v = await decide(r);
    if (mode === 'annotate') return { keep: true, added: [cutsJson(v.cuts), v.dropped] };
    return { keep: !v.dropped, ...(v.changed ? { text: v.text } : {}) };
  };
  const written = await editParquet(file, target, { ctx, spec: read.fields ?? {}, limit: read.limit }, {
    added: () => (mode === 'annotate' ? SPAN_COLUMNS : []),
    row,
    textColumn,
    commits: pass.commits,
  });
  return { written, skipped: ctx.stats.count };
}

/**
 * Refuses, before any pass, an output file that cannot hold the copy of `input` (one file): a
 * Parquet input's is a Parquet file named so, with a text column pass 2 can rewrite; no other
 * input's copy is named as Parquet (src/io/write/rewrite.ts, `copyNameProblem`).
 */
export async function checkOutputFile(
  file: string,
  input: OpenedInput,
  read: ReadOptions,
  o: { mode: 'dedup' | 'annotate'; out: string | undefined },
): Promise<void> {
  const parquet = input.format === 'parquet';
  if (parquet && (o.out === undefined || o.out === '-'))
    throw new UsageError(`the ${o.mode} output of a Parquet input is Parquet, so it needs --out FILE.parquet (not standard output)`);
  if (o.out === undefined || o.out === '-' || (!parquet && (await stat(o.out).catch(() => undefined))?.isDirectory())) return;
  const problem = copyNameProblem(input.format, o.out);
  if (problem) throw new UsageError(`--out ${o.out}: ${problem}`, { option: 'out' });
  if (parquet) await parquetTextColumn(file, input.name, read, o.mode);
}

/** Refuses, after pass 1 and before any output, a shard pass 2 cannot rewrite: its format, or a Parquet shard's text column. */
export async function checkShardsWritable(
  list: ShardList,
  formats: readonly InputFormat[],
  o: { read: ReadOptions; mode: 'dedup' | 'annotate' },
): Promise<void> {
  checkShardFormats(formats, list, o.mode);
  for (const [k, s] of list.shards.entries()) if (formats[k] === 'parquet') await parquetTextColumn(s.path, shardName(s), o.read, o.mode);
}
