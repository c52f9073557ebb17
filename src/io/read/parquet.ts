/**
 * Apache Parquet input, read row group by row group with hyparquet (pure JavaScript, no native
 * build; snappy built in, gzip, zstd, brotli and lz4 through hyparquet-compressors). Only the text
 * and id columns are decoded, and only one row group of them is in memory at a time.
 * @module
 */
import { isUtf8 } from 'node:buffer';
import { InputError, UsageError } from '../../common/errors.js';
import { getPath, parsePath, type FieldSpec } from './jsonl.js';
import { loadPackage } from '../../common/lazy.js';
import type { InputRecord, ReaderContext } from './record.js';
import { zstdPageDecompressor } from '../codec/zstd.js';
import { noteInput } from './inputStamps.js';

/** The parts of hyparquet used here (typed loosely: the package is loaded on first use). */
export interface Hyparquet {
  parquetMetadataAsync(file: AsyncBufferLike): Promise<ParquetMetadata>;
  parquetSchema(md: ParquetMetadata): SchemaNode;
  parquetRead(options: Record<string, unknown>): Promise<void>;
  asyncBufferFromFile(path: string): Promise<AsyncBufferLike>;
}

/** hyparquet's AsyncBuffer. */
export interface AsyncBufferLike {
  byteLength: number;
  slice(start: number, end?: number): Promise<ArrayBuffer> | ArrayBuffer;
}

/** One element of a Parquet schema (as hyparquet decodes it). */
export interface SchemaElementLike {
  name: string;
  type?: string;
  repetition_type?: string;
  converted_type?: string;
  logical_type?: { type: string };
  num_children?: number;
}

/** A node of the schema tree. */
export interface SchemaNode {
  element: SchemaElementLike;
  children: SchemaNode[];
}

/** The file metadata (footer). */
export interface ParquetMetadata {
  schema: SchemaElementLike[];
  num_rows: bigint;
  row_groups: { num_rows: bigint; columns: { meta_data?: { codec: string; total_compressed_size: bigint; path_in_schema: string[] } }[] }[];
  key_value_metadata?: { key: string; value?: string }[];
}

/** hyparquet and its decompressors, loaded once. */
export async function loadHyparquet(): Promise<{ hp: Hyparquet; compressors: Record<string, unknown> }> {
  const hp = await loadPackage<Hyparquet>('hyparquet', 'reading Parquet');
  const hc = await loadPackage<{ compressors: Record<string, unknown> }>('hyparquet-compressors', 'reading compressed Parquet');
  // zstd pages: the WebAssembly reference decoder (the page size is known), ~4× faster than fzstd.
  const ZSTD = await zstdPageDecompressor().catch(() => hc.compressors.ZSTD);
  return { hp, compressors: { ...hc.compressors, ZSTD } };
}

/** A string column value that is not valid UTF-8 (kept as bytes, so a rewrite keeps them too). */
export class InvalidUtf8 {
  /** The raw bytes. */
  constructor(readonly bytes: Uint8Array) {}
}

/**
 * Value parsers: strings are checked for UTF-8 (hyparquet's default decoder would put U+FFFD in
 * silently), timestamps and dates stay as their stored integers so a rewrite loses no precision.
 */
export const RAW_PARSERS = {
  stringFromBytes: (b: Uint8Array): string | InvalidUtf8 => (isUtf8(b) ? Buffer.from(b.buffer, b.byteOffset, b.length).toString('utf8') : new InvalidUtf8(b)),
  timestampFromMilliseconds: (v: bigint): bigint => v,
  timestampFromMicroseconds: (v: bigint): bigint => v,
  timestampFromNanoseconds: (v: bigint): bigint => v,
  dateFromDays: (d: number): number => d,
};

