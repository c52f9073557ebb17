/**
 * Sharded inputs: a glob (`'shards/*.jsonl.zst'`) or a directory of shard files, read one shard
 * after another in sorted path order. Each shard's format comes from its name (`--format` forces
 * one), so JSONL, TSV, CSV, text and Parquet shards, plain, .gz or .zst, may be mixed.
 *
 * A directory is a directory of shards when it holds at least one shard file (.jsonl, .ndjson,
 * .tsv, .tab, .csv, .parquet, .pq, or any record format compressed: .txt.zst, .json.gz) and no
 * document file (.txt, .md, .markdown, .html, .htm); with document files only (or neither) it is the
 * older directory of documents, one document per file; with both it is ambiguous, a usage error.
 * `--format dir` forces documents, any other `--format` forces shards.
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';
import { compressionFromName, formatFromExtension, type InputFormat } from './formats.js';
import { loadPackage } from './lazy.js';
import { DIR_EXTENSIONS } from './dir.js';
import { walkTree } from './walk.js';

/** One shard of a sharded input. */
export interface Shard {
  /** The path to open. */
  path: string;
  /** The path relative to the input's base directory, with `/`: the output shard's name. */
  rel: string;
}

/** A sharded input: its shards in reading order, and the directory their names are relative to. */
export interface ShardList {
  /** The argument as given (a glob or a directory). */
  name: string;
  /** The directory the shards' `rel` names are relative to. */
  base: string;
  /** The shards, sorted by `rel` (code-point order). */
  shards: Shard[];
}

const GLOB_CHARS = /[*?[\]{}]/;

/** True when `arg` looks like a glob pattern (and is not an existing path, checked by the caller). */
export function isGlob(arg: string): boolean {
  return GLOB_CHARS.test(arg);
}

/** Is this file name hidden by the Hadoop/Spark convention (`.crc` files, `_SUCCESS`)? */
function hidden(name: string): boolean {
  return name.startsWith('.') || name.startsWith('_');
}

/** Names that make a directory a directory of shards (plain .txt and .json files do not). */
function isShardName(name: string): boolean {
  const f = formatFromExtension(name);
  if (f === undefined) return false;
  if (compressionFromName(name) !== undefined) return true;
  return f !== 'text' && !name.toLowerCase().endsWith('.json');
}

function byCodePoint(a: Shard, b: Shard): number {
  return a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0;
}

/** Regular files below `root` (recursively; hidden and `_` names skipped, directory links not followed, links to files kept), relative, with `/`. */
async function walk(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await walkTree(root, { skip: hidden })) {
    if (e.kind === 'file') out.push(e.rel);
    else if ((await fsp.stat(path.join(root, e.rel)).catch(() => undefined))?.isFile()) out.push(e.rel);
  }
  return out;
}

/**
 * The shards of directory `dir`, or undefined when it is a directory of documents (auto mode and no
 * shard file in it). In shard mode every visible file must be a shard whose format its name tells
 * (unless `format` forces one): anything else is a usage error naming it, never skipped silently.
 */
export async function listShardDirectory(dir: string, format: InputFormat | 'auto'): Promise<ShardList | undefined> {
  if (format === 'dir') return undefined;
  const files = await walk(dir);
  if (format === 'auto') {
    const shardFiles = files.filter((f) => isShardName(path.posix.basename(f)));
    if (shardFiles.length === 0) return undefined;
    const docs = files.filter((f) => DIR_EXTENSIONS.includes(path.posix.extname(f).toLowerCase()));
    if (docs.length > 0) {
      throw new UsageError(
        `${dir} holds both shard files (${shardFiles[0]}) and document files (${docs[0]}): read it as format dir to take each .txt/.md/.html file as one document, or name the shards with a glob (e.g. '${path.join(dir, '*' + path.posix.extname(shardFiles[0]!))}')`,
        { option: 'format', value: 'dir' },
      );
    }
    const unknown = files.filter((f) => formatFromExtension(f) === undefined);
    if (unknown.length > 0) {
      throw new UsageError(
        `${dir} is a directory of shards, but the format of ${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ` and ${unknown.length - 3} more` : ''} is not known from the name: remove ${unknown.length === 1 ? 'it' : 'them'}, name the shards with a glob (e.g. '${path.join(dir, '*.jsonl')}'), or force a format`,
        { option: 'format' },
      );
    }
  }
  if (files.length === 0) throw new UsageError(`${dir} holds no shard files`);
  const shards = files.map((rel) => ({ path: path.join(dir, rel), rel })).sort(byCodePoint);
  return { name: dir, base: dir, shards };
}

/** The directory part of a glob before its first pattern character (`shards/2024` for `shards/2024/*.zst`). */
export function globBase(pattern: string): string {
  const parts = pattern.split('/');
  const fixed: string[] = [];
  for (let i = 0; i < parts.length - 1; i++) {
    if (GLOB_CHARS.test(parts[i]!)) break;
    fixed.push(parts[i]!);
  }
  if (fixed.length === 0) return '.';
  const b = fixed.join('/');
  return b === '' ? '/' : b;
}

/** Expands a glob into its files, sorted; no match is a usage error. Hidden and `_` files match only when the pattern names them. */
export async function expandGlob(pattern: string): Promise<ShardList> {
  const { glob } = await loadPackage<{ glob: (p: string, o: Record<string, unknown>) => Promise<string[]> }>('tinyglobby', 'glob patterns');
  const base = globBase(pattern);
  const rest = pattern.slice(base === '.' && !pattern.startsWith('./') ? 0 : base.length + 1);
  const found = await glob(rest, { cwd: base, onlyFiles: true, dot: false, expandDirectories: false, followSymbolicLinks: true });
  const shards = found.map((rel) => ({ path: base === '.' && !pattern.startsWith('./') ? rel : path.join(base, rel), rel })).sort(byCodePoint);
  if (shards.length === 0) throw new UsageError(`no file matches ${pattern}`);
  return { name: pattern, base, shards };
}

/**
 * The shards `arg` stands for, or undefined when it is a single file, standard input, a directory
 * of documents, or a path that does not exist and is no glob (opening it then says why).
 */
export async function resolveShards(arg: string, format: InputFormat | 'auto'): Promise<ShardList | undefined> {
  if (arg === '-') return undefined;
  const st = await fsp.stat(arg).catch(() => undefined);
  if (st?.isDirectory()) return listShardDirectory(arg, format);
  if (st || !isGlob(arg)) return undefined;
  return expandGlob(arg);
}
