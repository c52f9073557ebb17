/**
 * Batch candidate generation: documents that share a band key in any band become candidate pairs.
 * @module
 */
import { BucketTable } from './bucketTable.js';
import { PairSet } from './pairSet.js';
import { bandKeys } from './bandKeys.js';
import { murmur3Words } from '../hash/murmur3.js';
import type { SignatureMatrix } from '../sketch/signatureMatrix.js';

/** Counters from {@link lshCandidates}. */
export interface CandidateStats {
  /** Buckets with ≥ 2 documents, over all bands. */
  sharedBuckets: number;
  /** Shared buckets skipped because an earlier band had a bucket with exactly the same members. */
  repeatedBuckets: number;
  /** Documents in the largest bucket. */
  largestBucket: number;
  /** Distinct candidate pairs. */
  candidates: number;
}

/**
 * The distinct candidate pairs (a < b) of the signatures in `sigs` under b bands of r rows.
 * A bucket whose exact member list already appeared in an earlier band is skipped, so a large group of
 * copies, which collides in every band, has its pairs enumerated once, not once per band.
 */
export function lshCandidates(sigs: SignatureMatrix, bands: number, rows: number): { pairs: PairSet; stats: CandidateStats } {
  const n = sigs.count;
  const hi = new Uint32Array(n * bands);
  const lo = new Uint32Array(n * bands);
  const bh = new Uint32Array(bands);
  const bl = new Uint32Array(bands);
  for (let d = 0; d < n; d++) {
    if (!sigs.present[d]) continue;
    bandKeys(sigs.row(d), bands, rows, bh, bl);
    hi.set(bh, d * bands);
    lo.set(bl, d * bands);
  }
  return candidatesFromBandKeys(hi, lo, sigs.present, n, bands);
}

/**
 * Candidate pairs from precomputed band keys: key of document d in band b at [d·bands + b] of `hi`
 * and `lo`; documents with `present[d] = 0` are skipped. Same result as {@link lshCandidates}.
 */
export function candidatesFromBandKeys(
  hi: Uint32Array,
  lo: Uint32Array,
  present: Uint8Array,
  n: number,
  bands: number,
): { pairs: PairSet; stats: CandidateStats } {
  const pairs = new PairSet(Math.max(1024, n));
  const seenMembers = new Set<number>();
  const stats: CandidateStats = { sharedBuckets: 0, repeatedBuckets: 0, largestBucket: 0, candidates: 0 };
  let members = new Int32Array(64);
  for (let b = 0; b < bands; b++) {
    const table = new BucketTable(n);
    for (let d = 0; d < n; d++) if (present[d]) table.add(hi[d * bands + b]!, lo[d * bands + b]!, d);
    const next = table.next;
    table.forEachBucket(2, (head, size) => {
      stats.sharedBuckets++;
      if (size > stats.largestBucket) stats.largestBucket = size;
      if (members.length < size) members = new Int32Array(size * 2);
      // Chains run in descending doc order; fill from the back to get ascending ids.
      let m = size;
      for (let d = head; d !== -1; d = next[d]!) members[--m] = d;
      const digest = murmur3Words(members, 0x51ed27, 0, size) * 2097152 + (murmur3Words(members, 0x2545f491, 0, size) >>> 11);
      if (seenMembers.has(digest)) {
        stats.repeatedBuckets++;
        return;
      }
      seenMembers.add(digest);
      for (let i = 0; i < size; i++) {
        const a = members[i]!;
        for (let j = i + 1; j < size; j++) pairs.add(a, members[j]!);
      }
    });
  }
  stats.candidates = pairs.size;
  return { pairs, stats };
}
