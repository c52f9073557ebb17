/**
 * Candidate pairs grouped by their second member, as streaming verification reads them, listed from
 * LSH buckets without a pair hash set.
 * @module
 */
import { grownInt32 } from './grownInt32.js';
import { TooManyPairsError } from './tooManyPairs.js';
import type { BucketLists } from './candidates.js';

/**
 * Candidate pairs (a < b) grouped by second member: the first members of the pairs with second
 * member b are `first[start[b] .. start[b + 1])`.
 */
export interface SecondGroups {
  /** n + 1 offsets into `first`. */
  start: Int32Array;
  first: Int32Array;
  /** Pairs. */
  count: number;
}

/**
 * The pairs (`pa[p]`, `pb[p]`), p < count, over n documents, grouped by second member; a group
 * keeps the pairs' order (a stable counting sort).
 */
export function groupBySecond(pa: Int32Array, pb: Int32Array, count: number, n: number): SecondGroups {
  const start = new Int32Array(n + 1);
  for (let p = 0; p < count; p++) start[pb[p]! + 1]!++;
  for (let d = 0; d < n; d++) start[d + 1]! += start[d]!;
  const first = new Int32Array(count);
  const fill = start.slice(0, n);
  for (let p = 0; p < count; p++) first[fill[pb[p]!]!++] = pa[p]!;
  return { start, first, count };
}

/**
 * The distinct candidate pairs of `buckets` over n documents, grouped by second member: for each
 * document b, the members before b of the buckets that hold b, in bucket order, a repeat dropped
 * by a stamp per document instead of a pair hash set (which cost ~0.5 s of hash probes for the
 * 5M bucket pairs of a duplicate-heavy million). A group's order is that of its pairs' first
 * occurrences in bucket order, as {@link groupBySecond} of `candidatesFromBuckets`'s pairs
 * gives it. Throws {@link TooManyPairsError} once there are more than `maxPairs` distinct pairs.
 */
export function groupsFromBuckets(buckets: BucketLists, n: number, maxPairs = Infinity, largestBucket = 0): SecondGroups {
  const { members, start: bstart, count: nb } = buckets;
  const used = bstart[nb]!;
  // Each document's buckets, in bucket order (a counting sort of the memberships).
  const docStart = new Int32Array(n + 1);
  for (let i = 0; i < used; i++) docStart[members[i]! + 1]!++;
  for (let d = 0; d < n; d++) docStart[d + 1]! += docStart[d]!;
  const docBuckets = new Int32Array(used);
  const fill = docStart.slice(0, n);
  for (let k = 0; k < nb; k++) for (let i = bstart[k]!, end = bstart[k + 1]!; i < end; i++) docBuckets[fill[members[i]!]!++] = k;
  const stamp = new Int32Array(n).fill(-1);
  const start = new Int32Array(n + 1);
  let first = new Int32Array(Math.max(1024, Math.min(used, 1 << 24)));
  let count = 0;
  for (let b = 0; b < n; b++) {
    for (let t = docStart[b]!, tend = docStart[b + 1]!; t < tend; t++) {
      const k = docBuckets[t]!;
      // b is in bucket k and members ascend, so the members before b are a prefix.
      for (let i = bstart[k]!;; i++) {
        const a = members[i]!;
        if (a === b) break;
        if (stamp[a] === b) continue;
        stamp[a] = b;
        if (count === first.length) first = grownInt32(first, count, count * 2);
        first[count++] = a;
      }
    }
    start[b + 1] = count;
    if (count > maxPairs) throw new TooManyPairsError('candidates', count, maxPairs, largestBucket);
  }
  return { start, first: first.length === count ? first : first.slice(0, count), count };
}
