/**
 * Shared memory for the fingerprint sets of streaming verification: large SharedArrayBuffer chunks
 * cut into blocks, handed out by integer handles, so a set is written once (by the worker that
 * computes it, straight into its block) and is then read in place by the main thread and by any
 * worker that scores a pair against it. Messages carry (chunk, offset, length) integers, not arrays.
 *
 * Why: with a SharedArrayBuffer per held set, the main thread copied every held set out of the
 * worker's reply into its own shared block (0.89 s) and serialized one shared view per pair it
 * sent to be scored (0.89 s), more than half of its 3.1 s busy in verification on a
 * duplicate-heavy 300k-document corpus (bench/RESULTS.md, round 5).
 *
 * Blocks come in size classes (16 per doubling: at most 1/16 of a block is slack) and go back to a
 * free list of their class when released; chunks are never freed while the arena lives. Not
 * thread-safe: the main thread owns the allocation; workers only read and write inside blocks
 * they were given.
 * @module
 */

/** Size classes per doubling: a block wastes at most 1/16 of its bytes. */
const STEPS = 16;
/** The smallest block, in bytes. */
const MIN = 256;
/** Bytes of a chunk (a larger block gets a chunk of its own size). */
const CHUNK = 64 * 1024 * 1024;

/** The bytes of the block that holds `bytes` (a multiple of 4). */
export function blockBytes(bytes: number): number {
  if (bytes <= MIN) return MIN;
  const p = 2 ** Math.floor(Math.log2(bytes - 1));
  const q = p / STEPS;
  return Math.ceil(bytes / q) * q;
}

/** Where sets go or are: one (chunk, offset in u32 values, capacity or length) triple per set. */
export interface ArenaRefs {
  /** The arena's chunks, in order (a worker indexes them by the triples' first field). */
  chunks: SharedArrayBuffer[];
  /** Triples: chunk index, offset in 32-bit values, capacity (targets) or length (sets to read). */
  at: Int32Array;
}

/** Blocks of shared memory by handle; see the module comment. */
export class SetArena {
  /** The chunks, and a u32 view of each. */
  readonly chunks: SharedArrayBuffer[] = [];
  private readonly views: Uint32Array[] = [];
  /** Next free byte of the last chunk. */
  private top = 0;
  /** Per handle: chunk, offset in 32-bit values, block bytes (0 while the block is free). */
  private chunkOf = new Int32Array(1024);
  private offsetOf = new Int32Array(1024);
  private bytesOf = new Float64Array(1024);
  private handles = 0;
  private readonly free = new Map<number, number[]>();
  /** Bytes of all chunks. */
  reserved = 0;

  /** A block for at least `values` 32-bit values; returns its handle. */
  alloc(values: number): number {
    const bytes = blockBytes(Math.max(1, values) * 4);
    let h = this.free.get(bytes)?.pop();
    if (h !== undefined) {
      this.bytesOf[h] = bytes;
      return h;
    }
    let c = this.chunks.length - 1;
    if (c < 0 || this.top + bytes > this.chunks[c]!.byteLength) {
      const size = Math.max(CHUNK, bytes);
      const sab = new SharedArrayBuffer(size);
      this.chunks.push(sab);
      this.views.push(new Uint32Array(sab));
      this.reserved += size;
      c++;
      this.top = 0;
    }
    h = this.handles++;
    if (h >= this.chunkOf.length) this.growHandles();
    this.chunkOf[h] = c;
    this.offsetOf[h] = this.top / 4;
    this.bytesOf[h] = bytes;
    this.top += bytes;
    return h;
  }

  /** Gives a block back; its handle and contents must not be used after. */
  release(h: number): void {
    const bytes = this.bytesOf[h]!;
    if (bytes === 0) throw new Error(`set arena: block ${h} released twice`);
    this.bytesOf[h] = 0;
    let list = this.free.get(bytes);
    if (!list) this.free.set(bytes, (list = []));
    // A handle keeps its block for good: it goes to its class's free list and comes back from alloc.
    list.push(h);
  }

  /** Bytes of block `h`. */
  bytes(h: number): number {
    return this.bytesOf[h]!;
  }

  /** Capacity of block `h` in 32-bit values. */
  capacity(h: number): number {
    return this.bytesOf[h]! >>> 2;
  }

  /** The first `length` values of block `h` (a view: no copy). */
  view(h: number, length: number): Uint32Array {
    const at = this.offsetOf[h]!;
    return this.views[this.chunkOf[h]!]!.subarray(at, at + length);
  }

  /** Writes block `h`'s triple (chunk, offset in values, `third`) at `out[3i..3i+3)`. */
  ref(h: number, third: number, out: Int32Array, i: number): void {
    out[3 * i] = this.chunkOf[h]!;
    out[3 * i + 1] = this.offsetOf[h]!;
    out[3 * i + 2] = third;
  }

  private growHandles(): void {
    const n = this.chunkOf.length * 2;
    const c = new Int32Array(n);
    c.set(this.chunkOf);
    const o = new Int32Array(n);
    o.set(this.offsetOf);
    const b = new Float64Array(n);
    b.set(this.bytesOf);
    this.chunkOf = c;
    this.offsetOf = o;
    this.bytesOf = b;
  }
}

/** u32 views of the chunks of `refs` (a worker's side of {@link ArenaRefs}). */
export function arenaViews(chunks: SharedArrayBuffer[]): Uint32Array[] {
  return chunks.map((c) => new Uint32Array(c));
}
