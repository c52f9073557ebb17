/**
 * MurmurHash3 x86_32 over the UTF-16 code units of a string range, two code units per 32-bit block.
 * Computed straight from the string: no substring, no encoder, no allocation.
 * @module
 */
import { fmix32 } from './mix.js';

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/**
 * MurmurHash3 (x86, 32-bit) of `s.slice(start, end)` read as little-endian UTF-16 bytes.
 * Equal to the reference murmur3_32 of the UTF-16LE encoding of that substring.
 * @param s the string
 * @param seed 32-bit seed (default 0)
 * @param start first code unit (default 0)
 * @param end one past the last code unit (default `s.length`)
 * @returns uint32 hash
 */
export function murmur3Utf16(s: string, seed = 0, start = 0, end = s.length): number {
  let h = seed | 0;
  let i = start;
  const pairsEnd = start + ((end - start) & ~1);
  for (; i < pairsEnd; i += 2) {
    let k = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16);
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  if (i < end) {
    let k = s.charCodeAt(i);
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
  }
  h ^= (end - start) * 2;
  return fmix32(h);
}

/**
 * MurmurHash3 (x86, 32-bit) of a sequence of uint32 words (little-endian bytes).
 * Used for band keys and set digests.
 */
export function murmur3Words(words: ArrayLike<number>, seed = 0, start = 0, end = words.length): number {
  let h = seed | 0;
  for (let i = start; i < end; i++) {
    let k = words[i]! | 0;
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= (end - start) * 4;
  return fmix32(h);
}

/**
 * MurmurHash3 (x86, 32-bit) of bytes [start, end): the standard algorithm, tail bytes included.
 * Used to tell identical texts apart from their bytes (the streamed route's copy groups).
 */
export function murmur3Bytes(b: Uint8Array, seed = 0, start = 0, end = b.length): number {
  let h = seed | 0;
  let i = start;
  const blocksEnd = start + ((end - start) & ~3);
  for (; i < blocksEnd; i += 4) {
    let k = b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  const tail = end - i;
  if (tail === 3) k ^= b[i + 2]! << 16;
  if (tail >= 2) k ^= b[i + 1]! << 8;
  if (tail >= 1) {
    k ^= b[i]!;
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
  }
  h ^= end - start;
  return fmix32(h);
}

/**
 * Two independent 32-bit hashes of a text (64 bits in all), written at `out[2i]`, `out[2i + 1]`:
 * of its UTF-16 code units, or (`bytes`) of its UTF-8 bytes [start, end), in another domain (a
 * text hashed both ways gets two different pairs, which costs a missed fold, never a wrong one).
 */
export function textHash2(out: Uint32Array, i: number, text: string | null, bytes?: Uint8Array, start = 0, end = 0): void {
  if (text !== null) {
    out[2 * i] = murmur3Utf16(text, 0x6d2b79f5);
    out[2 * i + 1] = murmur3Utf16(text, 0x1b873593);
  } else {
    out[2 * i] = murmur3Bytes(bytes!, 0x2f1c8a3b, start, end);
    out[2 * i + 1] = murmur3Bytes(bytes!, 0x5bd1e995, start, end);
  }
}
