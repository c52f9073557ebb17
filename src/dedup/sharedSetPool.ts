/**
 * Shared memory for the sets that streaming verification holds, reused instead of allocated per set.
 *
 * Why: allocating a SharedArrayBuffer per held set (so workers can score against it without a
 * copy) took 1.30 s, 15 % of the main thread's time, on a duplicate-heavy 300k-document corpus
 * (0.40 s with the pool; bench/RESULTS.md round 4). Released blocks go back to a free list by size class and are handed out
 * again; a block is released only once every pair that reads it has been scored, so no worker can
 * still be reading it.
 * @module
 */

/** Size classes per doubling: a block wastes at most 1/16 of its bytes. */
const STEPS = 16;
/** The smallest block, in bytes. */
const MIN = 256;

/** The bytes of the block that holds `bytes` (a multiple of 4). */
export function blockBytes(bytes: number): number {
  if (bytes <= MIN) return MIN;
  const p = 2 ** Math.floor(Math.log2(bytes - 1));
  const q = p / STEPS;
  return Math.ceil(bytes / q) * q;
}

/** Blocks of shared memory by size class; not thread-safe (the main thread owns it). */
export class SharedSetPool {
  private readonly free = new Map<number, SharedArrayBuffer[]>();
  private freeBytes = 0;

  /** @param keep Bytes of released blocks kept for reuse at most (beyond that they are dropped). */
  constructor(private readonly keep = 64 * 1024 * 1024) {}

  /** A copy of `set` in a pooled shared block (its `buffer.byteLength` is the block's size). */
  copy(set: Uint32Array): Uint32Array {
    const bytes = blockBytes(set.byteLength);
    const list = this.free.get(bytes);
    let sab = list?.pop();
    if (sab) this.freeBytes -= bytes;
    else sab = new SharedArrayBuffer(bytes);
    const own = new Uint32Array(sab, 0, set.length);
    own.set(set);
    return own;
  }

  /** Gives the block of a set made by {@link SharedSetPool.copy} back; the set must not be used after. */
  release(set: Uint32Array): void {
    const sab = set.buffer as SharedArrayBuffer;
    const bytes = sab.byteLength;
    if (this.freeBytes + bytes > this.keep) return;
    let list = this.free.get(bytes);
    if (!list) this.free.set(bytes, (list = []));
    list.push(sab);
    this.freeBytes += bytes;
  }
}
