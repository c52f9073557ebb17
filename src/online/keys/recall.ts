/**
 * Honest per-query thresholds. The index's LSH bands (b bands of r rows) were chosen for its own
 * threshold T: a document of Jaccard similarity s to the query becomes a candidate with probability
 * p(s) = 1 − (1 − s^r)^b (the S-curve). A query at a threshold t below T still verifies every
 * candidate exactly, but the pairs between t and T are found only in part. The warning states
 * p(t): the chance of the hardest pair the query asks for, one at exactly t. It bounds the expected
 * recall from below whatever the similarities of the true matches are (p rises with s, so every
 * asked pair, s ≥ t, is found with probability ≥ p(t)); an average over an assumed distribution of
 * similarities would be a guess (on examples/ads.tsv most pairs are exact copies, found with
 * probability 1). One index's measured recall varies around its expectation, since near copies make
 * pairs fall together: test/online/recall.test.ts measures it on the ads against brute force (the 44
 * pairs in [0.6, 0.8): 0.50 to 1.00 over 16 MinHash seeds, mean 0.73; S-curve 0.76; p(0.6) = 0.53).
 * @module
 */
import { candidateProbability } from '../../lsh/params.js';

/** The warning a query below the index's threshold carries (`recall` in HTTP replies). */
export interface RecallWarning {
  /** The query's threshold. */
  threshold: number;
  /** The index's threshold, for which its bands were chosen. */
  indexThreshold: number;
  /** The index's bands and rows. */
  bands: number;
  rows: number;
  /**
   * p(threshold) = 1 − (1 − threshold^rows)^bands: the probability that a document exactly at the
   * query's threshold is found; every asked document (similarity ≥ threshold) is found at least as often.
   */
  atThreshold: number;
  /** The same, in words. */
  message: string;
}

/**
 * The recall warning for a Jaccard query at `threshold` on an index with `manifest`'s threshold and
 * bands; null when the threshold is not below the index's (the index's own recall then holds).
 */
export function recallWarning(manifest: { threshold: number; bands: number; rows: number }, threshold: number): RecallWarning | null {
  const T = manifest.threshold;
  if (!(threshold < T)) return null;
  const { bands, rows } = manifest;
  const p = candidateProbability(threshold, bands, rows);
  const pct = p >= 0.995 ? '>99' : p < 0.01 ? '<1' : (p * 100).toFixed(0);
  return {
    threshold,
    indexThreshold: T,
    bands,
    rows,
    atThreshold: p,
    message:
      `The threshold ${threshold} is below the index’s ${T}: its LSH bands (${bands} × ${rows}) were chosen for ${T}, so near duplicates between ${threshold} and ${T} `
      + `are found only in part (a pair at ${threshold} is found with probability ${pct}%, pairs nearer ${T} more often).`,
  };
}
