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
import { InputError, UsageError } from '../../common/errors.js';
import { compressionFromName, formatFromExtension, type InputFormat } from './formats.js';
import { loadPackage } from '../../common/lazy.js';
import { DIR_EXTENSIONS } from './dir.js';
import { walkTree } from './walk.js';

/** One shard of a sharded input. */
export interface Shard {
  /** The path to open. */
  path: string;
  /** The path relative to the input's base directory, with `/`: the output shard's name. */
  rel: string;
  /** The name messages give it when `path` is a copy (a named pipe's, src/cli/corpus.ts): the pipe as given. */
  name?: string;
}

/** The name of `shard` in messages: the input as given, not its copy. */
export function shardName(shard: Shard): string {
  return shard.name ?? shard.path;
}

/** A sharded input: its shards in reading order, and the directory their names are relative to. */
export interface ShardList {
  /** The argument as given (a glob or a directory). */
  name: string;
  /** The directory the shards' `rel` names are relative to. */
  base: string;
  /** The shards, sorted by `rel` (code-point order); for several inputs, in the order the inputs were given. */
  shards: Shard[];
  /**
   * For several inputs read as one (`neardup dedup A B C`): each input's own directory (a directory,
   * a glob's base) or file. An output directory must not overlap any of them; `base` (their common
   * directory, often the working directory) is then too wide to check.
   */
  roots?: string[];
  /** Symbolic links left out (with skipInvalid): a target outside the directory, or none. */
  refused?: { path: string; reason: string }[];
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

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The rule directories of documents apply (./dir.ts, docs/operations.md), for the shard `rel` below
 * `root`: undefined when it may be read (a regular file, or a link to a file inside the directory);
 * `skip` when a glob reached it through a link to a directory inside (links to directories are not
 * descended; the files there match at their own paths); else the link refused and why: a target
 * outside `root`, or none.
 */
async function refusedLink(root: string, rel: string): Promise<{ path: string; reason: string } | 'skip' | undefined> {
  const parts = rel.split('/');
  let cur = root;
  let realRoot: string | undefined;
  for (let i = 0; i < parts.length; i++) {
    cur = path.join(cur, parts[i]!);
    const l = await fsp.lstat(cur).catch(() => undefined);
    if (!l?.isSymbolicLink()) continue;
    realRoot ??= await fsp.realpath(root);
    const target = await fsp.realpath(cur).catch(() => undefined);
    if (target === undefined) return { path: cur, reason: 'broken symbolic link' };
    if (!inside(realRoot, target)) return { path: cur, reason: `symbolic link to ${target}, outside the input directory: not followed` };
    if (i < parts.length - 1) return 'skip';
  }
  return undefined;
}

/**
 * Keeps the shards that are not refused links. A refused link is an input error naming it, or,
 * with `skipInvalid`, left out and listed in `refused` (the reader counts it as a skipped record).
 */
async function checkLinks(list: ShardList, skipInvalid: boolean): Promise<ShardList> {
  const shards: Shard[] = [];
  const refused: { path: string; reason: string }[] = [...(list.refused ?? [])];
  if (refused.length && !skipInvalid) throw new InputError(refused[0]!.path, undefined, refused[0]!.reason);
  for (const s of list.shards) {
    const why = await refusedLink(list.base, s.rel);
    if (why === undefined) shards.push(s);
    else if (why === 'skip') continue;
    else if (!skipInvalid) throw new InputError(why.path, undefined, why.reason);
    else if (!refused.some((r) => r.path === why.path)) refused.push(why);
  }
  if (shards.length === 0)
    throw new UsageError(
      refused.length
        ? `${list.name}: no shard can be read (${refused[0]!.path}: ${refused[0]!.reason})`
        : `no file matches ${list.name} (links to directories are not followed)`,
    );
  return refused.length ? { ...list, shards, refused } : { ...list, shards };
}

/** Regular files below `root` (recursively; hidden and `_` names skipped, directory links not followed, links to files kept), relative, with `/`. */
async function walk(root: string): Promise<{ files: string[]; refused: { path: string; reason: string }[] }> {
  const files: string[] = [];
  const refused: { path: string; reason: string }[] = [];
  for (const e of await walkTree(root, { skip: hidden })) {
    if (e.kind === 'file') files.push(e.rel);
    else if ((await fsp.stat(path.join(root, e.rel)).catch(() => undefined))?.isFile()) files.push(e.rel);
    else {
      // A link to a directory outside, or a broken link: refused as in a directory of documents.
      const why = await refusedLink(root, e.rel);
      if (why !== undefined && why !== 'skip') refused.push(why);
    }
  }
  return { files, refused };
}

/**
 * The shards of directory `dir`, or undefined when it is a directory of documents (auto mode and no
 * shard file in it). In shard mode every visible file must be a shard whose format its name tells
 * (unless `format` forces one): anything else is a usage error naming it, never skipped silently.
 */
export async function listShardDirectory(dir: string, format: InputFormat | 'auto'): Promise<ShardList | undefined> {
  if (format === 'dir') return undefined;
  const { files, refused } = await walk(dir);
  if (format === 'auto') {
    const shardFiles = files.filter((f) => isShardName(path.posix.basename(f)));
    if (shardFiles.length === 0) return undefined;
    const docs = files.filter((f) => DIR_EXTENSIONS.includes(path.posix.extname(f).toLowerCase()));
    if (docs.length > 0) {
      throw new UsageError(
        `${dir} holds both shard files (${shardFiles[0]}) and document files (${
          docs[0]
        }): read it as format dir to take each .txt/.md/.html file as one document, or name the shards with a glob (e.g. '${
          path.join(dir, '*' + path.posix.extname(shardFiles[0]!))
        }')`,
        { option: 'format', value: 'dir' },
      );
    }
    const unknown = files.filter((f) => formatFromExtension(f) === undefined);
    if (unknown.length > 0) {
      throw new UsageError(
        `${dir} is a directory of shards, but the format of ${unknown.slice(0, 3).join(', ')}${
          unknown.length > 3 ? ` and ${unknown.length - 3} more` : ''
        } is not known from the name: remove ${unknown.length === 1 ? 'it' : 'them'}, name the shards with a glob (e.g. '${
          path.join(dir, '*.jsonl')
        }'), or force a format`,
        { option: 'format' },
      );
    }
  }
  if (files.length === 0 && refused.length === 0) throw new UsageError(`${dir} holds no shard files`);
  const shards = files.map((rel) => ({ path: path.join(dir, rel), rel })).sort(byCodePoint);
  return refused.length ? { name: dir, base: dir, shards, refused } : { name: dir, base: dir, shards };
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
export async function resolveShards(arg: string, format: InputFormat | 'auto', skipInvalid = false): Promise<ShardList | undefined> {
  if (arg === '-') return undefined;
  const st = await fsp.stat(arg).catch(() => undefined);
  if (st?.isDirectory()) {
    const list = await listShardDirectory(arg, format);
    return list && checkLinks(list, skipInvalid);
  }
  if (st || !isGlob(arg)) return undefined;
  return checkLinks(await expandGlob(arg), skipInvalid);
}
