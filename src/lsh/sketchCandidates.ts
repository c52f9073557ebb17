/**
 * The bucket-minimum sketch as a candidate generator: hash the shingles, put each hash into one of n buckets
 * by hash mod n, and keep the smallest hash of each bucket. Two documents whose minimum agrees in
 * some bucket are candidates; the candidates are then verified by exact Jaccard.
 *
 * A bucket minimum agrees with probability about the Jaccard similarity of the two sets restricted
 * to that bucket, so with n buckets a pair of similarity s becomes a candidate with probability
 * about 1 − (1 − s)^n: LSH with n bands of one row (one-permutation hashing without densification).
 * Recall is high, but so is the number of false candidates at low similarity (bench/RESULTS.md).
 * @module
 */
import { candidatesFromBandKeys, type CandidateStats } from './candidates.js';
import type { PairSet } from './pairSet.js';

/** Marks a bucket the document has no hash in: never shared (the low word is the document number). */
const EMPTY_BUCKET = 0xffffffff;

/**
 * The sketch of every set: for document d and bucket b, the key (b, min{h ∈ set : h mod n = b}) at
 * [d·n + b] of `hi` and `lo` (the layout `candidatesFromBandKeys` reads). An empty bucket gets a key
 * no other document has.
 */
export function sketchKeys(sets: readonly Uint32Array[], buckets: number): { hi: Uint32Array; lo: Uint32Array; present: Uint8Array } {
  if (!Number.isInteger(buckets) || buckets < 1) throw new RangeError(`buckets must be a positive integer, got ${buckets}`);
  const n = sets.length;
  const hi = new Uint32Array(n * buckets);
  const lo = new Uint32Array(n * buckets);
  const present = new Uint8Array(n);
  for (let d = 0; d < n; d++) {
    const set = sets[d]!;
    if (set.length === 0) continue;
    present[d] = 1;
    const base = d * buckets;
    for (let b = 0; b < buckets; b++) {
      hi[base + b] = EMPTY_BUCKET;
      lo[base + b] = d;
    }
    // The set is sorted ascending, so the first hash seen in a bucket is its minimum.
    for (let k = 0; k < set.length; k++) {
      const h = set[k]!;
      const b = h % buckets;
      if (hi[base + b] === EMPTY_BUCKET) {
        hi[base + b] = b;
        lo[base + b] = h;
      }
    }
  }
  return { hi, lo, present };
}

/** The distinct candidate pairs (a < b) of the bucket-minimum sketch with `buckets` buckets. */
export function sketchCandidates(sets: readonly Uint32Array[], buckets: number, maxPairs = Infinity): { pairs: PairSet; stats: CandidateStats } {
  const { hi, lo, present } = sketchKeys(sets, buckets);
  return candidatesFromBandKeys({ hi, lo, present, n: sets.length, bands: buckets }, maxPairs);
}
