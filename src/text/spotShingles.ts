/**
 * Stopword-anchored word shingles (after SpotSigs): a shingle starts at each stopword and
 * spans it and the words that follow, `w` words in all.
 * @module
 */
import { tokenGrams } from './wordShingles.js';
import { tokenHashes } from './tokens.js';
import { fmix32 } from '../hash/mix.js';
import { ROLL_BASE } from './symbols.js';

/**
 * Fingerprints of the stopword-anchored shingles of `text`, in order with repeats.
 * A shingle that would run past the end of the text is dropped; a text with words but no complete
 * anchored shingle yields one fingerprint of all its words, so it is still comparable.
 * @param text normalized (lowercased) text
 * @param w words per shingle, the stopword included (≥ 1)
 * @param stopHashes token hashes of the stopwords, from `stopwordHashes` with the same seed
 * @param seed hash seed
 */
export function spotShingles(text: string, w: number, stopHashes: Set<number>, seed = 0): Uint32Array {
  const toks = tokenHashes(text, seed);
  const n = toks.length;
  const out = new Uint32Array(Math.max(0, n - w + 1));
  let m = 0;
  for (let i = 0; i + w <= n; i++) {
    if (!stopHashes.has(toks[i]!)) continue;
    let h = 0;
    for (let j = i; j < i + w; j++) h = (Math.imul(h, ROLL_BASE) + toks[j]!) | 0;
    out[m++] = fmix32(h);
  }
  if (m === 0) return n === 0 ? out : tokenGrams(toks, n);
  return out.subarray(0, m);
}
