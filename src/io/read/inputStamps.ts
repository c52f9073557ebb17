/**
 * The input files a run reads, as they were when it first opened each, checked before it puts an
 * output in place. A run that reads a file twice (spans' two passes, the copy `--output dedup`
 * makes, a streamed dedup's passes) would otherwise write records of one version of the file cut
 * or chosen by what it learnt from another, and exit 0. Every reader of a local file notes it
 * ({@link noteInput}); every commit of an output (an atomic file's rename, a Parquet file's, an
 * output directory's `_SUCCESS`) and the end of a CLI command call {@link checkInputsUnchanged}.
 * A file's stamp is its device, inode, size and modification time in nanoseconds: a file replaced
 * by a rename is another inode, and an edit in place moves the time.
 * The stamps belong to a run ({@link readingInputs}: a CLI command, `dedupFile`, `dedupSpansFile`),
 * not to the process: a server or a test process runs many, and a file may change between them.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { statSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { faultHooks } from '../../common/faults.js';

/** What identifies one version of a file. */
interface Stamp {
  /** The name the run gave it, for the message. */
  name: string;
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

/** The error of a run whose input changed while it read it: no output was put in place after it. */
export class InputChangedError extends Error {
  override readonly name = 'InputChangedError';

  constructor(readonly file: string) {
    super(
      `${file} changed while it was being read (its size, modification time or inode is not what the run first saw): no output is put in place after this; run again on a file that is not being written to`,
    );
  }
}

const runs = new AsyncLocalStorage<Map<string, Stamp>>();

/**
 * The run of a process that runs one command and nothing beside it (the CLI binary), kept without
 * {@link runs}: on Node 20 an AsyncLocalStorage in use hooks every promise the process makes (in a
 * profile of `neardup spans --unit line`, ~3 % of its CPU).
 */
let processRun: Map<string, Stamp> | undefined;
let processWide = false;

/**
 * Makes the next top-level {@link readingInputs} the process's run, seen by all its code without
 * AsyncLocalStorage. For the CLI binary only: a process that may run two at once (a server, the
 * library, the tests' in-process CLI) keeps one run per call.
 */
export function oneRunPerProcess(): void {
  processWide = true;
}

const current = (): Map<string, Stamp> | undefined => processRun ?? runs.getStore();

/** Temp directories this process made for its own files (spooled stdin, staged S3 objects, task spools): what is in them is not the user's input. */
const ownDirs = new Set<string>();

/**
 * Marks `dir` (a temp directory this process made) as its own: the files in it are copies the
 * process writes, reads and deletes itself, so they are not stamped as inputs.
 */
export function ownTempDir(dir: string): string {
  ownDirs.add(path.resolve(dir) + path.sep);
  return dir;
}

const isOwn = (key: string): boolean => {
  for (const d of ownDirs) if (key.startsWith(d)) return true;
  return false;
};

const stat = (file: string): BigIntStats | undefined => {
  try {
    return statSync(file, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
};

/**
 * Runs `fn` as a run whose inputs are stamped, and checks them when it ends (outputs written as
 * they went, to standard output or a device, still fail the run); inside another run, as part of it.
 */
export function readingInputs<T>(fn: () => Promise<T>): Promise<T> {
  if (current()) return fn();
  const body = async (): Promise<T> => {
    const r = await fn();
    checkInputsUnchanged();
    return r;
  };
  if (!processWide) return runs.run(new Map(), body);
  processWide = false;
  processRun = new Map();
  return body().finally(() => (processRun = undefined));
}

/** Notes `file` as read by the current run (its first stamp stays); not a regular file, or outside a run: nothing. */
export function noteInput(file: string): void {
  const seen = current();
  if (!seen || file === '-') return;
  const key = path.resolve(file);
  if (seen.has(key) || isOwn(key)) return;
  const st = stat(file);
  if (st?.isFile()) seen.set(key, { name: file, dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs });
}

/** Throws {@link InputChangedError} for the first input of the current run that is not as it was first noted (or is gone). */
export function checkInputsUnchanged(): void {
  const seen = current();
  if (!seen || seen.size === 0) return;
  faultHooks().beforeInputCheck?.([...seen.keys()]);
  for (const [key, s] of seen) {
    const now = stat(key);
    if (!now || now.dev !== s.dev || now.ino !== s.ino || now.size !== s.size || now.mtimeNs !== s.mtimeNs) throw new InputChangedError(s.name);
  }
}
