/**
 * The join of LSH band ranges bucketed apart (on worker threads): one list of buckets, as one
 * pass over all the bands would keep them.
 * @module
 */
import { firstOccurrences } from './firstOccurrences.js';
import { TooManyPairsError } from './tooManyPairs.js';
import { emptyCandidateStats, type BucketLists, type CandidateStats, type SharedBuckets } from './candidates.js';

/**
 * The kept buckets (`collectSharedBuckets`) of consecutive band ranges, in band order, as one
 * list: a range's bucket whose member list an earlier range kept is dropped (counted as repeated),
 * which gives the buckets and counters of one pass over all the bands (`candidates` is left 0).
 * Throws {@link TooManyPairsError} when Σ size·(size − 1)/2 over the kept buckets passes
 * `maxBound`, before the list is made.
 */
export function joinRanges(parts: SharedBuckets[], maxBound = Infinity): BucketLists & { bound: number; stats: CandidateStats } {
  const stats = emptyCandidateStats();
  let all = 0;
  for (const p of parts) {
    stats.sharedBuckets += p.stats.sharedBuckets;
    stats.repeatedBuckets += p.stats.repeatedBuckets;
    stats.largestBucket = Math.max(stats.largestBucket, p.stats.largestBucket);
    all += p.count;
  }
  if (parts.length === 1) {
    const only = parts[0]!;
    if (only.bound > maxBound) throw new TooManyPairsError('candidates', only.bound, maxBound, stats.largestBucket);
    return { members: only.members, start: only.start, count: only.count, bound: only.bound, stats };
  }
  const hi = new Int32Array(all);
  const lo = new Int32Array(all);
  let at = 0;
  for (const p of parts) {
    hi.set(p.digestHi.subarray(0, p.count), at);
    lo.set(p.digestLo.subarray(0, p.count), at);
    at += p.count;
  }
  const keep = firstOccurrences(hi, lo, all);
  let count = 0;
  let used = 0;
  let bound = 0;
  at = 0;
  for (const p of parts) {
    for (let k = 0; k < p.count; k++, at++) {
      if (!keep[at]) continue;
      const size = p.start[k + 1]! - p.start[k]!;
      count++;
      used += size;
      bound += (size * (size - 1)) / 2;
    }
  }
  stats.repeatedBuckets += all - count;
  if (bound > maxBound) throw new TooManyPairsError('candidates', bound, maxBound, stats.largestBucket);
  const members = new Int32Array(used);
  const start = new Int32Array(count + 1);
  let c = 0;
  let u = 0;
  at = 0;
  for (const p of parts) {
    const pm = p.members;
    const ps = p.start;
    for (let k = 0; k < p.count; k++, at++) {
      if (!keep[at]) continue;
      for (let i = ps[k]!, end = ps[k + 1]!; i < end; i++) members[u++] = pm[i]!;
      start[++c] = u;
    }
  }
  return { members, start, count, bound, stats };
}
