/**
 * Word k-gram shingles: a rolling polynomial over token hashes, finished with fmix32.
 * @module
 */
import { fmix32 } from '../hash/mix.js';
import { ROLL_BASE, rollPower } from './symbols.js';
import { tokenHashes } from './tokens.js';

/**
 * Fingerprints of the k-grams of a token-hash sequence, in order with repeats.
 * Fewer than k tokens (but at least one) give one fingerprint of all of them; none give none.
 */
export function tokenGrams(tokens: Uint32Array, k: number): Uint32Array {
  const n = tokens.length;
  if (n === 0) return new Uint32Array(0);
  if (n <= k) {
    let h = 0;
    for (let i = 0; i < n; i++) h = (Math.imul(h, ROLL_BASE) + tokens[i]!) | 0;
    return Uint32Array.of(fmix32(h));
  }
  const out = new Uint32Array(n - k + 1);
  const bk = rollPower(k);
  let h = 0;
  let m = 0;
  for (let i = 0; i < n; i++) {
    h = (Math.imul(h, ROLL_BASE) + tokens[i]!) | 0;
    if (i >= k) h = (h - Math.imul(tokens[i - k]!, bk)) | 0;
    if (i >= k - 1) out[m++] = fmix32(h);
  }
  return out;
}

/**
 * Fingerprints of the word k-grams of `text` (Unicode-aware tokens), in order with repeats.
 * @param text normalized text
 * @param k words per shingle (≥ 1)
 * @param seed hash seed (default 0)
 */
export function wordShingles(text: string, k: number, seed = 0): Uint32Array {
  return tokenGrams(tokenHashes(text, seed), k);
}
