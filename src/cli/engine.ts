/**
 * The one place the CLI calls the dedup core. A parallel or streaming variant of the pipeline can be
 * swapped in here without touching the commands: they only see this function's signature.
 * @module
 */
import { dedup, type DedupOptions, type DedupResult } from '../dedup/dedup.js';

/**
 * Finds the near-duplicate pairs and clusters of `texts` (document i is texts[i]). Async so that an
 * implementation using worker threads fits the same signature.
 */
export async function findDuplicates(texts: readonly string[], options: DedupOptions): Promise<DedupResult> {
  return dedup(texts, options);
}
