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
 * Writes the key of band b of `signature` into `hi` and `lo` at index `at` + b·`stride` (a
 * document's place in a band-key table: its row with `stride` 1, the default, or its column of a
 * band-major table with `stride` = documents).
 * Each half is a murmur3_32 of the band's r uint32 slots, with seeds 2·band+1 and 2·band+2.
 * Why these parameters: called once per document in the band-key loops; an options object would be an allocation per document.
 */
export function bandKeys(signature: Uint32Array, bands: number, rows: number, hi: Uint32Array, lo: Uint32Array, at = 0, stride = 1): void {
  for (let b = 0; b < bands; b++) rangeHash(signature, b * rows, rows, 2 * b + 1, 2 * b + 2, hi, lo, at + b * stride);
}

/**
 * The two murmur3_32 halves of the `rows` slots of `sig` from `start`, with seeds `s1` and `s2`
 * (one mixed block per slot, shared by both), written to hi[at] and lo[at].
 * Why these parameters: called once per band of every document (16–40 times a document); an options object would be an allocation per band key.
 */
export function rangeHash(sig: Uint32Array, start: number, rows: number, s1: number, s2: number, hi: Uint32Array, lo: Uint32Array, at: number): void {
  let h1 = s1 | 0;
  let h2 = s2 | 0;
  for (let i = start, end = start + rows; i < end; i++) {
    let k = Math.imul(sig[i]! | 0, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h1 ^= k;
    h1 = (h1 << 13) | (h1 >>> 19);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
    h2 ^= k;
    h2 = (h2 << 17) | (h2 >>> 15);
    h2 = (Math.imul(h2, 5) + 0x38495ab5) | 0;
  }
  hi[at] = fmix32((h1 ^ (rows * 4)) >>> 0);
  lo[at] = fmix32((h2 ^ (rows * 4) ^ 0x5bd1e995) >>> 0);
}

/** One band key as a single JS number of 53 bits (hi · 2^21 + the top 21 bits of lo). */
export function bandKey53(hi: number, lo: number): number {
  return hi * 2097152 + (lo >>> 11);
}
