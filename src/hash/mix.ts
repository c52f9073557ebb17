/**
 * 32-bit integer mixers. Every function here works in 32-bit `Math.imul` arithmetic, so nothing
 * ever passes through a double above 2^32 (the classic `a*x+b mod p` bug in JS MinHash ports).
 * @module
 */

/** MurmurHash3's 32-bit finalizer: a bijection on uint32 with full avalanche. Returns uint32. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Rotate a 32-bit value left by `r` bits. */
export function rotl32(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

/**
 * A small deterministic PRNG (splitmix32) for deriving hash parameters from a seed.
 * Returns a function producing uint32 values.
 */
export function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    return (z ^ (z >>> 15)) >>> 0;
  };
}

/** Derive an independent 32-bit sub-seed from `seed` and a purpose tag (domain separation). */
export function subSeed(seed: number, tag: number): number {
  return fmix32((Math.imul(seed | 0, 0x9e3779b1) ^ fmix32(tag + 0x632be5ab)) >>> 0);
}
