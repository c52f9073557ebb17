/**
 * A 64-bit hash of a text after the default normalization, computed in one pass over the raw
 * string for texts in ASCII and Latin-1 letters: lowercasing, collapsing whitespace runs to one space and trimming are
 * done on the fly, so no normalized copy of the text is built. Used by `dedup --exact`, whose
 * speed is this loop's. Other texts (NFKC, Unicode case and spaces) and other normalization
 * options are normalized first by the regular normalizer, then hashed by the same loop, which
 * leaves an already-normalized text unchanged: both routes give the same hash for the same
 * normalized text.
 * @module
 */
import { fmix32 } from '../hash/mix.js';
import { makeNormalizer, resolvePreset, type NormalizeOptions } from '../text/normalize.js';

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;
const SEED_HI = 0x2f1e0c5d;
const SEED_LO = 0x7a3b9e41;

/** Builds a function that writes the 64-bit hash of a text's normalized form into out[0], out[1]. */
export function createTextHasher(options: NormalizeOptions = {}): (text: string, out: Uint32Array) => boolean {
  const norm = makeNormalizer(options);
  const plain = resolvePreset(options.preset) === 'default' && !options.keepCase && !options.stripPunctuation && !options.stripDiacritics && !options.custom;
  /** Hashes the text with case folding and whitespace collapsing (fold) or as it is; false when empty. */
  const hash = (t: string, fold: boolean, out: Uint32Array): boolean => {
    let h1 = SEED_HI;
    let h2 = SEED_LO;
    let half = -1; // a code unit waiting for its pair
    let len = 0;
    let pendingSpace = false;
    const n = t.length;
    for (let i = 0; i < n; i++) {
      let c = t.charCodeAt(i);
      if (fold) {
        if (c === 32 || (c >= 9 && c <= 13)) {
          pendingSpace = len > 0;
          continue;
        }
        if ((c >= 65 && c <= 90) || (c >= 0xc0 && c <= 0xde && c !== 0xd7)) c += 32;
        if (pendingSpace) {
          pendingSpace = false;
          // Emit the one space this run of whitespace collapses to.
          if (half < 0) half = 32;
          else {
            const k = half | (32 << 16);
            half = -1;
            h1 = block(h1, k);
            h2 = block(h2, k);
          }
          len++;
        }
      }
      if (half < 0) half = c;
      else {
        const k = half | (c << 16);
        half = -1;
        h1 = block(h1, k);
        h2 = block(h2, k);
      }
      len++;
    }
    if (len === 0) return false;
    if (half >= 0) {
      let k = Math.imul(half, C1);
      k = (k << 15) | (k >>> 17);
      k = Math.imul(k, C2);
      h1 ^= k;
      h2 ^= k;
    }
    out[0] = fmix32(h1 ^ (len * 2));
    out[1] = fmix32(h2 ^ (len * 2));
    return true;
  };
  return (text, out) => {
    if (plain) {
      // ASCII and the Latin-1 letters À–ÿ are unchanged by NFKC and lowercase by +32 (À–Þ, not ×):
      // such texts (most Western European text) take the one-pass route.
      let simple = true;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c > 127 && (c < 0xc0 || c > 0xff)) {
          simple = false;
          break;
        }
      }
      if (simple) return hash(text, true, out);
    }
    return hash(norm(text), plain, out);
  };
}

/** One MurmurHash3 block step. */
function block(h: number, k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, C2);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}
