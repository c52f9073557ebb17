/**
 * Per-character symbol hashes shared by the character and word shingle hashers.
 * A shingle fingerprint is a polynomial over these symbol values, finished by fmix32:
 * cheap to roll one character at a time, and well mixed at the end.
 * @module
 */
import { fmix32, subSeed } from '../hash/mix.js';

/** Odd multiplier of the rolling polynomial over symbols (characters, or word hashes). */
export const ROLL_BASE = 0x9e3779b1 | 0;

const tables = new Map<number, Uint32Array>();

/** The symbol hash of one code point under `seed`: fmix32(codePoint XOR subSeed(seed, 1)). */
export function symbolHash(codePoint: number, seed: number): number {
  return fmix32((codePoint ^ subSeed(seed, 1)) >>> 0);
}

/**
 * The symbol hashes of every BMP code unit under `seed`, built once per seed (256 KiB).
 * Lookup in this table replaces a mixer call per character on the hot path.
 */
export function symbolTable(seed: number): Uint32Array {
  const key = seed >>> 0;
  let t = tables.get(key);
  if (t === undefined) {
    t = new Uint32Array(65536);
    const s = subSeed(seed, 1);
    for (let c = 0; c < 65536; c++) t[c] = fmix32((c ^ s) >>> 0);
    if (tables.size > 16) tables.clear();
    tables.set(key, t);
  }
  return t;
}

/** ROLL_BASE^k mod 2^32, for removing the symbol that leaves a rolling window. */
export function rollPower(k: number): number {
  let p = 1;
  for (let i = 0; i < k; i++) p = Math.imul(p, ROLL_BASE);
  return p;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** True when the string has any surrogate code unit (paired or lone). */
export function hasSurrogates(text: string): boolean {
  return SURROGATE.test(text);
}

/**
 * Code points of a string as a Uint32Array. A lone surrogate is kept as one code point of its own
 * value, so no input ever throws and no pair is ever split.
 */
export function codePoints(text: string): Uint32Array {
  const out = new Uint32Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out[n++] = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        i++;
        continue;
      }
    }
    out[n++] = c;
  }
  return out.subarray(0, n);
}
