/**
 * `s3://` inputs and outputs of a command run on one machine, mapped onto local paths in a spool
 * directory: an input (one object, a glob of keys, or a prefix) is copied there before the command
 * runs, in large ranged GETs; an output is written there by the command's own atomic writers and
 * uploaded after the command succeeded, each object whole or not at all (a PUT, or a multipart
 * upload completed last). The readers (worker threads reading byte ranges, Parquet's random access,
 * the second pass of `--output dedup`) then work on local files unchanged, at local-disk speed.
 * The cost is local disk for the inputs and outputs of the run.
 * @module
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import { removeOnSignal } from '../write/output.js';
import { isGlob, globBase } from '../read/shards.js';
import { walkTree } from '../read/walk.js';
import { refuseStrayOutputs } from '../write/outDir.js';
import { refuseJobClaim } from '../write/outClaim.js';
import { inParallel, isS3Url, PARALLEL, parseS3Url, s3Download, s3List, S3NotFoundError, s3Size, s3Upload } from './client.js';
import { ownTempDir } from '../read/inputStamps.js';

/** Hidden by the Hadoop/Spark convention (`.crc`, `_SUCCESS`), as in local directories of shards. */
function hidden(rel: string): boolean {
  const base = rel.slice(rel.lastIndexOf('/') + 1);
  return base.startsWith('.') || base.startsWith('_');
}