/** Opens a Parquet file and reads its footer; a file that is not Parquet gets an {@link InputError}. */
export async function openParquet(
  path: string,
): Promise<{ hp: Hyparquet; compressors: Record<string, unknown>; file: AsyncBufferLike; metadata: ParquetMetadata; tree: SchemaNode }> {
  const { hp, compressors } = await loadHyparquet();
  noteInput(path);
  let file: AsyncBufferLike;
  try {
    file = await hp.asyncBufferFromFile(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(path, undefined, code === 'ENOENT' ? 'no such file or directory' : `cannot read (${code ?? (e as Error).message})`);
  }
  let metadata: ParquetMetadata;
  try {
    metadata = await hp.parquetMetadataAsync(file);
  } catch (e) {
    throw new InputError(path, undefined, `not a valid Parquet file (${(e as Error).message})`);
  }
  return { hp, compressors, file, metadata, tree: hp.parquetSchema(metadata) };
}

/** Dotted paths of every leaf column, for messages (`meta.title`, `tags.list.element`). */
export function leafPaths(tree: SchemaNode, prefix = ''): string[] {
  const out: string[] = [];
  for (const c of tree.children) {
    const p = prefix ? `${prefix}.${c.element.name}` : c.element.name;
    if (c.children.length === 0) out.push(p);
    else out.push(...leafPaths(c, p));
  }
  return out;
}

function describe(node: SchemaNode): string {
  const e = node.element;
  if (node.children.length > 0)
    return e.converted_type === 'LIST' || e.logical_type?.type === 'LIST'
      ? 'a list'
      : e.converted_type === 'MAP' || e.logical_type?.type === 'MAP'
      ? 'a map'
      : 'a struct';
  return e.type ?? 'unknown';
}

/** Is `node` a list whose elements are primitive (joined by one space as text, like JSONL arrays)? */
function isPrimitiveList(node: SchemaNode): boolean {
  const e = node.element;
  if (!(e.converted_type === 'LIST' || e.logical_type?.type === 'LIST')) return false;
  const rep = node.children[0];
  if (!rep) return false;
  const el = rep.children.length === 1 ? rep.children[0]! : rep;
  return el.children.length === 0;
}

/**
 * Checks that `path` names a column that can be text: a primitive column (strings, numbers,
 * booleans), a list of primitives, or a field inside structs (`meta.title`). Throws a
 * {@link UsageError} naming the file and the column otherwise.
 */
export function checkColumn(file: string, tree: SchemaNode, path: string, role: 'text' | 'id' | 'title'): void {
  let node: SchemaNode | undefined = tree;
  for (const step of parsePath(path)) {
    node = node.children.find((c) => c.element.name === step);
    if (!node) throw new UsageError(`${file}: no column "${path}"; columns: ${leafPaths(tree).join(', ')}`);
  }
  if (node === tree) throw new UsageError(`${file}: empty column name`);
  if (node.children.length === 0) {
    if (node.element.repetition_type === 'REPEATED')
      throw new UsageError(`${file}: column "${path}" is repeated (a legacy list), not ${role === 'id' ? 'an id' : 'text'}`);
    return;
  }
  if (role === 'text' && isPrimitiveList(node)) return;
  throw new UsageError(
    `${file}: column "${path}" is ${describe(node)}, not ${role === 'id' ? 'an id' : 'text'}: choose a field inside it (${
      leafPaths(node, path).slice(0, 8).join(', ')
    })`,
  );
}

/** The schema node of column `path` (checked to exist by {@link checkColumn}). */
function columnNode(tree: SchemaNode, path: string): SchemaNode | undefined {
  let node: SchemaNode | undefined = tree;
  for (const step of parsePath(path)) node = node?.children.find((c) => c.element.name === step);
  return node;
}

/** True for a DATE column (days since 1970-01-01, which the raw parsers keep as a number). */
function isDateColumn(node: SchemaNode | undefined): boolean {
  const e = node?.element as { converted_type?: string; logical_type?: { type?: string } } | undefined;
  return e?.converted_type === 'DATE' || e?.logical_type?.type === 'DATE';
}

/** Days since 1970-01-01 as an ISO date (2020-01-01). */
export function isoDate(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

/** A column value as text: strings as is, numbers, bigints and booleans printed, null as '', lists joined. */
function asText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) {
    const parts = v.map(asText);
    return parts.includes(undefined) ? undefined : parts.join(' ');
  }
  return undefined;
}

