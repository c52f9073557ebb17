/**
 * Output sinks: a file written atomically (temp file, then rename; gzip when the name ends in .gz),
 * or standard output. Writes are batched and respect backpressure.
 * @module
 */
import { createWriteStream, promises as fsp, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { createGzip, type Gzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import { InputError } from './errors.js';

/** Somewhere to write text. */
export interface OutputSink {
  /** The path, or `<stdout>`. */
  readonly name: string;
  /** Appends text; await it to respect backpressure. */
  write(text: string): Promise<void>;
  /** Flushes; for a file, renames the temp file into place. */
  close(): Promise<void>;
  /** Discards a partial file (no-op for stdout). */
  abort(): Promise<void>;
}

const BATCH = 1 << 16;

function batching(name: string, target: Writable, finish: () => Promise<void>, abort: () => Promise<void>): OutputSink {
  let buf = '';
  const flush = async (): Promise<void> => {
    if (buf.length === 0) return;
    const s = buf;
    buf = '';
    if (!target.write(s)) await once(target, 'drain');
  };
  return {
    name,
    async write(text) {
      buf += text;
      if (buf.length >= BATCH) await flush();
    },
    async close() {
      await flush();
      await finish();
    },
    abort,
  };
}

/** Standard output as a sink (not atomic, obviously). */
export function stdoutSink(stream: Writable = process.stdout): OutputSink {
  return batching('<stdout>', stream, async () => {}, async () => {});
}

/**
 * A file written atomically: the data goes to a temp file next to `file`, renamed over it on
 * {@link OutputSink.close}, so readers never see a partial file. A name ending in `.gz` is gzipped.
 */
export async function atomicFileSink(file: string): Promise<OutputSink> {
  const dir = path.dirname(path.resolve(file));
  try {
    const st = await fsp.stat(dir);
    if (!st.isDirectory()) throw new InputError(file, undefined, `cannot write: ${dir} is not a directory`);
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(file, undefined, `cannot write: directory ${dir} does not exist`);
  }
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`);
  const fileStream: WriteStream = createWriteStream(tmp);
  await once(fileStream, 'open').catch((e: NodeJS.ErrnoException) => {
    throw new InputError(file, undefined, `cannot write (${e.code ?? e.message})`);
  });
  let gzip: Gzip | undefined;
  if (file.toLowerCase().endsWith('.gz')) {
    gzip = createGzip();
    gzip.pipe(fileStream);
  }
  const target: Writable = gzip ?? fileStream;
  let failed: Error | undefined;
  fileStream.on('error', (e) => (failed = e));
  const abort = async (): Promise<void> => {
    gzip?.destroy();
    fileStream.destroy();
    await fsp.rm(tmp, { force: true });
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
      await fsp.rename(tmp, file);
    },
    abort,
  );
}

/** A sink for `--out`: the file when given (atomic), else standard output. */
export async function openOutput(file: string | undefined): Promise<OutputSink> {
  return file === undefined || file === '-' ? stdoutSink() : atomicFileSink(file);
}
