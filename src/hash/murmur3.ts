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
 * Two 32-bit hashes of a text in one pass (64 bits in all), written at `out[2i]`, `out[2i + 1]`:
 * MurmurHash3 and a multiply-xor lane over the same 32-bit words, of its UTF-16 code units, or
 * (`bytes`) of its UTF-8 bytes [start, end) in another domain (a text hashed both ways gets two
 * different pairs, which costs a missed fold, never a wrong one). One pass: two separate hashes
 * cost half as much again as signing the text (bench/RESULTS.md).
 * Why these parameters: called once per document by every signer (in memory, streamed, sharded); an options object would be an allocation per document on the signing path.
 */
export function textHash2(out: Uint32Array, i: number, text: string | null, bytes?: Uint8Array, start = 0, end = 0): void {
  let h = 0x6d2b79f5;
  let g = 0x1b873593;
  let len: number;
  if (text !== null) {
    len = text.length;
    const pairsEnd = len & ~1;
    for (let j = 0; j < pairsEnd; j += 2) {
      let k = text.charCodeAt(j) | (text.charCodeAt(j + 1) << 16);
      g = Math.imul(g ^ k, 0x27d4eb2d);
      g ^= g >>> 15;
      k = Math.imul(k, C1);
      k = (k << 15) | (k >>> 17);
      h ^= Math.imul(k, C2);
      h = (h << 13) | (h >>> 19);
      h = (Math.imul(h, 5) + 0xe6546b64) | 0;
    }
    if (len & 1) {
      const k = text.charCodeAt(len - 1);
      g = Math.imul(g ^ k, 0x27d4eb2d);
      h ^= Math.imul((Math.imul(k, C1) << 15) | (Math.imul(k, C1) >>> 17), C2);
    }
  } else {
    const b = bytes!;
    len = end - start + 0x40000000;
    const wordsEnd = start + ((end - start) & ~3);
    let j = start;
    for (; j < wordsEnd; j += 4) {
      let k = b[j]! | (b[j + 1]! << 8) | (b[j + 2]! << 16) | (b[j + 3]! << 24);
      g = Math.imul(g ^ k, 0x27d4eb2d);
      g ^= g >>> 15;
      k = Math.imul(k, C1);
      k = (k << 15) | (k >>> 17);
      h ^= Math.imul(k, C2);
      h = (h << 13) | (h >>> 19);
      h = (Math.imul(h, 5) + 0xe6546b64) | 0;
    }
    let k = 0;
    for (let t = end - 1; t >= j; t--) k = (k << 8) | b[t]!;
    if (j < end) {
      g = Math.imul(g ^ k, 0x27d4eb2d);
      h ^= Math.imul((Math.imul(k, C1) << 15) | (Math.imul(k, C1) >>> 17), C2);
    }
  }
  out[2 * i] = fmix32(h ^ len);
  out[2 * i + 1] = fmix32(g ^ Math.imul(len, 0x85ebca6b));
}
