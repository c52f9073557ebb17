/**
 * Dedup against a reference corpus in one process: the pairs (corpus document, reference document)
 * whose exact Jaccard is at least the threshold, never a pair within one side. Uses the same
 * signer, band keys, bucket enumeration and exact verification as `dedup()`.
 *
 * Uses: remove a benchmark's test set from training data (the corpus is the training data, the
 * reference the test set), or keep only what a new crawl adds (the corpus is the new crawl, the
 * reference the old one).
 * @module
 */
import { createTextSigner } from '../sketch/textSigner.js';
import { chooseBands, type BandChoice } from '../lsh/params.js';
import { bandKeys } from '../lsh/bandKeys.js';
import { docMajorKeys, emptyCandidateStats, forEachSharedBucket } from '../lsh/candidates.js';
import { PairSet } from '../lsh/pairSet.js';
import { TooManyPairsError } from '../lsh/tooManyPairs.js';
import { jaccard } from '../similarity/jaccard.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import { resolveDedupOptions, type DedupOptions } from './options.js';
import { sortPairs } from '../similarity/sortPairs.js';

/** The result of {@link dedupAgainst}. */
export interface AgainstResult {
  /** Verified pairs: `a` a corpus index, `b` a reference index; sorted by (a, b). */
  pairs: ScoredPair[];
  /** For each corpus document, the reference document it is most similar to among its pairs (ties: the first), or -1. */
  bestMatch: Int32Array;
  /** The similarity of each corpus document to its {@link bestMatch} (−1 without one). */
  bestSimilarity: Float64Array;
  /** Corpus documents with at least one pair. */
  matched: number;
  /** Reference documents with at least one pair. */
  referenceMatched: number;
  /** Distinct candidate pairs (across the sides). */
  candidates: number;
  /** Corpus and reference documents without shingles. */
  emptyDocs: number;
  /** The banding used. */
  bands: BandChoice;
}

/**
 * The near-duplicate pairs between `corpus` and `reference` (exact Jaccard ≥ threshold, or the
 * estimate with `verify: 'estimate'`). Options as for `dedup()`; `maxPairs` bounds candidates.
 */
export function dedupAgainst(corpus: readonly string[], reference: readonly string[], options: DedupOptions = {}): AgainstResult {
  const { threshold, verify, maxPairs } = resolveDedupOptions(options);
  const signer = createTextSigner({ shingle: options.shingle, minhash: options.minhash });
  const bands = chooseBands(threshold, signer.numPerm, options.lsh);
  const n = corpus.length;
  const total = n + reference.length;
  const nb = bands.bands;
  const hi = new Uint32Array(total * nb);
  const lo = new Uint32Array(total * nb);
  const present = new Uint8Array(total);
  const keepSigs = verify !== 'exact';
  const sigs = keepSigs ? new Uint32Array(total * signer.numPerm) : undefined;
  const row = new Uint32Array(signer.numPerm);
  const bh = new Uint32Array(nb);
  const bl = new Uint32Array(nb);
  const textOf = (d: number): string => (d < n ? corpus[d]! : reference[d - n]!);
  let emptyDocs = 0;
  for (let d = 0; d < total; d++) {
    if (!signer.signInto(textOf(d), row)) {
      emptyDocs++;
      continue;
    }
    present[d] = 1;
    sigs?.set(row, d * signer.numPerm);
    bandKeys(row, nb, bands.rows, bh, bl);
    hi.set(bh, d * nb);
    lo.set(bl, d * nb);
  }
  // Members of a bucket are ascending: corpus documents (< n) first, then reference documents.
  const cand = new PairSet(1024);
  forEachSharedBucket(docMajorKeys({ hi, lo, present, n: total, bands: nb }), emptyCandidateStats(), (members, size) => {
    let split = 0;
    while (split < size && members[split]! < n) split++;
    for (let i = 0; i < split; i++) {
      for (let j = split; j < size; j++) cand.add(members[i]!, members[j]! - n);
      if (cand.size > maxPairs) throw new TooManyPairsError('candidates', cand.size, maxPairs, size);
    }
  });
  const sets = new Map<number, Uint32Array>();
  const setOf = (d: number): Uint32Array => {
    let s = sets.get(d);
    if (!s) sets.set(d, s = signer.set(textOf(d)));
    return s;
  };
  const pairs: ScoredPair[] = [];
  for (let p = 0; p < cand.size; p++) {
    const a = cand.a[p]!;
    const b = cand.b[p]!;
    let s: number;
    if (sigs) {
      let eq = 0;
      const k = signer.numPerm;
      for (let x = a * k, y = (n + b) * k, end = x + k; x < end; x++, y++) if (sigs[x] === sigs[y]) eq++;
      s = eq / k;
      if (verify === 'estimate' && s < threshold) continue;
    } else {
      s = jaccard(setOf(a), setOf(n + b));
      if (s < threshold) continue;
    }
    pairs.push({ a, b, similarity: s });
  }
  sortPairs(pairs);
  const bestMatch = new Int32Array(n).fill(-1);
  const bestSim = new Float64Array(n).fill(-1);
  let matched = 0;
  let referenceMatched = 0;
  const refSeen = new Uint8Array(reference.length);
  for (const p of pairs) {
    if (bestMatch[p.a] === -1) matched++;
    if (refSeen[p.b] === 0) {
      refSeen[p.b] = 1;
      referenceMatched++;
    }
    if (p.similarity > bestSim[p.a]!) {
      bestSim[p.a] = p.similarity;
      bestMatch[p.a] = p.b;
    }
  }
  return { pairs, bestMatch, bestSimilarity: bestSim, matched, referenceMatched, candidates: cand.size, emptyDocs, bands };
}
