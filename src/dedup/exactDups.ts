/**
 * Exact duplicates after normalization: the cheapest first pass (a hash of each text
 * finds them). No shingles, no MinHash: each normalized text is
 * hashed to 64 bits and documents with equal hashes form a group. One pass, streaming: memory is a
 * few integers per document, whatever the text sizes.
 * @module
 */
import type { NormalizeOptions } from '../text/normalize.js';
import { createTextHasher } from './textHash.js';
import { chooseBands } from '../lsh/params.js';
import { emptyCandidateStats } from '../lsh/candidates.js';
import { CopyFinder, HashIndex } from './copyGroups.js';
import { finishDedup } from './finish.js';
import type { DedupResult } from './options.js';
import { ENGINE_DEFAULTS } from '../engine/options.js';

/** Options of {@link exactDuplicates}. */
export interface ExactDuplicatesOptions {
  /** Normalization before hashing, as for shingles (default: NFKC, lowercase, collapse whitespace). */
  normalize?: NormalizeOptions;
  /** Return every pair in `result.pairs` (default true); false keeps clusters only (O(n) memory). */
  pairs?: boolean;
  /** The most pairs returned; past it a `TooManyPairsError`. Default 50,000,000. */
  maxPairs?: number;
  /** Called with the number of documents hashed so far, every 1024 documents. */
  onProgress?: (done: number) => void;
}

/**
 * Groups identical documents (after normalization) of a corpus given as batches of texts, in order.
 * The result has the shape of `dedup`'s: pairs with similarity 1 (a < b), clusters of identical
 * documents, `clusterOf`. Documents whose normalized text is empty are never duplicates (as in
 * `dedup`). Identity is a 64-bit hash: two different texts collide with probability about n²/2⁶⁵
 * (3·10⁻⁶ for ten million documents).
 */
export async function exactDuplicates(
  batches: AsyncIterable<readonly string[]> | Iterable<readonly string[]>,
  options: ExactDuplicatesOptions = {},
): Promise<DedupResult> {
  const t0 = performance.now();
  const hashText = createTextHasher(options.normalize);
  const h = new Uint32Array(2);
  const index = new HashIndex(1024);
  // Low hash word of each group's first document, to confirm a match on the high word.
  let lowOf = new Uint32Array(1024);
  const copies = new CopyFinder(1024);
  const empty: number[] = [];
  let n = 0;
  let chars = 0;
  for await (const batch of batches) {
    for (const text of batch) {
      chars += text.length;
      if (!hashText(text, h)) {
        empty.push(n);
        copies.startGroup();
      } else {
        const hi = h[0]!;
        const lo = h[1]!;
        const g = index.find(hi, (x) => lowOf[x] === lo);
        if (g >= 0) copies.join(g);
        else {
          const ng = copies.startGroup();
          if (ng >= lowOf.length) {
            const x = new Uint32Array(lowOf.length * 2);
            x.set(lowOf);
            lowOf = x;
          }
          lowOf[ng] = lo;
          index.insert(hi, ng);
        }
      }
      n++;
      if (options.onProgress && (n & 1023) === 0) options.onProgress(n);
    }
  }
  const groups = copies.result();
  const t1 = performance.now();
  const run = {
    n,
    pairs: [],
    empty,
    // No banding is used; the field is filled for the result's shape only.
    bands: chooseBands(0.8, 128),
    chars,
    cstats: emptyCandidateStats(),
    groups,
    keepPairs: options.pairs ?? true,
    maxPairs: options.maxPairs ?? ENGINE_DEFAULTS.maxPairs,
  };
  const result = finishDedup(run, { t0, t1, t2: t1, shingle: 0, sign: t1 - t0 });
  result.stats.candidateMethod = undefined;
  return result;
}
