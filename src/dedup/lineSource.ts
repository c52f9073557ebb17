/**
 * Fast line reading for the streaming pipeline: large reads, split at the last newline byte (a
 * newline byte never occurs inside a multi-byte UTF-8 sequence), one native decode per chunk.
 * @module
 */
import { open } from 'node:fs/promises';

/** Options of {@link readLineBatches}. */
export interface ReadLinesOptions {
  /** Bytes per read. Default 4 MiB. */
  chunkBytes?: number;
}

/**
 * The lines of a UTF-8 text file, without their "\n" (a trailing "\r" is removed too). A final line
 * without a newline is yielded; a final empty line after the last newline is not. Invalid UTF-8
 * becomes U+FFFD. Yields arrays of lines (one per read) so callers can batch without per-line cost.
 */
export async function* readLineBatches(path: string, options: ReadLinesOptions = {}): AsyncGenerator<string[]> {
  const size = Math.max(1, options.chunkBytes ?? 1 << 22);
  const fh = await open(path, 'r');
  try {
    let buf = Buffer.allocUnsafe(size);
    let carry = 0; // bytes of an unfinished line at the start of buf
    for (;;) {
      if (carry === buf.length) {
        // A line longer than the buffer: grow it.
        const grown = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(grown, 0, 0, carry);
        buf = grown;
      }
      const { bytesRead } = await fh.read(buf, carry, buf.length - carry, null);
      const end = carry + bytesRead;
      if (bytesRead === 0) {
        if (end > 0) yield [stripCr(buf.toString('utf8', 0, end))];
        return;
      }
      const nl = buf.lastIndexOf(10, end - 1);
      if (nl < 0) {
        carry = end;
        continue;
      }
      const lines = buf.toString('utf8', 0, nl).split('\n');
      for (let i = 0; i < lines.length; i++) lines[i] = stripCr(lines[i]!);
      yield lines;
      buf.copy(buf, 0, nl + 1, end);
      carry = end - nl - 1;
    }
  } finally {
    await fh.close();
  }
}

function stripCr(l: string): string {
  return l.length > 0 && l.charCodeAt(l.length - 1) === 13 ? l.slice(0, -1) : l;
}
