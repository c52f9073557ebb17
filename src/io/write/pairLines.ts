/**
 * Pair lines encoded straight into bytes: what writing many pairs costs most of, otherwise, is
 * building a string per line and concatenating them.
 * @module
 */
import { formatPair, type PairFormat } from './write.js';
import type { OutputSink } from './output.js';

const TAB = 9;
const NL = 10;
const COMMA = 44;
const DOT = 46;
const ZERO = 48;

/**
 * Appends pair lines, byte for byte what {@link formatPair} gives, to a buffer that the caller
 * takes in chunks. Ids that are small non-negative integers (row numbers) and similarities of the
 * usual kind are written digit by digit; anything else (string ids, which may need quoting or
 * escaping) goes through `formatPair`.
 */
export class PairLineEncoder {
  private buf = new Uint8Array(1 << 17);
  private at = 0;
  private readonly encoder = new TextEncoder();

  constructor(private readonly format: PairFormat) {}

  /** Bytes waiting to be taken. */
  get size(): number {
    return this.at;
  }

  /** Appends one pair's line. */
  add(a: string | number, b: string | number, similarity: number, estimate?: number): void {
    if (this.buf.length - this.at < 256) this.grow(256);
    if (
      typeof a !== 'number' || typeof b !== 'number' || !smallInt(a) || !smallInt(b) || !plainSimilarity(similarity)
      || (estimate !== undefined && !plainSimilarity(estimate))
    ) {
      this.text(formatPair(this.format, a, b, similarity, estimate));
      return;
    }
    const buf = this.buf;
    let at = this.at;
    if (this.format === 'jsonl') {
      at = ascii(buf, at, '{"a":');
      at = int(buf, at, a);
      at = ascii(buf, at, ',"b":');
      at = int(buf, at, b);
      at = ascii(buf, at, ',"similarity":');
      at = sim(buf, at, similarity);
      if (estimate !== undefined) {
        at = ascii(buf, at, ',"estimate":');
        at = sim(buf, at, estimate);
      }
      buf[at++] = 125; // }
    } else {
      const sep = this.format === 'csv' ? COMMA : TAB;
      at = int(buf, at, a);
      buf[at++] = sep;
      at = int(buf, at, b);
      buf[at++] = sep;
      at = sim(buf, at, similarity);
      if (estimate !== undefined) {
        buf[at++] = sep;
        at = sim(buf, at, estimate);
      }
    }
    buf[at++] = NL;
    this.at = at;
  }

  /** The bytes appended since the last take (a copy), and empties the buffer. */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.at);
    this.at = 0;
    return out;
  }

  private text(s: string): void {
    if (this.buf.length - this.at < s.length * 3) this.grow(s.length * 3);
    this.at += this.encoder.encodeInto(s, this.buf.subarray(this.at)).written;
  }

  private grow(room: number): void {
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.at + room));
    grown.set(this.buf.subarray(0, this.at));
    this.buf = grown;
  }
}

function smallInt(v: number): boolean {
  return (v | 0) === v && v >= 0;
}

/** A similarity that formatSimilarity writes as "0." and 1 to 6 digits, or as "1" or "0". */
function plainSimilarity(s: number): boolean {
  const r = Math.round(s * 1e6);
  return r >= 0 && r <= 1e6;
}

function ascii(buf: Uint8Array, at: number, s: string): number {
  for (let i = 0; i < s.length; i++) buf[at++] = s.charCodeAt(i);
  return at;
}

/** Writes the decimal digits of a non-negative int32. */
function int(buf: Uint8Array, at: number, v: number): number {
  let digits = 1;
  for (let x = v; x >= 10; x = (x / 10) | 0) digits++;
  for (let i = at + digits - 1; i >= at; i--) {
    buf[i] = ZERO + (v % 10);
    v = (v / 10) | 0;
  }
  return at + digits;
}

/** formatSimilarity's digits for 0 ≤ round(s·10⁶) ≤ 10⁶ (see src/io/write/write.ts). */
function sim(buf: Uint8Array, at: number, s: number): number {
  const r = Math.round(s * 1e6);
  if (r === 0 || r === 1e6) {
    buf[at++] = r === 0 ? ZERO : ZERO + 1;
    return at;
  }
  buf[at++] = ZERO;
  buf[at++] = DOT;
  // In int32 arithmetic (0 < r < 10⁶): 552k pairs encoded cold in 75-78 ms instead of 99-130.
  let end = 6;
  let x = r | 0;
  while (x % 10 === 0) {
    x = (x / 10) | 0;
    end--;
  }
  for (let i = at + end - 1; i >= at; i--) {
    buf[i] = ZERO + (x % 10);
    x = (x / 10) | 0;
  }
  return at + end;
}

/** Pairs in typed columns (the streaming pipeline's `PairColumns`): pair i is (a[i], b[i], similarity[i]). */
export interface PairColumnsLike {
  size: number;
  a: Int32Array;
  b: Int32Array;
  similarity: Float64Array;
}

/** How {@link writePairLines} names the documents of a pair: the first through `a`, the second through `b`. */
export interface PairIds {
  a: (doc: number) => string | number;
  b: (doc: number) => string | number;
}

/**
 * Writes `pairs` (objects, or columns) as lines to `sink` (ids through `ids.a` and `ids.b`), in chunks
 * of about 64 KB: as bytes from a {@link PairLineEncoder} when the sink takes bytes, else as text.
 */
export async function writePairLines(
  sink: OutputSink,
  format: PairFormat,
  given: readonly { a: number; b: number; similarity: number; estimate?: number }[] | PairColumnsLike,
  ids: PairIds,
): Promise<void> {
  const { a: idA, b: idB } = ids;
  type Pair = { a: number; b: number; similarity: number; estimate?: number };
  const columns = Array.isArray(given) ? undefined : (given as PairColumnsLike);
  const objects = columns ? undefined : (given as readonly Pair[]);
  if (sink.writeBytes) {
    // Columns are read where they lie, without an object per pair.
    const lines = new PairLineEncoder(format);
    for (let i = 0, m = columns ? columns.size : objects!.length; i < m; i++) {
      if (columns) lines.add(idA(columns.a[i]!), idB(columns.b[i]!), columns.similarity[i]!);
      else lines.add(idA(objects![i]!.a), idB(objects![i]!.b), objects![i]!.similarity, objects![i]!.estimate);
      if (lines.size >= 1 << 16) await sink.writeBytes(lines.take());
    }
    await sink.writeBytes(lines.take());
    return;
  }
  const pairs = objects
    ?? Array.from({ length: columns!.size }, (_, i): Pair => ({ a: columns!.a[i]!, b: columns!.b[i]!, similarity: columns!.similarity[i]! }));
  // One await per pair was most of writing a million pairs: text goes in chunks too.
  let chunk = '';
  for (const p of pairs) {
    chunk += formatPair(format, idA(p.a), idB(p.b), p.similarity, p.estimate);
    if (chunk.length >= 1 << 16) {
      await sink.write(chunk);
      chunk = '';
    }
  }
  await sink.write(chunk);
}
