/**
 * Fast line reading for the streaming pipeline: large reads, streaming UTF-8 decoding, manual split.
 * @module
 */
import { open } from 'node:fs/promises';

/** Options of {@link readLines}. */
export interface ReadLinesOptions {
  /** Bytes per read. Default 4 MiB. */
  chunkBytes?: number;
}

/**
 * The lines of a UTF-8 text file, without their "\n" (a trailing "\r" is removed too). A final line
 * without a newline is yielded; a final empty line after the last newline is not.
 * Yields arrays of lines (one per read) so callers can batch without per-line overhead.
 */
export async function* readLineBatches(path: string, options: ReadLinesOptions = {}): AsyncGenerator<string[]> {
  const size = options.chunkBytes ?? 1 << 22;
  const fh = await open(path, 'r');
  try {
    const dec = new TextDecoder('utf-8', { fatal: false });
    const buf = Buffer.allocUnsafe(size);
    let rest = '';
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, size, null);
      const text = bytesRead > 0 ? rest + dec.decode(buf.subarray(0, bytesRead), { stream: true }) : rest + dec.decode();
      const lines = text.split('\n');
      rest = bytesRead > 0 ? lines.pop()! : '';
      if (bytesRead === 0 && lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
      for (let i = 0; i < lines.length; i++) {
        const l = lines[i]!;
        if (l.length > 0 && l.charCodeAt(l.length - 1) === 13) lines[i] = l.slice(0, -1);
      }
      if (lines.length > 0) yield lines;
      if (bytesRead === 0) return;
    }
  } finally {
    await fh.close();
  }
}
