/**
 * Typed arrays with room to grow, for the large arrays of `neardup spans`, its job's stages and the
 * in-process store's postings.
 * Each is a plain view over an `ArrayBuffer` made with room for the most it is expected to hold:
 * a large buffer is mapped zeroed by `calloc` and takes memory only as its pages are first
 * touched, so room costs address space, not memory. Growing within the room is a wider view (no
 * copy, no old array left for the garbage collector); past it, a copy with room again, the old
 * buffer given back at once.
 *
 * Why not resizable `ArrayBuffer`s, which grow in place and give pages back when shrunk: V8 (Node
 * 20 to 24) reads and writes a typed array on one at about half the speed of a plain one in a hot
 * loop, and at a fifth in a sequential one (bench/typed-arrays.ts); plain views took up to a
 * seventh off the user CPU of `neardup spans` (bench/RESULTS.md, round 42).
 * @module
 */
import { totalmem } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The typed arrays kept here. */
type Typed = Float64Array | Int32Array | Uint32Array | Uint16Array | Uint8Array;
type Ctor<T extends Typed> = { new(b: ArrayBuffer, at: number, n: number): T; new(n: number): T; BYTES_PER_ELEMENT: number };

/**
 * The most room reserved for one array: 4 GiB, or a quarter of the machine's memory when less
 * (the kernel refuses a mapping larger than its memory under its default overcommit rule). A
 * larger array is made at its size.
 */
const MOST_BYTES = Math.min(2 ** 32, Math.floor(totalmem() / 4));

/** A cut that leaves fewer bytes than this of its buffer unused is a narrower view ({@link shrunk}). */
const COPY_BELOW = 1 << 20;

/**
 * glibc's malloc maps a block this large alone, whatever its threshold for doing so has risen to
 * (at most 32 MiB: it rises to the largest block freed), and unmaps it when freed. A smaller one
 * may come from its heap, where a freed block is kept (25 MB of such holes stayed resident on the
 * 50.9 MB corpus of 100-byte windows): every buffer with room gets at least this much room.
 */
const OWN_MAPPING = 2 ** 25 + 2 ** 16;

/** Arrays of fewer bytes than this, made with no room to grow, are plain arrays of their size (from malloc's heap). */
const SMALL = 1 << 16;
/** The elements `a`'s buffer has room for from `a`'s start (0 when `a` does not start its buffer). */
function room(a: Typed): number {
  return a.byteOffset === 0 ? Math.floor(a.buffer.byteLength / a.BYTES_PER_ELEMENT) : 0;
}

/** An array of `n` zeros with room to grow to `most` elements in place. */
export function mapped<T extends Typed>(ctor: Ctor<T>, n: number, most = n): T {
  const e = ctor.BYTES_PER_ELEMENT;
  let cap = Math.max(n, Math.min(most, Math.floor(MOST_BYTES / e)));
  // Room of at least OWN_MAPPING: a buffer malloc maps alone, given back whole when freed.
  if (cap > n || n * e >= SMALL) cap = Math.max(cap, Math.ceil(OWN_MAPPING / e));
  if (cap === n) return new ctor(n);
  try {
    return new ctor(new ArrayBuffer(cap * e), 0, n);
  } catch {
    // No room to be had (address space or the kernel's commit limit): the array at its size.
    return new ctor(n);
  }
}

/**
 * `a`, or `a` with room for at least `n` elements, `most` when its buffer has room (twice `a`
 * unless told): a wider view when its buffer has room, else a copy with room for four times that,
 * `a`'s buffer then given back ({@link release}), as {@link shrunk} gives it back: left to the
 * collector, it stayed beside the copy until a collection that a loop over typed arrays may not
 * make soon. Other views of `a`'s buffer must not be used after a growth that copies; a view that
 * does not start its buffer (a part of a larger one) is copied and its buffer left alone.
 */
export function grown<T extends Typed>(a: T, n: number, most = 2 * a.length): T {
  if (n <= a.length) return a;
  const wider = widened(a, n, most);
  if (wider) return wider;
  const want = Math.max(n, most);
  const x = mapped(a.constructor as Ctor<T>, want, 4 * want);
  x.set(a);
  if (a.byteOffset === 0) release(a);
  return x;
}

/**
 * A wider view of `a`'s buffer, of at least `n` elements (`most` when there is room for them), when
 * the buffer has room for `n` from `a`'s start; else undefined. `a` and every other view of the
 * buffer stay valid (the in-process store's records are read through such views).
 */
export function widened<T extends Typed>(a: T, n: number, most = n): T | undefined {
  const r = room(a);
  return r >= n ? new (a.constructor as Ctor<T>)(a.buffer as ArrayBuffer, 0, Math.min(r, Math.max(n, most))) : undefined;
}

/**
 * `a` cut to its first `n` elements: a copy of them when that leaves a megabyte or more of its
 * buffer unused, the buffer then given back ({@link release}); else a narrower view. The copy and
 * `a` are both held for a moment: give back what can go first. Other views of `a`'s buffer must
 * not be used after a cut.
 */
export function shrunk<T extends Typed>(a: T, n: number): T {
  if (n >= a.length) return a;
  if (a.buffer.byteLength - n * a.BYTES_PER_ELEMENT < COPY_BELOW) return new (a.constructor as Ctor<T>)(a.buffer as ArrayBuffer, a.byteOffset, n);
  const kept = a.slice(0, n) as T;
  release(a);
  return kept;
}

/** `ArrayBuffer.prototype.transfer` (ES2024), with `this` the buffer. */
type Transfer = (this: ArrayBuffer, bytes: number) => ArrayBuffer;

let transfer: Transfer | null | undefined;

/**
 * `ArrayBuffer.prototype.transfer`: the runtime's own (Node 22 and later), or on Node 20, whose V8
 * has it behind a flag, a fresh context's with the flag set (a flag reaches only contexts made
 * after it); null where neither is to be had.
 */
function transferOf(): Transfer | null {
  if (transfer !== undefined) return transfer;
  const own = (ArrayBuffer.prototype as unknown as { transfer?: Transfer }).transfer;
  if (typeof own === 'function') return (transfer = own);
  try {
    setFlagsFromString('--harmony-rab-gsab-transfer');
    const made: unknown = runInNewContext('ArrayBuffer.prototype.transfer');
    transfer = typeof made === 'function' ? (made as Transfer) : null;
  } catch {
    transfer = null;
  }
  return transfer;
}

/**
 * Gives `a`'s buffer back now, not at a later collection of the garbage collector, which in a loop
 * over typed arrays (no garbage made) may come only after the next large array is made: detached
 * by `transfer(0)`, or else moved into a clone that dies young (freed at the next scavenge). Every
 * view of the buffer is empty afterwards. A `SharedArrayBuffer` is left as it is.
 */
export function release(a: Typed): void {
  const b = a.buffer as ArrayBuffer;
  // Shared memory cannot be detached: left to the collector.
  if (b.byteLength === 0 || b instanceof SharedArrayBuffer) return;
  const t = transferOf();
  if (t) t.call(b, 0);
  else structuredClone(b, { transfer: [b] });
}

/**
 * An array over all of buffer `b` (its old contents kept, to be overwritten): memory already
 * touched, taken over for another use, growing within `b` as {@link grown} does.
 */
export function takenOver<T extends Typed>(ctor: Ctor<T>, b: ArrayBuffer): T {
  return new ctor(b, 0, Math.floor(b.byteLength / ctor.BYTES_PER_ELEMENT));
}
