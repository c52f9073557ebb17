/**
 * The limit on pairs held in memory: candidate generation and pair expansion stop with this error
 * instead of running out of memory (a group of 20,000 near-identical documents is 200 million pairs).
 * @module
 */

/** Thrown instead of exhausting memory when a run would hold more pairs than its `maxPairs` allows. */
export class TooManyPairsError extends RangeError {
  override readonly name = 'TooManyPairsError';
  /**
   * @param what `candidates` (LSH candidate pairs among distinct documents) or `pairs` (verified pairs to return)
   * @param count how many there are (for candidates: more than the limit, counted up to where it stopped)
   * @param limit the `maxPairs` in force
   * @param largestBucket documents in the largest LSH bucket (candidates; 0 when not known) or the largest group of copies (pairs)
   */
  constructor(
    readonly what: 'candidates' | 'pairs',
    readonly count: number,
    readonly limit: number,
    readonly largestBucket: number,
  ) {
    super(
      what === 'candidates'
        ? `more than ${limit} candidate pairs (maxPairs)${largestBucket > 0 ? `; the largest LSH bucket holds ${largestBucket} distinct documents` : ''}`
        : `${count} near-duplicate pairs, more than maxPairs (${limit}); the largest group of identical documents has ${largestBucket}`,
    );
  }
}