/** The text column by default: `text` if there is one, else the only column; otherwise a usage error. */
export function defaultTextColumn(file: string, tree: SchemaNode): string {
  const names = tree.children.map((c) => c.element.name);
  if (names.includes('text')) return 'text';
  if (names.length === 1) return names[0]!;
  throw new UsageError(`${file}: no column named "text": choose the text column(s) (columns: ${leafPaths(tree).join(', ')})`, { option: 'text' });
}

/** Compressed bytes of a row group (for progress). */
export function rowGroupBytes(g: ParquetMetadata['row_groups'][number]): number {
  let n = 0;
  for (const c of g.columns) n += Number(c.meta_data?.total_compressed_size ?? 0n);
  return n;
}

/** `row group 2 (rows 2000–2999)`: where a row group is, for messages. */
export function rowGroupPosition(g: number, start: number, rows: number): string {
  return `row group ${g} (rows ${start}–${start + rows - 1})`;
}

/** One decoded row group: its rows (the columns read, as objects) and the valid records among them. */
export interface ParquetGroup {
  /** Row group index. */
  index: number;
  /** File row of its first row. */
  start: number;
  /** Rows in the group. */
  rows: number;
  /** The decoded rows, or undefined when the group could not be decoded (and was skipped). */
  values: Record<string, unknown>[] | undefined;
  /** The group's valid records, in row order. */
  records: InputRecord[];
}

/** What {@link parquetGroups} hands over besides the groups. */
export interface OpenedParquet {
  /** The file's footer. */
  metadata: ParquetMetadata;
  /** The schema tree. */
  tree: SchemaNode;
  /** The row groups, decoded one at a time. */
  groups: AsyncGenerator<ParquetGroup>;
}

/** How {@link openParquetGroups} decodes and reports. */
export interface ParquetGroupOptions {
  /** Decode every column (for rewriting the file), not only the ones the documents need. */
  allColumns?: boolean;
  /** Called with each row group's stored bytes once it is read (progress). */
  onBytes?: (n: number) => void;
}

/** Where a Parquet file's documents come from, resolved once per file (see {@link openParquetGroups}). */
interface ParquetFields {
  /** Gets the invalid rows. */
  ctx: ReaderContext;
  /** The text columns as named, and as paths into a row. */
  textNames: string[];
  textPaths: string[][];
  /** The id and title columns' paths, if any. */
  idPath: string[] | undefined;
  titlePath: string[] | undefined;
  /** Whether the id or title column holds DATE values (printed as ISO dates). */
  idDate: boolean;
  titleDate: boolean;
  /** The id column as named, for messages. */
  idName: string | undefined;
}

/** The documents of row group `g`, whose rows start at row `start` of the file; invalid rows go to `ctx.invalid`. */
function groupRecords(rows: Record<string, unknown>[], g: number, start: number, fields: ParquetFields): InputRecord[] {
  const { ctx, textNames, textPaths, idPath, titlePath, idDate, titleDate, idName } = fields;
  const n = rows.length;
  const records: InputRecord[] = [];
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    const r = start + i;
    const where = `row group ${g}, row ${r}`;
    const parts: string[] = [];
    let ok = true;
    for (let k = 0; k < textPaths.length; k++) {
      const v = getPath(row, textPaths[k]!);
      const t = v instanceof InvalidUtf8 ? undefined : asText(v);
      if (t === undefined) {
        ctx.invalid(where, v instanceof InvalidUtf8 ? `column "${textNames[k]}" is not valid UTF-8` : `column "${textNames[k]}" is not text`);
        ok = false;
        break;
      }
      parts.push(t);
    }
    if (!ok) continue;
    let id: string | undefined;
    if (idPath) {
      const v = getPath(row, idPath);
      if (idDate && typeof v === 'number') id = isoDate(v);
      else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint') id = String(v);
      else {
        ctx.invalid(where, v === null || v === undefined ? `id column "${idName}" is null` : `id column "${idName}" must be a string or a number`);
        continue;
      }
    }
    const rec: InputRecord = { text: parts.length === 1 ? parts[0]! : parts.join(' '), id, row: r, line: r + 1, rowGroup: g };
    if (titlePath) {
      const v = getPath(row, titlePath);
      const t = v instanceof InvalidUtf8 ? undefined : titleDate && typeof v === 'number' ? isoDate(v) : asText(v);
      if (t) rec.title = t;
    }
    records.push(rec);
  }
  return records;
}

