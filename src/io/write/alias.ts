/**
 * Refusing an output path that is the same file as an input (or as another output): writing it
 * would replace the data being read. Every command checks its outputs here, against its whole read
 * set: each shard of a directory, a glob or an `s3://` prefix given as input, `--against`'s too, and
 * for `job report` the plan's shards. Local files are compared by device and inode, so symbolic
 * links, hard links and other spellings of one path (`./a.tsv`, `dir/../a.tsv`) are all caught; an
 * output that does not exist yet by its real directory and name (a link to a directory does not
 * hide it); `s3://` names by bucket and key (repeated `/` collapsed). An output directory (`--out-dir`)
 * clashes with every input inside it.
 * @module
 */
import { fstatSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import { isS3Url, parseS3Url } from '../s3/client.js';
import { listS3Input } from '../s3/staging.js';
import { expandGlob, globBase, isGlob } from '../read/shards.js';
import { walkTree } from '../read/walk.js';

/** A file the command reads or writes, with the option that names it (for the message). */
export interface NamedPath {
  /** `input`, `--out`, `--data`, `--store`… */
  what: string;
  /** The path as given; undefined or `-` (standard input/output) is never an alias. */
  path: string | undefined;
  /**
   * An output: a directory the command writes files into (`--out-dir`), so every input inside it
   * clashes. An input: ignored (a directory input is always expanded into its files).
   */
  dir?: boolean;
  /** An input: one file as listed (a plan's shard), not to be expanded (no listing, no walk). */
  file?: boolean;
}

/** One file of the read or write set, as compared. */
interface Resolved {
  p: NamedPath;
  /** The file itself (a shard of p.path, or p.path). */
  file: string;
  /** Device and inode of an existing local file, else undefined. */
  inode?: string;
  /** The real path (local: real directory and name) or the normalised `s3://bucket/key`. */
  name: string;
}

function s3Name(url: string): string {
  const { bucket, key } = parseS3Url(url);
  return `s3://${bucket}/${key.replace(/\/{2,}/g, '/').replace(/^\//, '')}`;
}

/** The real directory of `p` and its name (the real path when it exists; for a new file its real parent). */
async function realName(p: string): Promise<string> {
  const abs = path.resolve(p);
  const real = await fsp.realpath(abs).catch(() => undefined);
  if (real !== undefined) return real;
  const parent = path.dirname(abs);
  if (parent === abs) return abs;
  return path.join(await realName(parent), path.basename(abs));
}

async function resolveFile(p: NamedPath, file: string): Promise<Resolved> {
  if (isS3Url(file)) return { p, file, name: s3Name(file) };
  const st = await fsp.stat(file).catch(() => undefined);
  // Devices and FIFOs (/dev/stdout) may legitimately be both read and written.
  const inode = st?.isFile() ? `${st.dev}:${st.ino}` : undefined;
  return { p, file, inode, name: await realName(file) };
}

/** The files an input stands for: a file; every file below a directory; a glob's matches; an `s3://` name's objects. */
async function inputFiles(p: string): Promise<string[]> {
  if (isS3Url(p)) {
    try {
      const found = await listS3Input(p);
      return found.objects.map((o) => `s3://${found.bucket}/${o.key}`);
    } catch {
      return [p]; // nothing there (yet): reading it fails on its own
    }
  }
  const st = await fsp.stat(p).catch(() => undefined);
  if (st?.isDirectory()) {
    const entries = await walkTree(p).catch(() => []);
    return entries.map((e) => path.join(p, e.rel));
  }
  if (!st && isGlob(p)) return (await expandGlob(p).catch(() => undefined))?.shards.map((s) => s.path) ?? [];
  return [p];
}

function inside(dir: string, file: string): boolean {
  if (isS3Url(dir) !== isS3Url(file)) return false;
  if (isS3Url(dir)) return file === dir.replace(/\/$/, '') || file.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function same(a: Resolved, b: Resolved): boolean {
  return (a.inode !== undefined && a.inode === b.inode) || a.name === b.name;
}

function clashMessage(o: Resolved, i: Resolved): string {
  const shard = i.file !== i.p.path ? ` (${i.file})` : '';
  if (o.p.dir)
    return `${o.p.what} ${o.p.path} overlaps ${i.p.what} ${i.p.path}: it holds ${i.file}, which writing there would overwrite; write to another directory`;
  const links = !isS3Url(o.file) && path.resolve(o.file) !== path.resolve(i.file) ? ` (${o.file} and ${i.file} are links to one file)` : '';
  return `${o.p.what} ${o.p.path} is the same file as ${i.p.what} ${i.p.path}${shard}${links}: refusing to overwrite it; write to another file`;
}

/** Device and inode of the regular file open as descriptor `fd`, else undefined (a pipe, a terminal, closed). */
function fileInode(fd: number): string | undefined {
  try {
    const st = fstatSync(fd);
    return st.isFile() ? `${st.dev}:${st.ino}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Records and summaries go to standard output, and `-` reads standard input: a shell redirection
 * (`>> a.jsonl`, `< a.jsonl --out a.jsonl`) can make an input an output that no option names.
 * Refused as a named output is. (Standard error is not checked: the refusal itself goes there.)
 */
function refuseRedirectedStreams(ins: Resolved[], outs: Resolved[], readsStdin: boolean): void {
  const stdin = readsStdin ? fileInode(0) : undefined;
  const read = ins.map((i) => ({ what: `${i.p.what} ${i.file}`, inode: i.inode }));
  if (stdin) read.push({ what: 'standard input', inode: stdin });
  const stdout = fileInode(1);
  const clash = stdout ? read.find((i) => i.inode === stdout) : undefined;
  if (clash) throw new UsageError(`standard output is the same file as ${clash.what}: refusing to write into it; redirect it elsewhere`);
  const out = stdin ? outs.find((o) => !o.p.dir && o.inode === stdin) : undefined;
  if (out) throw new UsageError(`${out.p.what} ${out.p.path} is the same file as standard input: refusing to overwrite it; write to another file`);
}

/**
 * Throws a {@link UsageError} (exit 2) when an output is the same file as an input (any file a
 * directory, glob or prefix given as input holds) or as another output, or when an output directory
 * holds an input or another output. Call it before anything is written.
 */
export async function refuseAliasedOutputs(outputs: NamedPath[], inputs: NamedPath[]): Promise<void> {
  const given = (p: NamedPath): p is NamedPath & { path: string } => p.path !== undefined && p.path !== '-' && p.path !== '';
  const ins: Resolved[] = [];
  for (const p of inputs.filter(given)) ins.push(...(await Promise.all((p.file ? [p.path] : await inputFiles(p.path)).map((f) => resolveFile(p, f)))));
  const outs = await Promise.all(outputs.filter(given).map((p) => resolveFile(p, p.path)));
  refuseRedirectedStreams(ins, outs, inputs.some((p) => p.path === '-'));
  for (const [k, o] of outs.entries()) {
    // Two outputs on one path: the second would replace the first.
    const twin = outs.slice(0, k).find((x) => same(x, o));
    if (twin) throw new UsageError(`${twin.p.what} and ${o.p.what} are the same file (${o.p.path}): give two different files`);
    if (o.p.dir) {
      const held = ins.find((i) => same(i, o) || inside(o.name, i.name));
      if (held) throw new UsageError(clashMessage(o, held));
      const out = outs.find((x) => x !== o && !x.p.dir && inside(o.name, x.name));
      if (out) throw new UsageError(`${out.p.what} ${out.p.path} is inside ${o.p.what} ${o.p.path}: give it a path outside that directory`);
      continue;
    }
    const clash = ins.find((i) => same(i, o));
    if (clash) throw new UsageError(clashMessage(o, clash));
  }
}

/**
 * Throws a {@link UsageError} (exit 2) when the output directory `out` is the directory `held` or
 * holds it (a job's `--out-dir` and its `--work-dir`): the plan and the stage files would sit among
 * the output shards, where a reader of the output takes every visible file for output.
 */
export async function refuseDirectoryHolding(out: NamedPath, held: NamedPath, why = 'its files would sit among the output shards'): Promise<void> {
  if (!out.path || !held.path) return;
  const [o, h] = await Promise.all([resolveFile(out, out.path), resolveFile(held, held.path)]);
  const is = same(o, h);
  if (!is && !inside(o.name, h.name)) return;
  throw new UsageError(
    `${out.what} ${out.path} ${is ? 'is' : 'holds'} ${held.what} ${held.path}: ${why}; give directories apart`,
  );
}

/**
 * Throws a {@link UsageError} (exit 2) when the output directory `out` lies inside the directory of
 * an input (a directory, a glob's base, an `s3://` prefix) or holds it, as `neardup dedup` and
 * `neardup spans` refuse it: a later run over the same input would read the output shards as input.
 * A file input is not a directory to be inside of (an output directory holding it is
 * {@link refuseAliasedOutputs}'s).
 */
export async function refuseOutputInInputs(
  out: NamedPath,
  inputs: readonly string[],
  advice = 'write the output shards to another directory',
): Promise<void> {
  if (!out.path || out.path === '-') return;
  const o = await resolveFile(out, out.path);
  for (const input of inputs) {
    if (input === '' || input === '-') continue;
    const st = isS3Url(input) ? undefined : await fsp.stat(input).catch(() => undefined);
    if (st?.isFile() || (!st && !isS3Url(input) && !isGlob(input))) continue;
    const root = !st && isGlob(input) ? globBase(input) : input;
    const r = await resolveFile({ what: 'the input', path: root }, root);
    if (same(o, r) || inside(r.name, o.name) || inside(o.name, r.name)) {
      const kind = st?.isDirectory() ? 'directory ' : '';
      throw new UsageError(`${out.what} ${out.path} overlaps the input ${kind}${input}: ${advice}`);
    }
  }
}

/**
 * Refuses (exit 2) a list of input files that names one file twice: the same path, or two paths of
 * one file (a symbolic link, a hard link, `s3://b//k` and `s3://b/k`). The same documents twice would
 * all be duplicates of themselves.
 */
export async function refuseRepeatedFiles(files: readonly string[]): Promise<void> {
  const seen = new Map<string, string>();
  for (const f of files) {
    const r = await resolveFile({ what: 'the input', path: f }, f);
    for (const key of [r.inode, r.name]) {
      if (key === undefined) continue;
      const first = seen.get(key);
      if (first !== undefined) throw new UsageError(first === f ? `${f} is given twice` : `${f} and ${first} are the same file, given twice`);
    }
    for (const key of [r.inode, r.name]) if (key !== undefined) seen.set(key, f);
  }
}
