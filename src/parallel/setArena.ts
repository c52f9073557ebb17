/**
 * Shared memory for the fingerprint sets of streaming verification: one shared WebAssembly memory
 * cut into blocks, handed out by integer handles. A worker writes a set once, with the distinct
 * kernel, straight into its block; the main thread and every worker then read it in place (the
 * workers' set kernels run on this same memory, so a pair's held set is probed where it lies).
 * Messages carry (offset, length) integers, not arrays.
 *
 * Why: with a SharedArrayBuffer per held set, the main thread copied every held set out of the
 * worker's reply into its own shared block (0.89 s) and serialized one shared view per pair it
 * sent to be scored (0.89 s), more than half of its 3.1 s busy in verification on a
 * duplicate-heavy 300k-document corpus; and the workers copied each held set into their kernels'
 * memory once per pair it was scored in (bench/RESULTS.md, round 5).
 *
 * Blocks come in size classes (16 per doubling: at most 1/16 of a block is slack) and go back to a
 * free list of their class when released; the memory only grows, up to 4 GiB. Not thread-safe: the
 * main thread owns the allocation; workers only read and write inside blocks they were given.
 * @module
 */

/** Size classes per doubling: a block wastes at most 1/16 of its bytes. */
const STEPS = 16;
/** The smallest block, in bytes. */
const MIN = 256;
/** Bytes the memory grows by at least. */
const GROW = 64 * 1024 * 1024;
/** The memory's limit: 4 GiB, all a 32-bit WebAssembly memory can address. */
const MAX_PAGES = 65536;

/** The bytes of the block that holds `bytes` (a multiple of 4). */
export function blockBytes(bytes: number): number {
  if (bytes <= MIN) return MIN;
  const p = 2 ** Math.floor(Math.log2(bytes - 1));
  const q = p / STEPS;
  return Math.ceil(bytes / q) * q;
}

/** Thrown by {@link SetArena.alloc} when the memory cannot grow to hold a block. */
export class ArenaFullError extends RangeError {
  /** @param limit The arena's limit in bytes. */
  constructor(readonly limit: number) {
    super(
      `verification needs more than ${
        limit / 2 ** 30
      } GiB of shared memory for fingerprint sets (the sets held, and those of a batch of documents in flight; the memoryBudget and batchSize options lower them)`,
    );
  }
}

/** Blocks of one shared memory by handle; see the module comment. */
export class SetArena {
  /** The memory every block lies in (shared with the workers, which run kernels on it). */
  readonly memory: WebAssembly.Memory;
  /** Pages the memory may grow to. */
  private readonly maxPages: number;
  /** Tells this arena from earlier ones (a worker keeps its kernels for the arena it last saw). */
  readonly id = Math.random();
  private u32: Uint32Array;
  /** Next free byte. */
  private top = 64;
  /** Per handle: offset in 32-bit values, block bytes (0 while the block is free). */
  private offsetOf = new Int32Array(1024);
  private bytesOf = new Float64Array(1024);
  private handles = 0;
  private readonly free = new Map<number, number[]>();

  /** @param maxBytes The most the memory may grow to (default and limit: 4 GiB). */
  constructor(maxBytes = MAX_PAGES * 65536) {
    this.maxPages = Math.max(1, Math.min(MAX_PAGES, Math.floor(maxBytes / 65536)));
    this.memory = new WebAssembly.Memory({ initial: Math.min(GROW / 65536, this.maxPages), maximum: this.maxPages, shared: true });
    this.u32 = new Uint32Array(this.memory.buffer);
  }

  /** The most bytes the memory may grow to. */
  get limit(): number {
    return this.maxPages * 65536;
  }

  /** A block for at least `values` 32-bit values; returns its handle. Throws {@link ArenaFullError} when the memory is at its limit. */
  alloc(values: number): number {
    const bytes = blockBytes(Math.max(1, values) * 4);
    let h = this.free.get(bytes)?.pop();
    if (h !== undefined) {
      this.bytesOf[h] = bytes;
      return h;
    }
    if (this.top + bytes > this.u32.byteLength) {
      const want = this.top + bytes - this.u32.byteLength;
      const pages = Math.ceil(Math.max(want, GROW) / 65536);
      const room = this.maxPages - this.u32.byteLength / 65536;
      if (Math.ceil(want / 65536) > room) throw new ArenaFullError(this.limit);
      this.memory.grow(Math.min(pages, room));
      this.u32 = new Uint32Array(this.memory.buffer);
    }
    h = this.handles++;
    if (h >= this.offsetOf.length) this.growHandles();
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
    if (!list) this.free.set(bytes, list = []);
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

  /** Offset of block `h` in the memory, in 32-bit values (its byte address is 4 times that). */
  offset(h: number): number {
    return this.offsetOf[h]!;
  }

  /** The first `length` values of block `h` (a view: no copy). */
  view(h: number, length: number): Uint32Array {
    const at = this.offsetOf[h]!;
    return this.u32.subarray(at, at + length);
  }

  /** Writes block `h`'s pair (offset in values, `second`) at `out[2i..2i+2)`. */
  ref(h: number, second: number, out: Int32Array, i: number): void {
    out[2 * i] = this.offsetOf[h]!;
    out[2 * i + 1] = second;
  }

  private growHandles(): void {
    const n = this.offsetOf.length * 2;
    const o = new Int32Array(n);
    o.set(this.offsetOf);
    const b = new Float64Array(n);
    b.set(this.bytesOf);
    this.offsetOf = o;
    this.bytesOf = b;
  }
}
