/**
 * Rewriting a Parquet file without its duplicates, or with the tag columns: same schema (plus
 * `cluster` INT32, `cluster_size` INT32, `duplicate_of` UTF8, `similarity` DOUBLE and `kept`
 * BOOLEAN when annotating, all nullable but `kept`), same compression codec per column, one
 * output row group per input row group. {@link editParquet} is the general form: added columns of
 * any type, and a text column whose values may be replaced (`neardup spans`). Written with hyparquet-writer (pure JavaScript) to a temp
 * file renamed into place at the end, so no reader ever sees a partial file.
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { InputError } from '../../common/errors.js';
import { loadPackage } from '../../common/lazy.js';
import { writeError, type PendingCommits } from './output.js';
import { InvalidUtf8, openParquetGroups, type OpenedParquet, type ParquetGroup, type SchemaElementLike } from '../read/parquet.js';
import type { FieldSpec } from '../read/jsonl.js';
import type { InputRecord, ReaderContext } from '../read/record.js';
import { annotationColumns, tagClashAt, type RecordTags } from './write.js';
import { zstdCompressor } from '../codec/zstd.js';
import { checkInputsUnchanged } from '../read/inputStamps.js';

/** What to do with one record: keep it (dedup), and its tags (annotate; `kept` is `keep`). */
export interface RowVerdict extends Omit<RecordTags, 'kept'> {
  /** Keep the row in a deduplicated output. */
  keep: boolean;
}

/** How a rewrite treats each valid record of its input. */
export interface RewriteHow {
  /** `dedup` keeps the records whose verdict keeps them; `annotate` keeps every record, with its tags. */
  mode: 'dedup' | 'annotate';
  /** Asked once per valid record, in row order. */
  verdict: (r: InputRecord) => RowVerdict;
  /** Annotate's column name prefix (default: none). */
  tagPrefix?: string;
  /** When given, a file's rename (and a directory's `_SUCCESS`) waits for {@link PendingCommits.commit}. */
  commits?: PendingCommits;
}

interface WriterModule {
  ByteWriter: new() => ByteWriterLike;
  ParquetWriter: new(o: Record<string, unknown>) => { write(o: Record<string, unknown>): void | Promise<void>; finish(): void | Promise<void> };
}

interface ByteWriterLike {
  buffer: ArrayBuffer;
  index: number;
  offset: number;
  flush?(): void | Promise<void>;
  finish(): void | Promise<void>;
}

/** Codecs hyparquet-writer can write here; others (LZ4, LZO) are written as SNAPPY. */
async function compressors(): Promise<Record<string, (b: Uint8Array) => Uint8Array>> {
  return {
    GZIP: (b) => gzipSync(b),
    BROTLI: (b) => brotliCompressSync(b),
    ZSTD: await zstdCompressor(),
  };
}

