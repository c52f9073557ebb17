/**
 * A directory of output shards (local or an `s3://` prefix) reused by another run: files the run
 * will not write would sit next to its new shards under a fresh `_SUCCESS`, and a reader of the
 * directory would take them for part of the output. Such a directory is refused (exit 2) naming the
 * stray files, before anything is written; nothing is deleted for the user. Hidden names (`.` and
 * `_`: `_SUCCESS`, `.crc`, temp files) are not output shards and are left alone, as readers skip
 * them too. `_SUCCESS` lists the shards it vouches for, one relative name a line.
 * @module
 */
import { promises as fsp } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import { isS3Url, parseS3Url, s3List, s3Put } from '../s3/client.js';
import { walkTree } from '../read/walk.js';
import { checkInputsUnchanged } from '../read/inputStamps.js';

/** Name of the marker written into a directory of output shards once every shard is in place. */
export const SUCCESS_MARKER = '_SUCCESS';

function hidden(name: string): boolean {
  return name.startsWith('.') || name.startsWith('_');
}

/** The visible files below an output directory or prefix, relative with `/` (none when it does not exist). */
export async function outputFiles(dir: string): Promise<string[]> {
  if (isS3Url(dir)) {
    const { bucket, key } = parseS3Url(dir);
    const prefix = key === '' || key.endsWith('/') ? key : `${key}/`;
    return (await s3List(bucket, prefix)).map((o) => o.key.slice(prefix.length)).filter((rel) =>
      rel !== '' && !rel.endsWith('/') && !rel.split('/').some(hidden)
    );
  }
  const st = await fsp.stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) return [];
  return (await walkTree(dir, { skip: hidden })).map((e) => e.rel);
}

/**
 * Throws a {@link UsageError} (exit 2) when `dir` holds a visible file that is not one of `names`
 * (the relative names of the shards this run writes there). `what` is the option that named `dir`.
 */
export async function refuseStrayOutputs(dir: string, names: readonly string[], what = '--out-dir'): Promise<void> {
  const want = new Set(names.map((n) => n.split(path.sep).join('/')));
  const stray = (await outputFiles(dir)).filter((f) => !want.has(f)).sort();
  if (stray.length === 0) return;
  const shown = stray.slice(0, 5).join(', ') + (stray.length > 5 ? `, … (${stray.length} in all)` : '');
  throw new UsageError(
    `${what} ${dir} holds file(s) this run will not write: ${shown}; they would sit next to the new output shards under a fresh ${SUCCESS_MARKER}. Remove them (or the directory) first, or give another ${what}`,
    // The flag hint names --out: wrong for --out-dir, which the message names already.
    what === '--out-dir' ? undefined : { option: 'out' },
  );
}

/** The text of `_SUCCESS`: the relative names of the shards it vouches for, sorted, one a line. */
export function successText(names: readonly string[]): string {
  return [...names].map((n) => n.split(path.sep).join('/')).sort().map((n) => `${n}\n`).join('');
}

/**
 * Writes `dir/_SUCCESS` listing those of `names` that are in `dir` (a shard a job skipped has no
 * output, and is not vouched for).
 */
export async function writeSuccessMarker(dir: string, names: readonly string[]): Promise<void> {
  checkInputsUnchanged();
  const present = new Set(await outputFiles(dir));
  const text = successText(names.filter((n) => present.has(n.split(path.sep).join('/'))));
  if (isS3Url(dir)) await s3Put(`${dir.replace(/\/+$/, '')}/${SUCCESS_MARKER}`, text);
  else await fsp.writeFile(path.join(dir, SUCCESS_MARKER), text);
}

/** The lock a run holds on a local output directory while it writes there (hidden: readers skip it). */
export const OUTPUT_LOCK = '.neardup-writing';

/** Whether process `pid` of this host is alive (a lock left by a dead one is stale). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the output directory `dir` (local, existing) for this run: creates `dir/.neardup-writing`
 * exclusively, so two runs writing one directory at once cannot mix their shards. Another live
 * run's lock is a {@link UsageError} (exit 2) naming it; a lock of a process of this host that is
 * gone is taken over. Returns the release function.
 */
export async function lockOutputDirectory(dir: string, what = 'output directory'): Promise<() => Promise<void>> {
  const file = path.join(dir, OUTPUT_LOCK);
  const me = `${process.pid}@${hostname()} ${new Date().toISOString()}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fsp.writeFile(file, `${me}\n`, { flag: 'wx' });
      return async () => {
        // Only our own lock is removed (a stale-lock takeover by another run replaced it otherwise).
        const now = await fsp.readFile(file, 'utf8').catch(() => '');
        if (now === `${me}\n`) await fsp.rm(file, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        // Created but not written (a full disk): no lock, and no empty file left behind.
        await fsp.rm(file, { force: true });
        throw e;
      }
    }
    const holder = (await fsp.readFile(file, 'utf8').catch(() => '')).trim();
    const m = /^(\d+)@(\S+)/.exec(holder);
    const stale = m !== null && m[2] === hostname() && !alive(Number(m[1]));
    if (!stale) {
      throw new UsageError(
        `${what} ${dir} is being written by another run (${
          holder || 'unknown'
        }, in ${file}): wait for it, or give another directory; remove ${file} if no such run exists`,
        { option: 'out' },
      );
    }
    await fsp.rm(file, { force: true });
  }
  throw new UsageError(`${what} ${dir}: another run keeps taking it; give another directory`, { option: 'out' });
}
