/**
 * Output sinks: a file written atomically (temp file, then rename; gzip when the name ends in .gz,
 * zstd when it ends in .zst),
 * or standard output. Writes are batched and respect backpressure.
 * @module
 */
import { createWriteStream, promises as fsp, rmSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { createGzip } from 'node:zlib';
import type { Transform, Writable } from 'node:stream';
import { InputError } from '../../common/errors.js';
import { compressionFromName } from '../read/formats.js';
import { createZstdCompressor } from '../codec/zstd.js';
import { checkInputsUnchanged } from '../read/inputStamps.js';

/** Somewhere to write text. */
export interface OutputSink {
  /** The path, or `<stdout>`. */
  readonly name: string;
  /** Appends text; await it to respect backpressure. */
  write(text: string): Promise<void>;
  /** Appends bytes after the text written so far (the sinks of this module have it). */
  writeBytes?(bytes: Uint8Array): Promise<void>;
  /** Flushes; for a file, renames the temp file into place. */
  close(): Promise<void>;
  /** Discards a partial file (no-op for stdout). */
  abort(): Promise<void>;
}

const BATCH = 1 << 16;

/** Temp files and directories to delete if the process is interrupted (SIGINT, SIGTERM, SIGHUP). */
const pending = new Set<string>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function onSignal(signal: NodeJS.Signals): void {
  for (const p of pending) {
    try {
      rmSync(p, { recursive: true, force: true });
    } catch {
      // best effort: the process is going away
    }
  }
  pending.clear();
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  // Die of the same signal (exit status 128 + n), as without this handler.
  process.kill(process.pid, signal);
}

/**
 * Deletes `path` (a temp file or directory) if the process gets SIGINT, SIGTERM or SIGHUP before the
 * returned function is called. The handlers are installed only while something is pending.
 */
export function removeOnSignal(path: string): () => void {
  if (pending.size === 0) { for (const s of SIGNALS) process.on(s, onSignal); }
  pending.add(path);
  return () => {
    if (!pending.delete(path)) return;
    if (pending.size === 0) { for (const s of SIGNALS) process.removeListener(s, onSignal); }
  };
}

/**
 * A write error naming the file: Node's own (`ENOSPC: no space left on device, write`) names no
 * path. Errors that already name it (an {@link InputError}) are returned as they are.
 */
export function writeError(name: string, e: unknown): Error {
  if (e instanceof InputError) return e;
  const err = e as NodeJS.ErrnoException;
  if (!err?.code) return e instanceof Error ? e : new Error(String(e));
  const what = (err.message ?? '').replace(/^[A-Z0-9_]+: /, '').replace(/, \w+( '.*')?$/, '');
  return Object.assign(new Error(`${name}: cannot write (${err.code}${what ? `: ${what}` : ''})`), { code: err.code });
}

function batching(name: string, target: Writable, finish: () => Promise<void>, abort: () => Promise<void>): OutputSink {
  let buf = '';
  // A write that fails (a full disk) fails the next write or the close, naming the file.
  let failed: Error | undefined;
  target.on('error', (e) => (failed ??= e));
  const put = async (chunk: string | Uint8Array): Promise<void> => {
    if (failed) throw writeError(name, failed);
    try {
      if (!target.write(chunk)) await once(target, 'drain');
    } catch (e) {
      throw writeError(name, failed ?? e);
    }
  };
  const flush = async (): Promise<void> => {
    if (buf.length === 0) return;
    const s = buf;
    buf = '';
    await put(s);
  };
  return {
    name,
    async write(text) {
      buf += text;
      if (buf.length >= BATCH) await flush();
    },
    async writeBytes(bytes) {
      await flush();
      if (bytes.length > 0) await put(bytes);
    },
    async close() {
      await flush();
      try {
        await finish();
      } catch (e) {
        throw writeError(name, e);
      }
      if (failed) throw writeError(name, failed);
    },
    abort,
  };
}

/** The compressing stream a file name asks for (.gz, .zst), or undefined for none. */
export async function compressorFor(file: string): Promise<Transform | undefined> {
  const c = compressionFromName(file);
  if (c === 'gzip') return createGzip();
  if (c === 'zstd') return createZstdCompressor();
  return undefined;
}

/** Standard output as a sink (not atomic, obviously). */
export function stdoutSink(stream: Writable = process.stdout): OutputSink {
  return batching('<stdout>', stream, async () => {}, async () => {});
}

/**
 * Files of one run put in place together: each writer finishes its temp file and adds its rename
 * (or marker) here instead of doing it, and the run calls {@link commit} once every file is whole,
 * or {@link discard} when one failed, which removes every temp file. So an output and its audit
 * (`--removed`) are both in place, or neither is (a full disk while writing either).
 */
export class PendingCommits {
  private steps: { commit: () => Promise<void>; discard: () => Promise<void> }[] = [];

  /** Adds a step of the commit (in order) and what removes its temp file if the commit never comes. */
  add(commit: () => Promise<void>, discard: () => Promise<void> = async () => {}): void {
    this.steps.push({ commit, discard });
  }

  /** Runs the steps in the order they were added; when one fails, the temp files of the rest are removed. */
  async commit(): Promise<void> {
    const steps = this.steps;
    this.steps = [];
    for (let i = 0; i < steps.length; i++) {
      try {
        await steps[i]!.commit();
      } catch (e) {
        for (const s of steps.slice(i)) await s.discard().catch(() => undefined);
        throw e;
      }
    }
  }

  /** Removes every temp file added and not committed. */
  async discard(): Promise<void> {
    const steps = this.steps;
    this.steps = [];
    for (const s of steps) await s.discard().catch(() => undefined);
  }
}

/**
 * The directory an output file `file` goes into, once it is known to be one: an output in a
 * directory that does not exist, or under a file, is an error naming it (exit 2), before any work.
 * Outputs never make their directories: a mistyped path is refused, not created.
 */
export async function outputDirectory(file: string): Promise<string> {
  const dir = path.dirname(path.resolve(file));
  const st = await fsp.stat(dir).catch(() => undefined);
  if (!st) throw new InputError(file, undefined, `cannot write: directory ${dir} does not exist`);
  if (!st.isDirectory()) throw new InputError(file, undefined, `cannot write: ${dir} is not a directory`);
  return dir;
}

/**
 * A file written atomically: the data goes to a temp file next to `file`, renamed over it on
 * {@link OutputSink.close}, so readers never see a partial file. A name ending in `.gz` is gzipped,
 * one ending in `.zst` zstd-compressed. With `commits`, close only finishes the temp file and the
 * rename waits for {@link PendingCommits.commit}.
 */
export async function atomicFileSink(file: string, commits?: PendingCommits): Promise<OutputSink> {
  const dir = await outputDirectory(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`);
  // Load the compressor first: a missing package must not leave a temp file behind.
  const gzip = await compressorFor(file);
  const untrack = removeOnSignal(tmp);
  const fileStream: WriteStream = createWriteStream(tmp);
  await once(fileStream, 'open').catch((e: NodeJS.ErrnoException) => {
    untrack();
    throw new InputError(file, undefined, `cannot write (${e.code ?? e.message})`);
  });
  gzip?.pipe(fileStream);
  const target: Writable = gzip ?? fileStream;
  let failed: Error | undefined;
  fileStream.on('error', (e) => {
    failed = e;
    // A compressor in front waits for 'drain' from a file that will not take more: fail it too.
    gzip?.destroy(e);
  });
  const abort = async (): Promise<void> => {
    gzip?.destroy();
    fileStream.destroy();
    await fsp.rm(tmp, { force: true });
    untrack();
  };
  return batching(
    file,
    target,
    async () => {
      const closed = once(fileStream, 'close');
      target.end();
      await closed;
      if (failed) {
        await abort();
        throw failed;
      }
      const rename = async (): Promise<void> => {
        try {
          checkInputsUnchanged();
          await fsp.rename(tmp, file);
        } catch (e) {
          await abort();
          throw writeError(file, e);
        }
        untrack();
      };
      if (commits) commits.add(rename, abort);
      else await rename();
    },
    abort,
  );
}

/**
 * A sink that writes straight into an existing non-regular file (a device such as /dev/stdout, a
 * FIFO, a socket): renaming a temp file over those would replace the device node itself.
 */
async function directSink(file: string): Promise<OutputSink> {
  const compressor = await compressorFor(file);
  const stream: WriteStream = createWriteStream(file, { flags: 'w' });
  await once(stream, 'open').catch((e: NodeJS.ErrnoException) => {
    throw new InputError(file, undefined, `cannot write (${e.code ?? e.message})`);
  });
  const target: Writable = compressor ?? stream;
  if (target !== stream) target.pipe(stream);
  return batching(
    file,
    target,
    async () => {
      const closed = once(stream, 'close');
      target.end();
      await closed;
    },
    async () => {
      stream.destroy();
    },
  );
}

/**
 * A sink for `--out`: standard output for none or `-`; a device or FIFO directly; otherwise the
 * file atomically (its rename left to `commits` when given). A symlink to a regular file is followed, so the link itself survives.
 */
export async function openOutput(file: string | undefined, commits?: PendingCommits): Promise<OutputSink> {
  if (file === undefined || file === '-') return stdoutSink();
  let real = file;
  try {
    real = await fsp.realpath(file);
    const st = await fsp.stat(real);
    if (!st.isFile()) {
      if (st.isDirectory()) throw new InputError(file, undefined, 'cannot write: it is a directory');
      return directSink(real);
    }
  } catch (e) {
    if (e instanceof InputError) throw e;
    // Does not exist yet: the ordinary atomic case.
  }
  return atomicFileSink(real, commits);
}
