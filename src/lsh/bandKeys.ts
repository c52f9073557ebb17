/**
 * Band keys: the r slot values of one band hashed to a 64-bit key (two uint32 halves), so unrelated
 * bands practically never collide. The band index is part of the hash seed, so equal slot values in
 * different bands give different keys.
 * @module
 */
import { fmix32 } from '../hash/mix.js';

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/**
 * Writes the key of every band of `signature` into `hi` and `lo` (length ≥ bands).
 * Each half is a murmur3_32 of the band's r uint32 slots, with seeds 2·band+1 and 2·band+2.
 */
export function bandKeys(signature: Uint32Array, bands: number, rows: number, hi: Uint32Array, lo: Uint32Array): void {
  for (let b = 0; b < bands; b++) {
    let h1 = (2 * b + 1) | 0;
    let h2 = (2 * b + 2) | 0;
    const start = b * rows;
    for (let i = start; i < start + rows; i++) {
      let k = Math.imul(signature[i]! | 0, C1);
      k = (k << 15) | (k >>> 17);
      k = Math.imul(k, C2);
      h1 ^= k;
      h1 = (h1 << 13) | (h1 >>> 19);
      h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
      h2 ^= k;
      h2 = (h2 << 17) | (h2 >>> 15);
      h2 = (Math.imul(h2, 5) + 0x38495ab5) | 0;
    }
    hi[b] = fmix32((h1 ^ (rows * 4)) >>> 0);
    lo[b] = fmix32((h2 ^ (rows * 4) ^ 0x5bd1e995) >>> 0);
  }
}

/** One band key as a single JS number of 53 bits (hi · 2^21 + the top 21 bits of lo). */
export function bandKey53(hi: number, lo: number): number {
  return hi * 2097152 + (lo >>> 11);
}
