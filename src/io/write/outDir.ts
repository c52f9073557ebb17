/**
 * A directory of output shards (local or an `s3://` prefix) reused by another run: files the run
 * will not write would sit next to its new shards under a fresh `_SUCCESS`, and a reader of the
 * directory would take them for part of the output. Such a directory is refused (exit 2) naming the
 * stray files, before anything is written; nothing is deleted for the user. Hidden names (`.` and
 * `_`: `_SUCCESS`, `.crc`, temp files) are not output shards and are left alone, as readers skip
 * them too. `_SUCCESS` lists the shards it vouches for, one relative name a line. Two runs writing
 * one output directory, or one single output file, at once are kept apart by a lock file.
 * @module
 */
import { promises as fsp, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { UsageError, type InputFix } from '../../common/errors.js';
import { isS3Url, parseS3Url, s3List, s3Put } from '../s3/client.js';
import { walkTree } from '../read/walk.js';
import { checkInputsUnchanged } from '../read/inputStamps.js';
import { removeOnSignal } from './output.js';

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

/**
 * Throws a {@link UsageError} (exit 2) when an output shard's relative name (an input file's) is
 * hidden, a part of it starting with `.` or `_`: readers of the directory skip it and `_SUCCESS`
 * does not list it, and a shard named `_SUCCESS` would be replaced by the marker.
 */
export function refuseHiddenShardNames(dir: string, names: readonly string[], what = '--out-dir'): void {
  const name = names.map((n) => n.split(path.sep).join('/')).find((n) => n.split('/').some(hidden));
  if (name === undefined) return;
  throw new UsageError(
    `${what} ${dir}: the output shard of the input file ${name} would be a hidden file (a name starting with . or _), which readers of the directory skip${
      name.split('/').pop() === SUCCESS_MARKER ? ' and the _SUCCESS marker replaces' : ''
    }; rename the input file`,
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

/** The lock a run holds on a local output directory while it writes there (hidden: readers skip it); a single output file's ends so. */
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

/** A lock to take, and how its refusal names what it guards. */
interface LockSpec {
  /** The lock file, created exclusively. */
  file: string;
  /** What it guards, as the refusal names it (`output directory out/`, `--out pairs.tsv`). */
  guards: string;
  /** What to give instead: `directory`, `file`. */
  instead: string;
  fix: InputFix | undefined;
}

/**
 * Creates `spec.file` exclusively, holding `pid@host time`: another live run's lock is a
 * {@link UsageError} (exit 2) naming it; a lock of a process of this host that is gone is taken
 * over. Returns the release function; a signal that ends the process first removes the lock too.
 */
async function takeLock(spec: LockSpec): Promise<() => Promise<void>> {
  const { file } = spec;
  const me = `${process.pid}@${hostname()} ${new Date().toISOString()}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    // Tracked before it exists and made synchronously: a signal's handler runs only between turns of
    // the event loop, so none sees the lock made and not yet tracked (an asynchronous write left it
    // behind when the signal came between the two), nor tracked after another run's was found.
    const untrack = removeOnSignal(file);
    try {
      writeFileSync(file, `${me}\n`, { flag: 'wx' });
      return async () => {
        // Only our own lock is removed (a stale-lock takeover by another run replaced it otherwise);
        // synchronously, then untracked, so that a signal meanwhile finds it tracked or gone.
        let now = '';
        try {
          now = readFileSync(file, 'utf8');
        } catch {
          // gone already
        }
        if (now === `${me}\n`) rmSync(file, { force: true });
        untrack();
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        // Created but not written (a full disk): no lock, and no empty file left behind.
        rmSync(file, { force: true });
        untrack();
        throw e;
      }
      untrack();
    }
    const holder = (await fsp.readFile(file, 'utf8').catch(() => '')).trim();
    const m = /^(\d+)@(\S+)/.exec(holder);
    const stale = m !== null && m[2] === hostname() && !alive(Number(m[1]));
    if (!stale) {
      throw new UsageError(
        `${spec.guards} is being written by another run (${
          holder || 'unknown'
        }, in ${file}): wait for it, or give another ${spec.instead}; remove ${file} if no such run exists`,
        spec.fix,
      );
    }
    await fsp.rm(file, { force: true });
  }
  throw new UsageError(`${spec.guards}: another run keeps taking it; give another ${spec.instead}`, spec.fix);
}

/**
 * Takes the output directory `dir` (local, existing) for this run: creates `dir/.neardup-writing`
 * exclusively, so two runs writing one directory at once cannot mix their shards. Another live
 * run's lock is a {@link UsageError} (exit 2) naming it (as `what named`: `named` is `dir`, or the
 * output a temp directory `dir` becomes); a lock of a process of this host that is gone is taken
 * over. Returns the release function.
 */
export function lockOutputDirectory(dir: string, what = 'output directory', named = dir): Promise<() => Promise<void>> {
  return takeLock({ file: path.join(dir, OUTPUT_LOCK), guards: `${what} ${named}`, instead: 'directory', fix: { option: 'out' } });
}

/**
 * The lock of the single output file `file` (its real path): beside it, hidden as its temp file is,
 * so a reader of the directory skips it.
 */
export function outputFileLock(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}${OUTPUT_LOCK}`);
}

/**
 * Takes the local output file `file` (given by option `what`, `--out`) for this run, with the
 * directory lock's rule: `.NAME.neardup-writing` beside it (beside the target of a symbolic link),
 * so two runs writing one file at once cannot leave one's output next to the other's audit.
 * Undefined (no lock) for what is not written through a temp file (a device, a FIFO), for a
 * directory (it has its own lock), and when the lock cannot be created (a missing or read-only
 * directory: writing the output then fails, naming the file). `held`: the locks this run took
 * already (a file named twice, `--out X --removed X`, takes one: the command refuses the pair by
 * name); the new one is added.
 */
export async function lockOutputFile(file: string, what: string, held = new Set<string>()): Promise<(() => Promise<void>) | undefined> {
  let real = await fsp.realpath(file).catch(() => undefined);
  if (real === undefined) {
    const dir = await fsp.realpath(path.dirname(path.resolve(file))).catch(() => undefined);
    if (dir === undefined) return undefined;
    real = path.join(dir, path.basename(file));
  }
  const st = await fsp.stat(real).catch(() => undefined);
  const lock = outputFileLock(real);
  if ((st !== undefined && !st.isFile()) || held.has(lock)) return undefined;
  try {
    const release = await takeLock({ file: lock, guards: `${what} ${file}`, instead: 'file', fix: what === '--out' ? { option: 'out' } : undefined });
    held.add(lock);
    return release;
  } catch (e) {
    if (e instanceof UsageError) throw e;
    return undefined;
  }
}
