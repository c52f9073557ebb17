/** Test helpers: real Parquet files (hyparquet-writer) and zstd files (the writer's own compressor). */
import fs from 'node:fs';
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { ByteWriter, ParquetWriter, parquetWriteBuffer } from 'hyparquet-writer';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors as decompressors } from 'hyparquet-compressors';
import { zstdCompressor } from '../../src/io/codec/zstd.js';
import { RAW_PARSERS } from '../../src/io/read/parquet.js';

/** Codecs the tests write Parquet with. */
export const CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'ZSTD', 'BROTLI'] as const;

/** Compressors for hyparquet-writer. */
export async function writeCompressors(): Promise<Record<string, (b: Uint8Array) => Uint8Array>> {
  return { GZIP: (b) => gzipSync(b), BROTLI: (b) => brotliCompressSync(b), ZSTD: await zstdCompressor() };
}

/** A column for {@link writeParquet}. */
export interface Col {
  name: string;
  data: unknown[];
  type?: string;
  nullable?: boolean;
}

/** Writes a flat Parquet file (types inferred or given) with `rowGroupSize` rows per group. */
export async function writeParquet(file: string, columns: Col[], codec: (typeof CODECS)[number] = 'SNAPPY', rowGroupSize = 1000): Promise<void> {
  const buf = parquetWriteBuffer({ columnData: columns as never, codec, compressors: (await writeCompressors()) as never, rowGroupSize });
  fs.writeFileSync(file, Buffer.from(buf));
}

/** Writes a Parquet file with an explicit schema (nested columns), rows given per top-level column. */
export async function writeParquetSchema(
  file: string,
  schema: Record<string, unknown>[],
  columns: { name: string; data: unknown[] }[],
  codec = 'SNAPPY',
  rowGroupSize = 1000,
): Promise<void> {
  const w = new ByteWriter();
  const pw = new ParquetWriter({ writer: w as never, schema: schema as never, codec: codec as never, compressors: (await writeCompressors()) as never });
  await pw.write({ columnData: columns as never, rowGroupSize });
  await pw.finish();
  fs.writeFileSync(file, Buffer.from(w.getBytes()));
}

/** Every row of a Parquet file as objects (raw timestamps, as neardup reads them), and its footer. */
export async function readParquetRows(file: string): Promise<{ rows: Record<string, unknown>[]; metadata: Awaited<ReturnType<typeof parquetMetadataAsync>> }> {
  const f = await asyncBufferFromFile(file);
  const metadata = await parquetMetadataAsync(f);
  const rows = (await parquetReadObjects({ file: f, compressors: decompressors, parsers: RAW_PARSERS as never })) as Record<string, unknown>[];
  return { rows, metadata };
}

/** zstd-compresses `data` as one frame per `frameBytes` (several frames, like large files and our writer). */
export async function zstd(data: Buffer | string, frameBytes = 1 << 30): Promise<Buffer> {
  const c = await zstdCompressor();
  const b = typeof data === 'string' ? Buffer.from(data) : data;
  const parts: Buffer[] = [];
  for (let i = 0; i < b.length || i === 0; i += frameBytes) parts.push(Buffer.from(c(b.subarray(i, i + frameBytes))));
  return Buffer.concat(parts);
}
