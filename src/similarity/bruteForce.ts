/**
 * The exact all-pairs baseline: every pair of sets with Jaccard ≥ threshold.
 * Size filtering (|small| ≥ t·|large|) and early-exit merges prune work without changing the result.
 * @module
 */
import { jaccardAtLeast } from './jaccard.js';

/** A pair of document indices (a < b) with its similarity. */
export interface ScoredPair {
  /** Smaller document index. */
  a: number;
  /** Larger document index. */
  b: number;
  /** Exact Jaccard similarity (or the estimate, when only the estimate was computed). */
  similarity: number;
  /** MinHash estimate, when it was computed. */
  estimate?: number;
}

/** Options for {@link bruteForcePairs}. */
export interface BruteForceOptions {
  /** Called now and then with the number of documents done, for progress display. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * All pairs (a < b) of non-empty sets whose exact Jaccard similarity is ≥ `threshold`,
 * sorted by (a, b). O(n²) in the worst case: this is the baseline LSH is measured against.
 */
export function bruteForcePairs(sets: readonly Uint32Array[], threshold: number, options: BruteForceOptions = {}): ScoredPair[] {
  const n = sets.length;
  // Visit documents by increasing size; a partner is only worth a merge while it is not too large.
  const order = Array.from({ length: n }, (_, i) => i).filter((i) => sets[i]!.length > 0);
  order.sort((x, y) => sets[x]!.length - sets[y]!.length || x - y);
  const pairs: ScoredPair[] = [];
  for (let p = 0; p < order.length; p++) {
    const i = order[p]!;
    const si = sets[i]!;
    const maxLen = si.length / threshold + 1e-9;
    for (let q = p + 1; q < order.length; q++) {
      const j = order[q]!;
      const sj = sets[j]!;
      if (sj.length > maxLen) break;
      const s = jaccardAtLeast(si, sj, threshold);
      if (s >= 0) pairs.push(i < j ? { a: i, b: j, similarity: s } : { a: j, b: i, similarity: s });
    }
    if (options.onProgress && (p & 255) === 0) options.onProgress(p, order.length);
  }
  pairs.sort((x, y) => x.a - y.a || x.b - y.b);
  return pairs;
}
