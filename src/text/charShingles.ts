/**
 * Character k-gram shingles over code points, hashed to 32-bit fingerprints without building
 * any substring: a rolling polynomial over per-character symbol hashes, finished with fmix32.
 * @module
 */
import { fmix32 } from '../hash/mix.js';
import { ROLL_BASE, codePoints, hasSurrogates, rollPower, symbolHash, symbolTable } from './symbols.js';

/**
 * Writes the fingerprints of every character k-gram of `text` into `out`, in text order
 * (repeats included), and returns how many were written.
 *
 * A text shorter than `k` code points gives one fingerprint, of the whole text; an empty text none.
 * `out` must hold at least `max(1, text.length - k + 1)` values.
 */
export function charShinglesInto(text: string, k: number, seed: number, out: Uint32Array): number {
  const n = text.length;
  if (n === 0) return 0;
  if (hasSurrogates(text)) return charShinglesCodePoints(codePoints(text), k, seed, out);
  const table = symbolTable(seed);
  const bk = rollPower(k);
  if (n <= k) {
    let h = 0;
    for (let i = 0; i < n; i++) h = (Math.imul(h, ROLL_BASE) + table[text.charCodeAt(i)]!) | 0;
    out[0] = fmix32(h);
    return 1;
  }
  let h = 0;
  for (let i = 0; i < k - 1; i++) h = (Math.imul(h, ROLL_BASE) + table[text.charCodeAt(i)]!) | 0;
  let m = 0;
  for (let i = k - 1; i < n; i++) {
    h = (Math.imul(h, ROLL_BASE) + table[text.charCodeAt(i)]!) | 0;
    if (i >= k) h = (h - Math.imul(table[text.charCodeAt(i - k)]!, bk)) | 0;
    // fmix32 inlined: this loop is the hottest in the library.
    let f = h ^ (h >>> 16);
    f = Math.imul(f, 0x85ebca6b);
    f ^= f >>> 13;
    f = Math.imul(f, 0xc2b2ae35);
    out[m++] = f ^ (f >>> 16);
  }
  return m;
}

function charShinglesCodePoints(cps: Uint32Array, k: number, seed: number, out: Uint32Array): number {
  const n = cps.length;
  const table = symbolTable(seed);
  const sym = (c: number): number => (c < 65536 ? table[c]! : symbolHash(c, seed));
  const bk = rollPower(k);
  let h = 0;
  if (n <= k) {
    for (let i = 0; i < n; i++) h = (Math.imul(h, ROLL_BASE) + sym(cps[i]!)) | 0;
    out[0] = fmix32(h);
    return 1;
  }
  let m = 0;
  for (let i = 0; i < n; i++) {
    h = (Math.imul(h, ROLL_BASE) + sym(cps[i]!)) | 0;
    if (i >= k) h = (h - Math.imul(sym(cps[i - k]!), bk)) | 0;
    if (i >= k - 1) out[m++] = fmix32(h);
  }
  return m;
}

/**
 * Fingerprints of the character k-grams of `text` (code points; an astral character counts as one),
 * in text order with repeats. Normalize the text first; see `fingerprintSet` for the set form.
 * @param text normalized text
 * @param k shingle length in code points (≥ 1)
 * @param seed hash seed (default 0)
 */
export function charShingles(text: string, k: number, seed = 0): Uint32Array {
  const out = new Uint32Array(Math.max(1, text.length - k + 1));
  return out.subarray(0, charShinglesInto(text, k, seed, out));
}