/** The tag columns' Parquet types, in the order of TAG_NAMES: typed, so readers get numbers and booleans, not strings. */
const TAG_TYPES: Omit<SchemaElementLike, 'name'>[] = [
  { type: 'INT32', repetition_type: 'OPTIONAL' },
  { type: 'INT32', repetition_type: 'OPTIONAL' },
  { type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { type: 'DOUBLE', repetition_type: 'OPTIONAL' },
  { type: 'BOOLEAN', repetition_type: 'REQUIRED' },
];

const WRITABLE = new Set(['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'ZSTD']);

function fixBytes(v: unknown): unknown {
  return v instanceof InvalidUtf8 ? v.bytes : v;
}

/** Each top-level column's codec (that of its first leaf in the first row group), and the file's (the first column's). */
function columnCodecs(metadata: OpenedParquet['metadata']): { codecOf: Map<string, string>; fileCodec: string } {
  const codecOf = new Map<string, string>();
  for (const c of metadata.row_groups[0]?.columns ?? []) {
    const m = c.meta_data;
    if (m && !codecOf.has(m.path_in_schema[0]!)) codecOf.set(m.path_in_schema[0]!, WRITABLE.has(m.codec) ? m.codec : 'SNAPPY');
  }
  return { codecOf, fileCodec: codecOf.values().next().value ?? 'SNAPPY' };
}

/** A temporary file beside `output`, open for writing (renamed onto `output` when complete). */
async function openTemp(output: string): Promise<{ tmp: string; fh: import('node:fs/promises').FileHandle }> {
  const dir = path.dirname(path.resolve(output));
  const tmp = path.join(dir, `.${path.basename(output)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`);
  try {
    return { tmp, fh: await fsp.open(tmp, 'w') };
  } catch (e) {
    throw new InputError(output, undefined, `cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** A column a rewrite adds after the input's own: its name and Parquet type. */
export interface AddedColumn {
  name: string;
  type: Omit<SchemaElementLike, 'name'>;
}

/** What a rewrite writes for one valid record. */
export interface RowEdit {
  /** Whether the row is written at all. */
  keep: boolean;
  /** The added columns' values, in their order. */
  added?: readonly unknown[];
  /** The text column's new value (undefined: as it is). */
  text?: string;
}

/** How {@link editParquet} rewrites each valid record of a Parquet file. */
export interface ParquetEdit {
  /** The columns added after the input's (whose names are given; a clash is the caller's error to throw). */
  added: (names: string[]) => AddedColumn[];
  /** Asked once per valid record, in row order. */
  row: (r: InputRecord) => RowEdit | Promise<RowEdit>;
  /** The top-level column that {@link RowEdit.text} replaces. */
  textColumn?: string;
  /** When given, the rename waits for {@link PendingCommits.commit}. */
  commits?: PendingCommits;
}

/** The rows of row group `g` that are written (their indices in the group), each one's added values and new text, from `edit.row` in row order. */
async function editedRows(
  g: ParquetGroup,
  edit: ParquetEdit,
  o: { added: number; take: number },
): Promise<{ keep: number[]; added: unknown[][]; texts: Map<number, string> }> {
  const { added } = o;
  const keep: number[] = [];
  const values: unknown[][] = Array.from({ length: added }, () => []);
  const texts = new Map<number, string>();
  for (const r of g.records.length > o.take ? g.records.slice(0, o.take) : g.records) {
    // Before the edit: a caller's verdict may renumber the record's row (shards: ../write/rewrite.ts).
    const local = r.row - g.start;
    const e = await edit.row(r);
    if (!e.keep) continue;
    keep.push(local);
    for (let k = 0; k < added; k++) values[k]!.push(e.added?.[k] ?? null);
    if (e.text !== undefined) texts.set(local, e.text);
  }
  return { keep, added: values, texts };
}

/**
 * Rewrites Parquet file `input` into `output` (atomically), keeping or annotating each valid record
 * as `how.verdict` says (`read`: the reader's context and field spec); rows that are not valid records (skipped with --skip-invalid) are left out, as
 * in the text formats. `verdict` is called once per valid record, in row order. Returns the rows written.
 */
export function rewriteParquet(input: string, output: string, read: ParquetRead, how: RewriteHow): Promise<number> {
  const { mode, tagPrefix = '' } = how;
  const added = (names: string[]): AddedColumn[] => {
    if (mode !== 'annotate') return [];
    try {
      return annotationColumns(names, tagPrefix).map((name, i) => ({ name, type: TAG_TYPES[i]! }));
    } catch (e) {
      throw tagClashAt(e, read.ctx.file, undefined, 'schema');
    }
  };
  const row = (r: InputRecord): RowEdit => {
    const v = how.verdict(r);
    return { keep: mode === 'annotate' || v.keep, added: [v.cluster ?? null, v.clusterSize ?? null, v.duplicateOf ?? null, v.similarity ?? null, v.keep] };
  };
  return editParquet(input, output, read, { added, row, commits: how.commits });
}

/** How a rewrite reads its input: the reader's context and field spec, and at most `limit` valid records (`--limit`: the rows after them are not written, as a text reader stops there). */
export interface ParquetRead {
  ctx: ReaderContext;
  spec: FieldSpec;
  limit?: number;
}

/**
 * Rewrites Parquet file `input` into `output` (atomically) as `edit` says: the same schema (plus
 * the added columns), codecs and row groups, each valid record kept or not, its text column
 * replaced or not; rows that are not valid records (skipped with --skip-invalid) are left out.
 * Returns the rows written.
 */
export async function editParquet(input: string, output: string, read: ParquetRead, edit: ParquetEdit): Promise<number> {
  const { ctx, spec } = read;
  let take = read.limit ?? Infinity;
  const w = await loadPackage<WriterModule>('hyparquet-writer', 'writing Parquet');
  const comp = await compressors();
  const { metadata, tree, groups } = await openParquetGroups(input, ctx, spec, { allColumns: true });
  const names = tree.children.map((c) => c.element.name);
  const added = edit.added(names);
  const schema = outputSchema(metadata.schema, names.length, added);
  const { codecOf, fileCodec } = columnCodecs(metadata);
  const { tmp, fh } = await openTemp(output);
  let written = 0;
  try {
    const pw = new w.ParquetWriter({
      writer: fileWriter(w, fh, output),
      schema,
      codec: fileCodec,
      compressors: comp,
      kvMetadata: metadata.key_value_metadata,
      createdBy: 'neardup (hyparquet-writer)',
    });
    for await (const g of groups) {
      if (take <= 0) break;
      if (!g.values) continue;
      const rows = await editedRows(g, edit, { added: added.length, take });
      take -= Math.min(take, g.records.length);
      if (rows.keep.length === 0) continue;
      const columnData: Record<string, unknown>[] = names.map((name) => ({
        name,
        data: rows.keep.map((i) => (name === edit.textColumn && rows.texts.has(i) ? rows.texts.get(i) : fixBytes(g.values![i]![name]))),
        codec: codecOf.get(name) ?? fileCodec,
      }));
      added.forEach((c, k) => columnData.push({ name: c.name, data: rows.added[k], codec: fileCodec }));
      try {
        await pw.write({ columnData, rowGroupSize: rows.keep.length });
      } catch (e) {
        throw new InputError(output, undefined, `cannot write row group ${g.index} of ${input} as Parquet (${(e as Error).message})`);
      }
      written += rows.keep.length;
    }
    await pw.finish();
    await fh.close();
    await putInPlace(tmp, output, edit.commits);
  } catch (e) {
    await fh.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true });
    throw e;
  }
  return written;
}

/** hyparquet-writer's byte writer, flushed to `fh` (named `output` in errors) whenever the writer asks. */
function fileWriter(w: WriterModule, fh: import('node:fs/promises').FileHandle, output: string): ByteWriterLike {
  const bw = new w.ByteWriter();
  const flush = async (): Promise<void> => {
    if (bw.index === 0) return;
    try {
      await fh.write(new Uint8Array(bw.buffer, 0, bw.index));
    } catch (e) {
      // Node's ENOSPC names no file.
      throw writeError(output, e);
    }
    bw.index = 0;
  };
  bw.flush = flush;
  bw.finish = flush;
  return bw;
}

/** The output's schema: the input's, with the added columns after its own. */
function outputSchema(input: readonly SchemaElementLike[], columns: number, added: AddedColumn[]): SchemaElementLike[] {
  const schema: SchemaElementLike[] = input.map((e) => ({ ...e }));
  if (added.length > 0) {
    schema[0] = { ...schema[0]!, num_children: (schema[0]!.num_children ?? columns) + added.length };
    for (const c of added) schema.push({ name: c.name, ...c.type });
  }
  return schema;
}

/** Renames the written temp file onto `output`: now, or with the run's other outputs (`commits`). */
async function putInPlace(tmp: string, output: string, commits: RewriteHow['commits']): Promise<void> {
  const discard = (): Promise<void> => fsp.rm(tmp, { force: true });
  const rename = async (): Promise<void> => {
    try {
      checkInputsUnchanged();
      await fsp.rename(tmp, output);
    } catch (e) {
      await discard();
      throw writeError(output, e);
    }
  };
  if (commits) commits.add(rename, discard);
  else await rename();
}
