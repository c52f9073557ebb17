/**
 * The command-line advice for a run that holds more pairs than --max-pairs allows.
 * @module
 */
import { TooManyPairsError } from '../lsh/tooManyPairs.js';
import { int } from './report.js';

/**
 * What the user can do when a run holds more pairs than --max-pairs; `canAskForClusters` when the
 * command has --output clusters/dedup/annotate and pairs were asked for; `streamed` when the run
 * folded identical texts only (not other texts with identical shingle sets).
 */
export function tooManyPairsMessage(e: TooManyPairsError, canAskForClusters = false, streamed = false): string {
  if (e.what === 'pairs') {
    return (
      `${int(e.count)} near-duplicate pairs, more than --max-pairs (${int(e.limit)}); the largest group of identical documents has ${int(e.largestBucket)}. `
      + (canAskForClusters
        ? '--output clusters, dedup or annotate handle such groups without listing their pairs; or raise --max-pairs (~40 bytes of memory per pair).'
        : 'Raise --max-pairs (~40 bytes of memory per pair).')
    );
  }
  return (
    `more than ${int(e.limit)} LSH candidate pairs (--max-pairs)`
    // Streamed, identical texts are folded, identical sets of other texts are not: they are counted as documents.
    + (e.largestBucket > 0
      ? `: the largest bucket holds ${int(e.largestBucket)} ${
        streamed ? 'documents (identical texts counted once)' : 'distinct documents'
      } that agree on a whole band, `
      : ', ')
    + 'typically many near-identical texts (a template with small changes). Raise --max-pairs (~40 bytes of memory per pair), or raise --threshold or --rows so that fewer documents share a bucket.'
  );
}
