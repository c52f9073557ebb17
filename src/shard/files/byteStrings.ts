/**
 * A column of strings held as their UTF-8 bytes, in chunks, with each string's end offset: what a
 * decide task holds of its clustered documents' ids and writes as its cluster lines and member rows.
 * A JS string costs 16–24 bytes and an array slot besides its characters, and a cluster line
 * built by JSON.stringify costs its members' arrays and boxed similarities on the heap: at 746k
 * clustered documents that was ~90 MB of the task's peak (bench/RESULTS.md, "Decide's documents
 * as bytes"). The chunks are written to the column file as they are (src/shard/files/columns.ts).
 * @module
 */
import type { StrParts } from './columns.js';

/** Bytes of a new chunk (a longer string gets a chunk of its own length). */
const CHUNK = 1 << 20;

/** Strings appended one after another (see the module comment). */
export class ByteStrings implements StrParts {
  /** The full chunks, then the current one cut to its used bytes when {@link strParts} is read. */
  private chunks: Buffer[] = [];
  /** Where each chunk of {@link chunks} starts in the column's bytes. */
  private chunkStart: number[] = [];
  private cur: Buffer = Buffer.alloc(0);
  /** Bytes of the column before the current chunk. */
  private before = 0;
  private used = 0;
  private n = 0;
  /** String i is bytes offsets[i]..offsets[i + 1] of the column. */
  readonly offsets: Float64Array;

  /** A column of `count` strings. */
  constructor(readonly count: number) {
    this.offsets = new Float64Array(count + 1);
  }

  /** The chunks, in order: the column's bytes. */
  get strParts(): readonly Buffer[] {
    return this.used > 0 ? [...this.chunks, this.cur.subarray(0, this.used)] : this.chunks;
  }

  /** Appends string `s` whole (it does not straddle chunks, so {@link bytesOf} can give it). */
  push(s: string): void {
    this.room(Buffer.byteLength(s, 'utf8'));
    this.used += this.cur.write(s, this.used, 'utf8');
    this.end();
  }

  /** Appends string i of `from` whole, as {@link push} (its bytes are copied, not decoded). */
  pushFrom(from: ByteStrings, i: number): void {
    this.copy(from, i);
    this.end();
  }

  /** Adds `s` (ASCII, as JSON punctuation and numbers are) to the string being built; {@link end} ends it. */
  write(s: string): void {
    for (let i = 0; i < s.length; i++) {
      if (this.used === this.cur.length) this.room(1);
      this.cur[this.used++] = s.charCodeAt(i);
    }
  }

  /** Adds string i of `from` (its bytes) to the string being built. */
  copy(from: ByteStrings, i: number): void {
    const [buf, a, b] = from.bytesOf(i);
    if (this.used + (b - a) > this.cur.length) this.room(b - a);
    buf.copy(this.cur, this.used, a, b);
    this.used += b - a;
  }

  /** Adds `s` (any text) to the string being built. */
  writeText(s: string): void {
    this.room(Buffer.byteLength(s, 'utf8'));
    this.used += this.cur.write(s, this.used, 'utf8');
  }

  /** Ends the string being built. */
  end(): void {
    this.offsets[++this.n] = this.before + this.used;
  }

  /** String i (pushed whole) decoded. */
  get(i: number): string {
    const [buf, a, b] = this.bytesOf(i);
    return buf.toString('utf8', a, b);
  }

  /** Where string i (pushed whole) lies: its chunk and the range in it. */
  bytesOf(i: number): [Buffer, number, number] {
    const a = this.offsets[i]!;
    const b = this.offsets[i + 1]!;
    if (a >= this.before) return [this.cur, a - this.before, b - this.before];
    // The last chunk starting at or before a.
    let lo = 0;
    let hi = this.chunkStart.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.chunkStart[mid]! <= a) lo = mid;
      else hi = mid - 1;
    }
    return [this.chunks[lo]!, a - this.chunkStart[lo]!, b - this.chunkStart[lo]!];
  }

  /** Makes room for `bytes` more in the current chunk: a new chunk when they do not fit (the current one kept to its used bytes). */
  private room(bytes: number): void {
    if (this.used + bytes <= this.cur.length) return;
    if (this.used > 0) {
      this.chunkStart.push(this.before);
      this.chunks.push(this.cur.subarray(0, this.used));
    }
    this.before += this.used;
    this.used = 0;
    this.cur = Buffer.allocUnsafe(Math.max(CHUNK, bytes));
  }
}
