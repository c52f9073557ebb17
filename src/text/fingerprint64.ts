/**
 * 64-bit shingle fingerprints (each distinct shingle mapped to an m-bit fingerprint, m = 64). Two shingle hashes with independent seeds, taken at the same
 * positions, are joined into one 64-bit value: two distinct shingles then share a fingerprint only
 * if both halves collide. The collision rate of each width is measured in bench/RESULTS.md
 * ("Fingerprint collisions").
 * @module
 */
import { createShingler, type ShingleOptions } from './shingler.js';

/** Seed offset of the second (low) half. */
const LOW_SEED = 0x9e3779b9;

/** Builds a function from a raw text to its sorted unique 64-bit fingerprint set. */
export function createSet64(options: ShingleOptions = {}): (text: string) => BigUint64Array {
  if (options.multiset) throw new RangeError('64-bit fingerprints do not support multiset shingles');
  const hi = createShingler(options);
  const lo = createShingler({ ...options, seed: ((options.seed ?? 0) ^ LOW_SEED) >>> 0 });
  return (text: string): BigUint64Array => {
    const t = hi.normalize(text);
    // fingerprints() returns a fresh array for every kind: the two sequences stay aligned by position.
    const a = hi.fingerprints(t);
    const b = lo.fingerprints(t);
    if (a.length !== b.length) throw new Error('internal: shingle sequences of two seeds differ in length');
    const out = new BigUint64Array(a.length);
    for (let i = 0; i < a.length; i++) out[i] = (BigInt(a[i]!) << 32n) | BigInt(b[i]!);
    out.sort();
    let m = 0;
    for (let i = 0; i < out.length; i++) if (m === 0 || out[i] !== out[m - 1]) out[m++] = out[i]!;
    return out.slice(0, m);
  };
}
