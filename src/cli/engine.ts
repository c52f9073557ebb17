/**
 * The one place the CLI calls the dedup core: in this thread for small inputs, on worker threads
 * (the streaming two-pass pipeline over the texts in memory) for large ones. Both give the same result.
 * @module
 */
import { availableParallelism } from 'node:os';
import { dedup, type DedupOptions, type DedupResult } from '../dedup/dedup.js';
import { dedupStream } from '../dedup/streamDedup.js';
import { groupEqualTexts } from '../dedup/copies.js';
import { TooManyPairsError } from '../lsh/tooManyPairs.js';

/**
 * Below this many characters of text, starting worker threads costs more than it saves
 * (Kijiji's 1.4 M characters take ~0.3 s in one thread).
 */
export const PARALLEL_MIN_CHARS = 16e6;

/** Options of {@link findDuplicates}: dedup's, plus the worker count. */
export interface FindOptions extends DedupOptions {
  /** Worker threads; 0 runs in this thread. Default: all cores for inputs over {@link PARALLEL_MIN_CHARS}, else 0. */
  workers?: number;
}

/** Finds the near-duplicate pairs and clusters of `texts` (document i is texts[i]). */
export async function findDuplicates(texts: readonly string[], options: FindOptions): Promise<DedupResult> {
  const { workers: requested, ...rest } = options;
  let workers = requested;
  if (workers === undefined) {
    let chars = 0;
    for (let i = 0; i < texts.length && chars < PARALLEL_MIN_CHARS; i++) chars += texts[i]!.length;
    workers = chars >= PARALLEL_MIN_CHARS ? availableParallelism() : 0;
  }
  if (workers === 0) return dedup(texts, rest);
  // dedup() groups identical documents itself; the streaming pipeline is given each distinct text once.
  const copies = groupEqualTexts(texts);
  const distinct = copies.groups === texts.length ? (texts as string[]) : Array.from({ length: copies.groups }, (_, g) => texts[copies.members[copies.start[g]!]!]!);
  try {
    const { extra: _extra, ...result } = await dedupStream(() => [distinct], { ...rest, workers, copies: copies.groups === texts.length ? undefined : copies });
    return result;
  } catch (e) {
    // Only clusters wanted, but too many candidate pairs to hold: dedup() in this thread clusters
    // bucket by bucket instead, with the same clusters.
    if (e instanceof TooManyPairsError && e.what === 'candidates' && rest.pairs === false) return dedup(texts, rest);
    throw e;
  }
}
