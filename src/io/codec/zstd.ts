/**
 * Zstandard streams. Node 20's zlib has no zstd, so decompression uses the `zstd` command when it
 * is on the PATH (the reference decoder, in its own process: ~10× faster than JavaScript, and it
 * runs beside the parser on another core; it verifies each frame's checksum) and fzstd (pure
 * JavaScript, streaming, concatenated frames, each frame's checksum verified here: see
 * ./zstdFrames.ts) otherwise, or when NEARDUP_ZSTD=js. Compression uses @bokuweb/zstd-wasm (the reference C
 * library compiled to WebAssembly, one-shot): the writer cuts the output into independent frames of
 * {@link ZSTD_FRAME_BYTES}, which every zstd decoder reads as one stream, so memory stays bounded;
 * each frame gets its content checksum ({@link withChecksum}).
 * @module
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { loadPackage } from '../../common/lazy.js';
import { FrameChecksum, ZstdFrameWalker } from './zstdFrames.js';
import { Xxh64 } from './xxh64.js';

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
  Decompress: new(ondata?: (data: Uint8Array, final?: boolean) => unknown) => { push(chunk: Uint8Array, final?: boolean): void };
}

interface ZstdWasm {
  init(): Promise<void>;
  compress(buf: Uint8Array, level?: number): Uint8Array;
  decompress(buf: Uint8Array, opts?: { defaultHeapSize: number }): Uint8Array;
}

let cli: boolean | undefined;

/** Whether the `zstd` command is used: NEARDUP_ZSTD=js forces fzstd, =cli requires the command. */
export function zstdCommandAvailable(): boolean {
  const mode = process.env.NEARDUP_ZSTD ?? 'auto';
  if (mode === 'js') return false;
  if (cli === undefined) {
    const r = spawnSync('zstd', ['--version'], { stdio: 'ignore', timeout: 5000 });
    cli = r.status === 0;
  }
  if (mode === 'cli' && !cli) throw new Error('NEARDUP_ZSTD=cli, but the zstd command is not on the PATH');
  return cli;
}

/**
 * Decompresses a zstd byte stream as it arrives. Errors (truncated or corrupt data) are thrown as
 * they are met, with the decoder's message; the caller names the file.
 */
export async function* zstdDecompress(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  if (zstdCommandAvailable()) yield* zstdDecompressCommand(chunks);
  else yield* zstdDecompressJs(chunks);
}

/** Decompression by the `zstd` command: input piped to its stdin, output read from its stdout. */
async function* zstdDecompressCommand(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const child = spawn('zstd', ['-d', '-c', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = once(child, 'close');
  // An early stop of the reader (an error further on) or zstd quitting ends the feeding quietly.
  const feeding = pipeline(Readable.from(chunks), child.stdin).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_PREMATURE_CLOSE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
  });
  let finished = false;
  try {
    for await (const c of child.stdout) yield c as Buffer;
    const [code] = (await exited) as [number | null];
    await feeding;
    finished = true;
    if (code !== 0) {
      const msg = stderr
        .split('\n')
        .map((l) => l.replace(/^zstd:\s*/, '').replace('/*stdin*\\', '').replace(/^\s*:\s*/, '').trim())
        .filter((l) => l !== '')
        .join('; ');
      throw new Error(msg || `zstd exited with code ${code}`);
    }
  } finally {
    if (!finished) {
      child.kill();
      await feeding.catch(() => undefined);
    }
  }
}

/**
 * Decompression in JavaScript (fzstd), one frame at a time ({@link ZstdFrameWalker}), each frame's
 * output checked against its content checksum ({@link FrameChecksum}): fzstd does not verify it.
 */
async function* zstdDecompressJs(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const fz = await loadPackage<Fzstd>('fzstd', 'reading .zst files');
  let out: Buffer[] = [];
  const check = new FrameChecksum();
  let frame: { push(chunk: Uint8Array, final?: boolean): void } | undefined;
  const walker = new ZstdFrameWalker((bytes, end, checksum) => {
    frame ??= new fz.Decompress((data) => {
      // fzstd may hand out views of its own window: copy before it is overwritten.
      if (data.length > 0) {
        const b = Buffer.from(data);
        check.update(b);
        out.push(b);
      }
    });
    // The frame's last bytes are pushed as final: fzstd then checks the frame ends there, and has
    // handed out all of the frame's content when push returns.
    frame.push(bytes, end);
    if (end) {
      frame = undefined;
      check.end(checksum);
    }
  });
  for await (const c of chunks) {
    walker.push(c);
    if (out.length) {
      const o = out;
      out = [];
      yield* o;
    }
  }
  walker.finish();
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
 * The one frame `frame` (as the WebAssembly compressor makes it, without a content checksum) with
 * its checksum added, so that a reader can tell corrupted data: the header's Content_Checksum_flag
 * set, and the low 32 bits of XXH64 of `content` after the last block (RFC 8878 §3.1.1).
 */
export function withChecksum(frame: Uint8Array, content: Uint8Array): Buffer {
  const out = Buffer.alloc(frame.length + 4);
  out.set(frame, 0);
  if ((frame[4]! & 0x04) !== 0) return out.subarray(0, frame.length);
  out[4] = frame[4]! | 0x04;
  const h = new Xxh64();
  h.update(content);
  out.writeUInt32LE(Number(h.digest() & 0xffffffffn), frame.length);
  return out;
}

/** The level of the zstd outputs unless `--zstd-level` says otherwise: zstd's own default. */
export const ZSTD_DEFAULT_LEVEL = 3;
/** The highest level zstd has (20–22 are its "ultra" levels; higher ones are taken as 22). */
export const ZSTD_MAX_LEVEL = 22;

let outputLevel = ZSTD_DEFAULT_LEVEL;

/** Sets the level of the zstd outputs this process writes (`--zstd-level`); undefined: the default. */
export function setZstdLevel(level: number | undefined): void {
  outputLevel = level ?? ZSTD_DEFAULT_LEVEL;
}

/**
 * A Transform that zstd-compresses what is written to it, one frame per {@link ZSTD_FRAME_BYTES}
 * of input (and one for the rest at the end), at `level` (default: the output level, see {@link setZstdLevel}).
 */
export async function createZstdCompressor(level = outputLevel): Promise<Transform> {
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
    t.push(withChecksum(z.compress(input, level), input));
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

/** One-shot zstd compression (for Parquet pages), at `level` (default: the output level, see {@link setZstdLevel}). */
export async function zstdCompressor(level = outputLevel): Promise<(b: Uint8Array) => Uint8Array> {
  const z = await zstdWasm();
  return (b) => z.compress(b, level);
}

/**
 * One-shot zstd decompression of a buffer whose decompressed size is known (Parquet pages), by the
 * WebAssembly build of the reference decoder: several times faster than fzstd on text.
 */
export async function zstdPageDecompressor(): Promise<(b: Uint8Array, outputLength: number) => Uint8Array> {
  const z = await zstdWasm();
  return (b, outputLength) => {
    const out = z.decompress(b, { defaultHeapSize: Math.max(outputLength, 1) });
    if (out.length !== outputLength) throw new Error(`zstd page: expected ${outputLength} bytes, decoded ${out.length}`);
    return out;
  };
}