/**
 * Opens a Parquet file and decodes it row group by row group: `spec.text` columns (dotted paths
 * reach into structs; values joined by one space) and the optional `spec.id` column, or every
 * column with `allColumns` (for rewriting the file). Rows are numbered from 0 across the row groups;
 * a record's `line` is its 1-based row. A row group that cannot be decoded is an invalid record of
 * as many rows (skipped as a whole with --skip-invalid).
 */
export async function openParquetGroups(path: string, ctx: ReaderContext, spec: FieldSpec, options: ParquetGroupOptions = {}): Promise<OpenedParquet> {
  const { allColumns = false, onBytes } = options;
  const { hp, compressors, file, metadata, tree } = await openParquet(path);
  const textNames = spec.text && spec.text.length > 0 ? spec.text : [defaultTextColumn(ctx.file, tree)];
  for (const t of textNames) checkColumn(ctx.file, tree, t, 'text');
  if (spec.id !== undefined) checkColumn(ctx.file, tree, spec.id, 'id');
  if (spec.title !== undefined) checkColumn(ctx.file, tree, spec.title, 'title');
  const textPaths = textNames.map(parsePath);
  const idPath = spec.id === undefined ? undefined : parsePath(spec.id);
  const titlePath = spec.title === undefined ? undefined : parsePath(spec.title);
  // A DATE id or title is printed as its ISO date, not its day number.
  const idDate = spec.id !== undefined && isDateColumn(columnNode(tree, spec.id));
  const titleDate = spec.title !== undefined && isDateColumn(columnNode(tree, spec.title));
  const fields: ParquetFields = { ctx, textNames, textPaths, idPath, titlePath, idDate, titleDate, idName: spec.id };
  const columns = allColumns
    ? tree.children.map((c) => c.element.name)
    : [...new Set([...textPaths.map((p) => p[0]!), ...(idPath ? [idPath[0]!] : []), ...(titlePath ? [titlePath[0]!] : [])])];
  async function* groups(): AsyncGenerator<ParquetGroup> {
    let start = 0;
    for (let g = 0; g < metadata.row_groups.length; g++) {
      const group = metadata.row_groups[g]!;
      const n = Number(group.num_rows);
      let rows: Record<string, unknown>[] = [];
      try {
        await hp.parquetRead({
          file,
          metadata,
          columns,
          rowStart: start,
          rowEnd: start + n,
          rowFormat: 'object',
          compressors,
          parsers: RAW_PARSERS,
          onComplete: (r: Record<string, unknown>[]) => (rows = r),
        });
        if (rows.length !== n) throw new Error(`expected ${n} rows, decoded ${rows.length}`);
      } catch (e) {
        if (e instanceof InputError || e instanceof UsageError) throw e;
        ctx.invalid(rowGroupPosition(g, start, n), `cannot decode the row group (${(e as Error).message})`, undefined, n);
        onBytes?.(rowGroupBytes(group));
        yield { index: g, start, rows: n, values: undefined, records: [] };
        start += n;
        continue;
      }
      const records = groupRecords(rows, g, start, fields);
      onBytes?.(rowGroupBytes(group));
      yield { index: g, start, rows: n, values: rows, records };
      start += n;
    }
  }
  return { metadata, tree, groups: groups() };
}

/** Reads the records of a Parquet file, one row group in memory at a time (see {@link openParquetGroups}). */
export async function* readParquet(path: string, ctx: ReaderContext, spec: FieldSpec, onBytes?: (n: number) => void): AsyncGenerator<InputRecord> {
  const { groups } = await openParquetGroups(path, ctx, spec, { onBytes });
  for await (const g of groups) yield* g.records;
}
