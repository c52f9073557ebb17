/**
 * Input formats and their detection from a file name.
 * @module
 */
import { UsageError } from '../../common/errors.js';

/**
 * `tsv`, `csv`: a header row, then records; `jsonl`: one JSON object per line; `text`: one document
 * per line; `idtext`: `id<TAB>text` lines; `parquet`: an Apache Parquet file; `dir`: a directory of
 * .txt, .md and .html files, one document each.
 */
export type InputFormat = 'tsv' | 'csv' | 'jsonl' | 'text' | 'idtext' | 'parquet' | 'dir';

/** Every input format, for validation and help. */
export const INPUT_FORMATS: readonly InputFormat[] = ['tsv', 'csv', 'jsonl', 'text', 'idtext', 'parquet', 'dir'];

const BY_EXTENSION: Record<string, InputFormat> = {
  tsv: 'tsv',
  tab: 'tsv',
  csv: 'csv',
  jsonl: 'jsonl',
  ndjson: 'jsonl',
  json: 'jsonl',
  txt: 'text',
  text: 'text',
  parquet: 'parquet',
  pq: 'parquet',
};

/** Compression suffixes recognised in file names (the data itself is recognised by magic bytes). */
export const COMPRESSION_EXTENSIONS = ['.gz', '.zst', '.zstd'] as const;

/** The compression a file name asks for: `gzip` for .gz, `zstd` for .zst/.zstd, else undefined. */
export function compressionFromName(path: string): 'gzip' | 'zstd' | undefined {
  const p = path.toLowerCase();
  if (p.endsWith('.gz')) return 'gzip';
  if (p.endsWith('.zst') || p.endsWith('.zstd')) return 'zstd';
  return undefined;
}

/** The extension of a path, lowercased, without `.gz`, `.zst` or `.zstd` (so `a.tsv.gz` gives `tsv`). */
export function extensionOf(path: string): string {
  let p = path.toLowerCase();
  for (const c of COMPRESSION_EXTENSIONS) {
    if (p.endsWith(c)) {
      p = p.slice(0, -c.length);
      break;
    }
  }
  const slash = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  const dot = p.lastIndexOf('.');
  return dot > slash ? p.slice(dot + 1) : '';
}

/** The format of a file from its extension (ignoring `.gz`/`.zst`), or undefined when the extension says nothing. */
export function formatFromExtension(path: string): InputFormat | undefined {
  return BY_EXTENSION[extensionOf(path)];
}

/**
 * The format of standard input from its first line: `jsonl` if it starts with `{`, `tsv` if it has
 * a tab, otherwise `text`.
 */
export function sniffFormat(firstLine: string): InputFormat {
  const t = firstLine.trimStart();
  if (t.startsWith('{')) return 'jsonl';
  if (firstLine.includes('\t')) return 'tsv';
  return 'text';
}

/** Validates a `--format` value. */
export function parseFormat(value: string): InputFormat | 'auto' {
  if (value === 'auto' || (INPUT_FORMATS as readonly string[]).includes(value)) return value as InputFormat | 'auto';
  throw new UsageError(`unknown format "${value}" (expected auto, ${INPUT_FORMATS.join(', ')})`);
}
