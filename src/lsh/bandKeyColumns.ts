/**
 * Band keys kept band by band while documents arrive in batches: what the streaming pipeline holds
 * between signing and LSH.
 * @module
 */
import type { BandKeyTable } from './candidates.js';

/**
 * A growable band-major store of band keys: document d's key in band b at [b·capacity + d] of
 * `hi` and `lo`, so that bucketing reads each band sequentially (reading document-major keys band
 * by band took one cache line per key). Batches arrive band-major too ([b·count + i], as workers
 * write them): appending one is a copy per band. With `shared`, the arrays live
 * in SharedArrayBuffers that worker threads read in place.
 */
export class BandKeyColumns {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private present: Uint8Array;
  private capacity: number;
  /** Documents appended. */
  count = 0;

  constructor(
    private readonly bands: number,
    private readonly shared = false,
    capacity = 1 << 12,
  ) {
    this.capacity = Math.max(1, capacity);
    this.hi = this.u32(this.capacity * bands);
    this.lo = this.u32(this.capacity * bands);
    this.present = this.u8(this.capacity);
  }

  private u32(length: number): Uint32Array {
    return this.shared ? new Uint32Array(new SharedArrayBuffer(length * 4)) : new Uint32Array(length);
  }

  private u8(length: number): Uint8Array {
    return this.shared ? new Uint8Array(new SharedArrayBuffer(length)) : new Uint8Array(length);
  }

  /**
   * Appends `count` documents: `present[i]`, and band b's keys at [b·count + i] of `hi` and `lo`
   * (the workers write them so: transposing a million documents' keys here took 0.1–0.2 s of this
   * thread while the workers signed).
   */
  append(present: Uint8Array, hi: Uint32Array, lo: Uint32Array, count: number): void {
    const nb = this.bands;
    if (this.count + count > this.capacity) this.grow(Math.max(this.count + count, this.capacity * 2));
    const cap = this.capacity;
    this.present.set(present.subarray(0, count), this.count);
    for (let b = 0; b < nb; b++) {
      this.hi.set(hi.subarray(b * count, (b + 1) * count), b * cap + this.count);
      this.lo.set(lo.subarray(b * count, (b + 1) * count), b * cap + this.count);
    }
    this.count += count;
  }

  /**
   * Makes room for `documents` in all, at once: a caller that can estimate the corpus's size saves
   * the copies of growing by doubling (on 1M documents, 125 ms of this thread while the workers
   * sign). Room not yet written costs address space only.
   */
  reserve(documents: number): void {
    if (documents > this.capacity) this.grow(documents);
  }

  private grow(capacity: number): void {
    const nb = this.bands;
    const hi = this.u32(capacity * nb);
    const lo = this.u32(capacity * nb);
    for (let b = 0; b < nb; b++) {
      hi.set(this.hi.subarray(b * this.capacity, b * this.capacity + this.count), b * capacity);
      lo.set(this.lo.subarray(b * this.capacity, b * this.capacity + this.count), b * capacity);
    }
    const present = this.u8(capacity);
    present.set(this.present.subarray(0, this.count));
    this.hi = hi;
    this.lo = lo;
    this.present = present;
    this.capacity = capacity;
  }

  /** The keys appended so far, as a table (views, not copies). */
  table(): BandKeyTable {
    return {
      hi: this.hi,
      lo: this.lo,
      present: this.present.subarray(0, this.count),
      n: this.count,
      bands: this.bands,
      docStride: 1,
      bandStride: this.capacity,
    };
  }

  /** Drops the keys (the table's arrays stay valid for whoever holds them). */
  release(): void {
    this.hi = this.lo = new Uint32Array(0);
    this.capacity = 0;
  }
}
