/**
 * The one place the CLI calls the dedup core: in this thread for small inputs, on worker threads
 * (the streaming two-pass pipeline over the texts in memory) for large ones. Both give the same result.
 * @module
 */
import { availableParallelism } from 'node:os';
import { dedup, type DedupOptions, type DedupResult } from '../dedup/dedup.js';
import { dedupStream } from '../dedup/streamDedup.js';
import { TooManyPairsError } from '../lsh/tooManyPairs.js';
import { autoChoice, needsKinds } from '../dedup/kinds.js';

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
  if (rest.candidates === 'auto') {
    const why = autoWhy(texts, rest);
    rest.candidates = why.method;
    const result = await findDuplicates(texts, { ...rest, workers: requested });
    result.stats.candidateReason = why.reason;
    return result;
  }
  // The other kinds (exact join, sketch, containment, cluster policies) run in this thread.
  if (needsKinds(rest)) return dedup(texts, rest);
  let workers = requested;
  if (workers === undefined) {
    let chars = 0;
    for (let i = 0; i < texts.length && chars < PARALLEL_MIN_CHARS; i++) chars += texts[i]!.length;
    workers = chars >= PARALLEL_MIN_CHARS ? availableParallelism() : 0;
  }
  if (workers === 0) return dedup(texts, rest);
  try {
    // `extra` deleted, not left out by a rest spread: the spread would read `pairs`, which makes an
    // object per pair (the streaming result keeps them in columns until read; see pairColumns.ts).
    const result: DedupResult & { extra?: unknown } = await dedupStream(() => [texts as string[]], { ...rest, workers });
    delete result.extra;
    return result;
  } catch (e) {
    // More candidate pairs than --max-pairs allows: dedup() in this thread groups identical
    // documents first and, when only clusters are wanted, clusters bucket by bucket, so it finishes
    // where the parallel pipeline cannot, with the same result. (Grouping up front would cost a hash
    // of every text, ~2.5 s per 1.5 GB, on every run.)
    if (e instanceof TooManyPairsError && e.what === 'candidates') return dedup(texts, rest);
    throw e;
  }
}

/**
 * The concrete method `candidates: 'auto'` stands for with these texts and options (LSH when
 * verification is not exact: the other methods always score exactly).
 */
export function resolveAuto(texts: readonly string[], options: DedupOptions): 'lsh' | 'exact' {
  return autoWhy(texts, options).method;
}

/** {@link resolveAuto} with the reason printed in the summary and `--json`. */
function autoWhy(texts: readonly string[], options: DedupOptions): { method: 'lsh' | 'exact'; reason: string } {
  if ((options.verify ?? 'exact') !== 'exact' && (options.measure ?? 'jaccard') === 'jaccard')
    return { method: 'lsh', reason: `--verify ${options.verify}: the join always scores exactly` };
  let chars = 0;
  for (let i = 0; i < texts.length; i++) chars += texts[i]!.length;
  return autoChoice(options.measure ?? 'jaccard', chars, texts.length, options.shingle?.kind);
}
