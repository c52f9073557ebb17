/**
 * Opening an input as a stream of bytes: a file or standard input, gunzipped or zstd-decompressed
 * transparently (recognised by magic bytes, whatever the name).
 * @module
 */
import { createReadStream, promises as fsp } from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { InputError } from '../../common/errors.js';
import { isZstd, zstdDecompress } from '../codec/zstd.js';
import { compressionFromName } from './formats.js';
import { noteInput } from './inputStamps.js';

/** How an input was compressed: known after its first chunk. */
export type Compression = 'gzip' | 'zstd' | undefined;

/** The display name of standard input in messages. */
export const STDIN_NAME = '<stdin>';

/** An opened input. */
export interface ByteSource {
  /** The path, or `<stdin>`; used in messages. */
  readonly name: string;
  /** Size on disk in bytes (compressed size for .gz and .zst), when known. */
  readonly size: number | undefined;
  /** Decompressed bytes, in chunks. Iterate once. */
  readonly chunks: AsyncIterable<Buffer>;
  /** Bytes read from disk or stdin so far (before decompression): for progress against {@link size}. */
  bytesRead(): number;
  /** True once the data turned out to be gzip (known after the first chunk). */
  gzip(): boolean;
  /** The compression the data turned out to have (known after the first chunk). */
  compression(): Compression;
  /** Closes a file never read (its chunks not iterated); standard input is left open. */
  close(): void;
}

/** Turns a failed fs call into an {@link InputError} naming the path. */
export function fsError(path: string, e: unknown): Error {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return new InputError(path, undefined, 'no such file or directory');
  if (code === 'EACCES' || code === 'EPERM') return new InputError(path, undefined, 'permission denied');
  if (code === 'EISDIR') return new InputError(path, undefined, 'is a directory');
  if (code === 'ENOTDIR') return new InputError(path, undefined, 'not a directory');
  return e instanceof Error ? e : new Error(String(e));
}

/** The stream of `path`'s bytes as stored (`stdin` for `-`), and the file's size (none for standard input). */
async function openRaw(path: string, stdin: Readable): Promise<{ raw: Readable; size: number | undefined }> {
  if (path === '-') return { raw: stdin, size: undefined };
  let size: number;
  try {
    const st = await fsp.stat(path);
    if (st.isDirectory())
      throw new InputError(path, undefined, 'is a directory, not a file (format dir reads the files in it)', undefined, { option: 'format', value: 'dir' });
    size = st.size;
  } catch (e) {
    throw fsError(path, e);
  }
  noteInput(path);
  // A small file gets a buffer of its own size: a 1 MiB buffer per tiny shard is mostly garbage.
  return { raw: createReadStream(path, { highWaterMark: Math.max(64, Math.min(1 << 20, size)) }), size };
}

/**
 * Opens `path` (`-` for standard input). Gzip and zstd data are recognised by their magic bytes,
 * whatever the file is called, and decompressed as they stream.
 */
export async function openSource(path: string, stdin: Readable = process.stdin): Promise<ByteSource> {
  const name = path === '-' ? STDIN_NAME : path;
  const { raw, size } = await openRaw(path, stdin);
  let read = 0;
  let compression: Compression;
  async function* rawChunks(): AsyncGenerator<Buffer> {
    try {
      for await (const c of raw) {
        const b = typeof c === 'string' ? Buffer.from(c) : (c as Buffer);
        read += b.length;
        yield b;
      }
    } catch (e) {
      throw fsError(path, e);
    }
  }
  async function* chunks(): AsyncGenerator<Buffer> {
    const it = rawChunks();
    const first = await it.next();
    if (first.done) return;
    const head = first.value;
    // A name that says .gz or .zst must hold that data: a first byte damaged in a compressed file
    // would otherwise be read as plain text, silently.
    const named = path === '-' ? undefined : compressionFromName(path);
    const gz = head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
    if ((named === 'gzip' && !gz) || (named === 'zstd' && !isZstd(head))) {
      throw new InputError(
        name,
        undefined,
        `invalid ${named} data (the name says ${named}, but the file does not start with its magic bytes: damaged, or named wrongly)`,
      );
    }
    if (gz) {
      compression = 'gzip';
      const gunzip = createGunzip({ chunkSize: 1 << 18 });
      const src = Readable.from(
        (async function* () {
          yield head;
          yield* { [Symbol.asyncIterator]: () => it };
        })(),
      );
      pipeline(src, gunzip, () => {});
      try {
        for await (const c of gunzip) yield c as Buffer;
      } catch (e) {
        if (e instanceof InputError) throw e;
        throw new InputError(name, undefined, `invalid gzip data (${(e as Error).message})`);
      }
      return;
    }
    if (isZstd(head)) {
      compression = 'zstd';
      const all = (async function* () {
        yield head;
        yield* { [Symbol.asyncIterator]: () => it };
      })();
      try {
        yield* zstdDecompress(all);
      } catch (e) {
        if (e instanceof InputError || (e as Error).name === 'UsageError') throw e;
        throw new InputError(name, undefined, `invalid zstd data (${(e as Error).message})`);
      }
      return;
    }
    yield head;
    for (;;) {
      const n = await it.next();
      if (n.done) return;
      yield n.value;
    }
  }
  const close = (): void => void (path === '-' || raw.destroy());
  return { name, size, chunks: chunks(), bytesRead: () => read, gzip: () => compression === 'gzip', compression: () => compression, close };
}