/** A glob's rest (after its fixed base) as a regular expression over relative keys. */
export function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      re += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '{') re += '(?:';
    else if (c === '}') re += ')';
    else if (c === ',' && re.lastIndexOf('(?:') > re.lastIndexOf(')')) re += '|';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) re += '\\[';
      else {
        re += `[${glob.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^$()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** The objects an `s3://` input names: one object, the visible objects a glob matches, or those under a prefix (sorted by key). */
export interface S3Input {
  kind: 'object' | 'glob' | 'prefix';
  bucket: string;
  /** The keys' common prefix (empty for one object): output names are the keys relative to it. */
  prefix: string;
  objects: { key: string; size: number }[];
}

/**
 * Resolves an `s3://` input as a local path is resolved: the object of that name, else a glob over
 * keys, else every visible object below it as a prefix (a "directory"; `_` and `.` names skipped).
 * Nothing matching is a usage error naming the name.
 */
export async function listS3Input(url: string): Promise<S3Input> {
  const { bucket, key } = parseS3Url(url);
  // A missing bucket is named by the name given, not by the prefix listed.
  const list = (prefix: string): Promise<{ key: string; size: number }[]> =>
    s3List(bucket, prefix).catch((e: unknown) => {
      throw e instanceof S3NotFoundError && e.missing === 'bucket' ? new S3NotFoundError(url, 'bucket') : e;
    });
  if (isGlob(key)) {
    const base = globBase(key);
    const prefix = base === '.' ? '' : `${base}/`;
    const match = globRegExp(key.slice(prefix.length));
    const objects = (await list(prefix)).filter((o) => match.test(o.key.slice(prefix.length)) && !hidden(o.key.slice(prefix.length)));
    if (objects.length === 0) throw new UsageError(`no object matches ${url}`);
    return { kind: 'glob', bucket, prefix, objects };
  }
  const size = await s3Size(url);
  if (size !== undefined) return { kind: 'object', bucket, prefix: '', objects: [{ key, size }] };
  const prefix = key === '' || key.endsWith('/') ? key : `${key}/`;
  const objects = (await list(prefix)).filter((o) => !o.key.endsWith('/') && !hidden(o.key.slice(prefix.length)));
  if (objects.length === 0) {
    const under = prefix ? `no key under "${prefix}"` : 'no key';
    throw new UsageError(`${url}: the bucket "${bucket}" has ${key && prefix !== key ? `no key "${key}" and ${under}` : under}`);
  }
  return { kind: 'prefix', bucket, prefix, objects };
}

/** The name tables (local stand-in → `s3://` name) of the stages alive in this process. */
const stagedNames: [string, string][][] = [];

/**
 * The `s3://` name of `file` when it is (or lies below) the local stand-in of an input or output of
 * a stage alive in this process, else `file` as given: what a command writes into an output (an
 * audit's `reference_source`) names what the user gave, never the spool.
 */
export function s3NameOf(file: string): string {
  for (const names of stagedNames) {
    for (const [local, url] of names) {
      if (file === local) return url;
      if (file.startsWith(local.endsWith('/') ? local : `${local}/`)) return url.replace(/\/+$/, '') + '/' + file.slice(local.length).replace(/^\/+/, '');
    }
  }
  return file;
}

/**
 * `text` with the local stand-ins of the stages alive in this process named by their `s3://` names:
 * the CLI's messages speak of what the user gave. Longest stand-ins first, so a file below a staged
 * directory is named by its own key.
 */
export function s3Display(text: string): string {
  if (stagedNames.length === 0) return text;
  for (const names of stagedNames) for (const [local, url] of names) if (text.includes(local)) text = text.split(local).join(url);
  return text;
}

/** The local stand-ins of a command's `s3://` names, and what to do when it ends. */
export class S3Stage {
  private spool: string | undefined;
  private untrack: (() => void) | undefined;
  private n = 0;
  private readonly outputs: { url: string; local: string; last: boolean }[] = [];
  /** Local stand-in → its S3 name, longest first: for {@link s3Display} and {@link s3NameOf}. */
  private readonly names: [string, string][] = [];
  /** Objects downloaded and uploaded, and their bytes: for `-v`. */
  readonly moved = { down: 0, downBytes: 0, up: 0, upBytes: 0 };

  private async dir(kind: 'in' | 'out'): Promise<string> {
    if (!this.spool) {
      this.spool = ownTempDir(await mkdtemp(path.join(process.env.NEARDUP_S3_SPOOL ?? tmpdir(), 'neardup-s3-')));
      this.untrack = removeOnSignal(this.spool);
    }
    const d = path.join(this.spool, `${kind}${this.n++}`);
    await mkdir(d, { recursive: true });
    return d;
  }

  /** The directory the inputs are copied below (by bucket and key). */
  private async inputRoot(): Promise<string> {
    this.inputs ??= await this.dir('in');
    return this.inputs;
  }

  private inputs: string | undefined;

  private named(local: string, url: string): void {
    this.names.push([local, url]);
    this.names.sort((a, b) => b[0].length - a[0].length);
    if (!stagedNames.includes(this.names)) stagedNames.push(this.names);
  }

  /** Copies the listed objects below `local`, by their keys relative to `prefix`, several at once: many small shards are latency-bound. */
  private async fetchAll(bucket: string, prefix: string, found: { key: string; size: number }[], local: string): Promise<void> {
    await inParallel(found.map((o) => () => this.fetch(bucket, o.key, o.size, path.join(local, o.key.slice(prefix.length)))), PARALLEL);
  }

  private async fetch(bucket: string, key: string, size: number, file: string): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    await s3Download(`s3://${bucket}/${key}`, size, file);
    this.moved.down++;
    this.moved.downBytes += size;
  }

  /**
   * The local path standing for the input `url`: one object (by its name, so its format is known
   * from it), a glob over keys (the same glob under a local base, so the output shards keep their
   * relative names), or every visible object under a prefix (a local directory).
   */
  async input(url: string): Promise<string> {
    const { bucket } = parseS3Url(url);
    const found = await listS3Input(url);
    // Inputs sit at their bucket and key below one directory: several inputs then keep the key
    // layout (their output names under --out DIR are relative to their deepest common prefix, as
    // in a job that reads them in the bucket), and an object named twice is one file (refused as twice).
    const keyDir = found.kind === 'object' ? path.posix.dirname(found.objects[0]!.key) : found.prefix;
    const local = path.join(await this.inputRoot(), bucket, ...keyDir.split('/').filter((x) => x !== '' && x !== '.'));
    await mkdir(local, { recursive: true });
    if (found.kind === 'object') {
      const file = path.join(local, path.posix.basename(found.objects[0]!.key));
      await this.fetch(bucket, found.objects[0]!.key, found.objects[0]!.size, file);
      this.named(file, url);
      return file;
    }
    await this.fetchAll(bucket, found.prefix, found.objects, local);
    if (found.kind === 'glob') {
      this.named(`${local}/`, `s3://${bucket}/${found.prefix}`);
      return path.join(local, parseS3Url(url).key.slice(found.prefix.length));
    }
    this.named(local, url.replace(/\/+$/, ''));
    return local;
  }

  /**
   * The local path standing for the output `url`, uploaded by {@link commit}: a name ending in `/`
   * is a directory (its files become keys under the prefix), anything else a file, or a directory
   * when the command made one there (the output shards of a sharded input). A `last` output (the
   * `--removed` audit) is uploaded after the others, as locally it is put in place after the output.
   */
  async output(url: string, last = false): Promise<string> {
    const { key } = parseS3Url(url);
    const local = await this.dir('out');
    const name = key.replace(/\/+$/, '').split('/').pop() || 'out';
    const p = path.join(local, name);
    if (key === '' || key.endsWith('/')) await mkdir(p);
    this.outputs.push({ url, local: p, last });
    this.named(p, url.replace(/\/+$/, ''));
    return p;
  }

  /**
   * Uploads what the command wrote, after it succeeded. An output it did not write is left alone; an
   * output prefix holding objects the command did not write is a usage error, nothing uploaded.
   */
  async commit(): Promise<void> {
    // Before any upload: a prefix that holds objects this run did not write is refused (../write/outDir.ts).
    for (const { url, local } of this.outputs) {
      if (!(await stat(local).catch(() => undefined))?.isDirectory()) continue;
      const names = (await walkTree(local, { skip: (n) => n.startsWith('.') })).map((e) => e.rel);
      await refuseStrayOutputs(url, names, 'output');
      await refuseJobClaim(url, 'output');
    }
    const ordered = [...this.outputs.filter((o) => !o.last), ...this.outputs.filter((o) => o.last)];
    for (const { url, local } of ordered) {
      const st = await stat(local).catch(() => undefined);
      if (!st) continue;
      if (st.isFile()) {
        await s3Upload(local, st.size, url);
        this.moved.up++;
        this.moved.upBytes += st.size;
        continue;
      }
      const base = url.endsWith('/') ? url : `${url}/`;
      // Markers (`_SUCCESS`) last, after every shard: when one is there, so is every shard it marks.
      const entries = (await walkTree(local, { skip: (n) => n.startsWith('.') })).sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
      const put = async (rel: string): Promise<void> => {
        const f = path.join(local, rel);
        const size = (await stat(f)).size;
        await s3Upload(f, size, base + rel);
        this.moved.up++;
        this.moved.upBytes += size;
      };
      const markers = entries.filter((e) => hidden(e.rel));
      await inParallel(entries.filter((e) => !hidden(e.rel)).map((e) => () => put(e.rel)), PARALLEL);
      for (const e of markers) await put(e.rel);
    }
  }

  /** Removes the spool directory. */
  async cleanup(): Promise<void> {
    for (let i = stagedNames.length - 1; i >= 0; i--) if (stagedNames[i] === this.names) stagedNames.splice(i, 1);
    if (!this.spool) return;
    await rm(this.spool, { recursive: true, force: true });
    this.untrack?.();
    this.spool = undefined;
  }
}

export { isS3Url };
