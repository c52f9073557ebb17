/**
 * The arrays of a memory store's table as one value: what `MemoryStore.image()` returns and
 * `MemoryStore.fromImage()` takes (the file store checkpoints its band table this way).
 * @module
 */
import type { IdTableImage } from './idTable.js';

/** The arrays of a memory store's table. */
export interface MemoryTableImage {
  /** Document slots in use (live or free); per-slot arrays may be longer (room to grow). */
  slots: number;
  /** The id index: which id is in which slot. */
  ids: IdTableImage;
  /** Free slots, reused first. */
  free: number[];
  /** Each slot's record offset in the arena, and its length. */
  recOff: Float64Array;
  recLen: Uint32Array;
  /** The records (live and dead bytes), and how many are live. */
  arena: Uint8Array;
  arenaLive: number;
  /** Arena bytes in use, when `arena` is longer (room to grow); else all of it. */
  arenaUsed?: number;
  /** Posting chains: `slot · keysPerDoc + j` → next and previous posting. */
  next: Int32Array;
  prev: Int32Array;
  /** The open-addressing key table (a power-of-two length), and its used entries. */
  tKey: Float64Array<ArrayBuffer>;
  tHead: Int32Array<ArrayBuffer>;
  used: number;
  /** Expiries: [id, ms since the epoch]. */
  expiry: [string, number][];
}

type Typed = Float64Array | Uint32Array | Int32Array | Uint8Array;

/** A new array of `cap` elements (at least `a.length`) starting with `a`. */
export function grown<T extends Typed>(Ctor: new(n: number) => T, a: Typed, cap: number): T {
  // Already long enough and of the type: kept, not copied (a table read from a checkpoint).
  if (a.length >= cap && a.constructor === Ctor && a.byteOffset === 0) return a as T;
  const out = new Ctor(Math.max(cap, a.length));
  out.set(a as never);
  return out;
}
