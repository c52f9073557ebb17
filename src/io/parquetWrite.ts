/**
 * Rewriting a Parquet file without its duplicates, or with two annotation columns: same schema
 * (plus `cluster` and `duplicate_of` when annotating), same compression codec per column, one
 * output row group per input row group. Written with hyparquet-writer (pure JavaScript) to a temp
 * file renamed into place at the end, so no reader ever sees a partial file.
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { InputError } from './errors.js';
import { loadPackage } from './lazy.js';
import { InvalidUtf8, openParquetGroups, type SchemaElementLike } from './parquet.js';
import type { FieldSpec } from './jsonl.js';
import type { InputRecord, ReaderContext } from './record.js';
import { annotationColumns } from './write.js';
import { zstdCompressor } from './zstd.js';

/** What to do with one record: keep it (dedup), and its annotations (annotate). */
export interface RowVerdict {
  /** Keep the row in a deduplicated output. */
  keep: boolean;
  /** Cluster number, when the row has near duplicates. */
  cluster?: number;
  /** The id of the cluster's representative, for rows that are not the representative. */
  duplicateOf?: string;
}

interface WriterModule {
  ByteWriter: new () => ByteWriterLike;
  ParquetWriter: new (o: Record<string, unknown>) => { write(o: Record<string, unknown>): void | Promise<void>; finish(): void | Promise<void> };
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

const WRITABLE = new Set(['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'ZSTD']);

function fixBytes(v: unknown): unknown {
  return v instanceof InvalidUtf8 ? v.bytes : v;
}

/**
 * Rewrites Parquet file `input` into `output` (atomically), keeping or annotating each valid record
 * as `verdict` says; rows that are not valid records (skipped with --skip-invalid) are left out, as
 * in the text formats. `verdict` is called once per valid record, in row order. Returns the rows written.
 */
export async function rewriteParquet(
  input: string,
  output: string,
  ctx: ReaderContext,
  spec: FieldSpec,
  mode: 'dedup' | 'annotate',
  verdict: (r: InputRecord) => RowVerdict,
): Promise<number> {
  const w = await loadPackage<WriterModule>('hyparquet-writer', 'writing Parquet');
  const comp = await compressors();
  const { metadata, tree, groups } = await openParquetGroups(input, ctx, spec, true);
  const names = tree.children.map((c) => c.element.name);
  const [cName, dName] = annotationColumns(names);
  const schema: SchemaElementLike[] = metadata.schema.map((e) => ({ ...e }));
  if (mode === 'annotate') {
    schema[0] = { ...schema[0]!, num_children: (schema[0]!.num_children ?? names.length) + 2 };
    schema.push({ name: cName, type: 'INT32', repetition_type: 'OPTIONAL' });
    schema.push({ name: dName, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' });
  }
  // Each top-level column keeps the codec of its first leaf in the first row group.
  const codecOf = new Map<string, string>();
  for (const c of metadata.row_groups[0]?.columns ?? []) {
    const m = c.meta_data;
    if (m && !codecOf.has(m.path_in_schema[0]!)) codecOf.set(m.path_in_schema[0]!, WRITABLE.has(m.codec) ? m.codec : 'SNAPPY');
  }
  const fileCodec = codecOf.values().next().value ?? 'SNAPPY';

  const dir = path.dirname(path.resolve(output));
  const tmp = path.join(dir, `.${path.basename(output)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`);
  let fh: import('node:fs/promises').FileHandle;
  try {
    fh = await fsp.open(tmp, 'w');
  } catch (e) {
    throw new InputError(output, undefined, `cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let written = 0;
  try {
    const bw = new w.ByteWriter();
    const flush = async (): Promise<void> => {
      if (bw.index === 0) return;
      await fh.write(new Uint8Array(bw.buffer, 0, bw.index));
      bw.index = 0;
    };
    bw.flush = flush;
    bw.finish = flush;
    const pw = new w.ParquetWriter({ writer: bw, schema, codec: fileCodec, compressors: comp, kvMetadata: metadata.key_value_metadata, createdBy: 'neardup (hyparquet-writer)' });
    for await (const g of groups) {
      if (!g.values) continue;
      const keep: number[] = [];
      const clusters: (number | null)[] = [];
      const dups: (string | null)[] = [];
      for (const r of g.records) {
        const local = r.row - g.start;
        const v = verdict(r);
        if (mode === 'dedup' && !v.keep) continue;
        keep.push(local);
        clusters.push(v.cluster ?? null);
        dups.push(v.duplicateOf ?? null);
      }
      if (keep.length === 0) continue;
      const columnData: Record<string, unknown>[] = names.map((name) => ({
        name,
        data: keep.map((i) => fixBytes(g.values![i]![name])),
        codec: codecOf.get(name) ?? fileCodec,
      }));
      if (mode === 'annotate') {
        columnData.push({ name: cName, data: clusters, codec: fileCodec });
        columnData.push({ name: dName, data: dups, codec: fileCodec });
      }
      try {
        await pw.write({ columnData, rowGroupSize: keep.length });
      } catch (e) {
        throw new InputError(output, undefined, `cannot write row group ${g.index} of ${input} as Parquet (${(e as Error).message})`);
      }
      written += keep.length;
    }
    await pw.finish();
    await fh.close();
    await fsp.rename(tmp, output);
  } catch (e) {
    await fh.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true });
    throw e;
  }
  return written;
}
