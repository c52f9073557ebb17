/**
 * Zstandard streams. Node 20's zlib has no zstd, so decompression uses fzstd (pure JavaScript,
 * streaming, concatenated frames) and compression @bokuweb/zstd-wasm (the reference C library
 * compiled to WebAssembly, one-shot): the writer cuts the output into independent frames of
 * {@link ZSTD_FRAME_BYTES}, which every zstd decoder reads as one stream, so memory stays bounded.
 * @module
 */
import { Transform, type TransformCallback } from 'node:stream';
import { loadPackage } from './lazy.js';

/** The first four bytes of a zstd frame (magic number 0xFD2FB528, little-endian). */
export const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd] as const;

/** Uncompressed bytes per frame written: large enough for a good ratio, small enough to hold twice. */
export const ZSTD_FRAME_BYTES = 4 << 20;

/** True when `b` starts with a zstd frame (or a skippable frame, magic 0x184D2A5?). */
export function isZstd(b: Uint8Array): boolean {
  if (b.length < 4) return false;
  if (b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd) return true;
  return (b[0]! & 0xf0) === 0x50 && b[1] === 0x2a && b[2] === 0x4d && b[3] === 0x18;
}

interface Fzstd {
  Decompress: new (ondata?: (data: Uint8Array, final?: boolean) => unknown) => { push(chunk: Uint8Array, final?: boolean): void };
}

interface ZstdWasm {
  init(): Promise<void>;
  compress(buf: Uint8Array, level?: number): Uint8Array;
}

/**
 * Decompresses a zstd byte stream as it arrives. Errors (truncated or corrupt data) are thrown as
 * they are met, with fzstd's message; the caller names the file.
 */
export async function* zstdDecompress(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const fz = await loadPackage<Fzstd>('fzstd', 'reading .zst files');
  let out: Buffer[] = [];
  const d = new fz.Decompress((data) => {
    // fzstd may hand out views of its own window: copy before it is overwritten.
    if (data.length > 0) out.push(Buffer.from(data));
  });
  let last: Buffer | undefined;
  for await (const c of chunks) {
    // Push with one chunk of delay, so the last one can be marked final (fzstd checks the frame ends).
    if (last) {
      d.push(last);
      if (out.length) {
        const o = out;
        out = [];
        yield* o;
      }
    }
    last = c;
  }
  d.push(last ?? new Uint8Array(0), true);
  yield* out;
}

let wasm: Promise<ZstdWasm> | undefined;

/** The compressor, initialised once. */
async function zstdWasm(): Promise<ZstdWasm> {
  wasm ??= loadPackage<ZstdWasm & { default?: ZstdWasm }>('@bokuweb/zstd-wasm', 'writing .zst files').then(async (m) => {
    const z = typeof m.compress === 'function' ? m : m.default!;
    await z.init();
    return z;
  });
  return wasm;
}

/**
 * A Transform that zstd-compresses what is written to it, one frame per {@link ZSTD_FRAME_BYTES}
 * of input (and one for the rest at the end). Level 3 is zstd's own default.
 */
export async function createZstdCompressor(level = 3): Promise<Transform> {
  const z = await zstdWasm();
  let pending: Buffer[] = [];
  let size = 0;
  let frames = 0;
  const frame = (t: Transform, last = false): void => {
    // An empty output is still one (empty) frame: zero bytes are not a valid .zst file.
    if (size === 0 && !(last && frames === 0)) return;
    frames++;
    const input = pending.length === 1 ? pending[0]! : Buffer.concat(pending, size);
    pending = [];
    size = 0;
    t.push(Buffer.from(z.compress(input, level)));
  };
  return new Transform({
    transform(chunk: Buffer | string, _enc, cb: TransformCallback) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      pending.push(b);
      size += b.length;
      try {
        if (size >= ZSTD_FRAME_BYTES) frame(this);
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
    flush(cb: TransformCallback) {
      try {
        frame(this, true);
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
  });
}

/** One-shot zstd compression (for Parquet pages). */
export async function zstdCompressor(level = 3): Promise<(b: Uint8Array) => Uint8Array> {
  const z = await zstdWasm();
  return (b) => z.compress(b, level);
}
