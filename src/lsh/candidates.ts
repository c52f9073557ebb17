/**
 * Batch candidate generation: documents that share a band key in any band become candidate pairs.
 * @module
 */
import { BucketTable } from './bucketTable.js';
import { PairSet } from './pairSet.js';
import { bandKeys } from './bandKeys.js';
import { murmur3Words } from '../hash/murmur3.js';
import { DigestSet } from './digestSet.js';
import type { SignatureMatrix } from '../sketch/signatureMatrix.js';
import { TooManyPairsError } from './tooManyPairs.js';

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
 * Throws {@link TooManyPairsError} once there are more than `maxPairs` distinct pairs (default: no limit).
 */
export function lshCandidates(sigs: SignatureMatrix, bands: number, rows: number, maxPairs = Infinity): { pairs: PairSet; stats: CandidateStats } {
  const { hi, lo } = bandKeyMatrix(sigs, bands, rows);
  return candidatesFromBandKeys(hi, lo, sigs.present, sigs.count, bands, maxPairs);
}

/** The band keys of every present row of `sigs`: key of row d in band b at [d·bands + b] of `hi` and `lo`. */
export function bandKeyMatrix(sigs: SignatureMatrix, bands: number, rows: number): { hi: Uint32Array; lo: Uint32Array } {
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
  return { hi, lo };
}

/**
 * Calls `fn` with the members (ascending, in `members[0..size)`) of every bucket of ≥ 2 documents,
 * band by band, skipping a bucket whose member list already appeared in an earlier band. Key of
 * document d in band b at [d·bands + b] of `hi` and `lo`; documents with `present[d] = 0` are skipped.
 * `members` is reused between calls. Counts buckets into `stats`.
 */
export function forEachSharedBucket(
  hi: Uint32Array,
  lo: Uint32Array,
  present: Uint8Array,
  n: number,
  bands: number,
  stats: CandidateStats,
  fn: (members: Int32Array, size: number) => void,
): void {
  const seenMembers = new DigestSet(1 << 12);
  let members = new Int32Array(64);
  // Each band's documents are first split by the top bits of their key into partitions of about a
  // thousand (a counting sort that keeps doc order), and each partition is bucketed in a small table
  // that stays in cache: one table over a million documents missed the cache on nearly every
  // insert. Equal keys share a partition, so the buckets are the same; they are only visited in
  // another order (pairs are sorted later; a member list repeats only across bands).
  const bits = n >= 1 << 16 ? Math.min(12, Math.floor(Math.log2(n / 1024))) : 0;
  const parts = 1 << bits;
  const shift = 32 - bits;
  const start = new Int32Array(parts + 1);
  const docs = new Int32Array(n);
  const keyHi = new Uint32Array(n);
  const keyLo = new Uint32Array(n);
  const table = new BucketTable(bits === 0 ? n : 2 * (n >>> bits));
  for (let b = 0; b < bands; b++) {
    start.fill(0);
    let m = 0;
    if (bits === 0) {
      for (let d = 0; d < n; d++) if (present[d]) m++;
      start[1] = m;
    } else {
      for (let d = 0, i = b; d < n; d++, i += bands) if (present[d]) start[(lo[i]! >>> shift) + 1]!++;
      for (let p = 0; p < parts; p++) start[p + 1]! += start[p]!;
    }
    const fillAt = start.slice(0, parts);
    for (let d = 0, i = b; d < n; d++, i += bands) {
      if (!present[d]) continue;
      const k = lo[i]!;
      const at = bits === 0 ? fillAt[0]!++ : fillAt[k >>> shift]!++;
      docs[at] = d;
      keyHi[at] = hi[i]!;
      keyLo[at] = k;
    }
    for (let p = 0; p < parts; p++) {
      if (start[p + 1]! - start[p]! < 2) continue;
      table.clear();
      // The table links a partition's entries by their place in it (0, 1, …), not by doc id: its
      // chains then live in a few KB instead of reaching all over an n-entry array.
      const base = start[p]!;
      for (let j = base; j < start[p + 1]!; j++) table.add(keyHi[j]!, keyLo[j]!, j - base);
      const next = table.next;
      table.forEachBucket(2, (head, size) => {
        stats.sharedBuckets++;
        if (size > stats.largestBucket) stats.largestBucket = size;
        if (members.length < size) members = new Int32Array(size * 2);
        // Chains run in descending order (docs are in ascending order within a partition); fill
        // from the back to get ascending ids.
        let k = size;
        for (let e = head; e !== -1; e = next[e]!) members[--k] = docs[base + e]!;
        // The member list's digest: 32 bits of one hash and 21 of another (53 bits, as before).
        if (!seenMembers.add(murmur3Words(members, 0x51ed27, 0, size), murmur3Words(members, 0x2545f491, 0, size) >>> 11)) {
          stats.repeatedBuckets++;
          return;
        }
        fn(members, size);
      });
    }
  }
}

/** A fresh set of bucket counters. */
export function emptyCandidateStats(): CandidateStats {
  return { sharedBuckets: 0, repeatedBuckets: 0, largestBucket: 0, candidates: 0 };
}

/**
 * Candidate pairs from precomputed band keys (layout as in {@link forEachSharedBucket}). Same result
 * as {@link lshCandidates}, and the same `maxPairs` limit.
 */
export function candidatesFromBandKeys(
  hi: Uint32Array,
  lo: Uint32Array,
  present: Uint8Array,
  n: number,
  bands: number,
  maxPairs = Infinity,
): { pairs: PairSet; stats: CandidateStats } {
  return candidatesFromBuckets(collectSharedBuckets(hi, lo, present, n, bands), n, maxPairs);
}

/**
 * The shared buckets of band keys, kept from one bucketing pass ({@link forEachSharedBucket}):
 * bucket i's members (ascending) are `members[start[i] .. start[i+1])`.
 */
export interface SharedBuckets {
  members: Int32Array;
  start: Int32Array;
  /** Buckets kept. */
  count: number;
  /** Σ size·(size − 1)/2 over the buckets: an upper bound on the distinct candidate pairs. */
  bound: number;
  stats: CandidateStats;
}

/**
 * Buckets the band keys once and keeps the shared buckets (at most one member id per document and
 * band, and a bucket repeated from an earlier band is not kept), so that a caller can check the
 * pair bound before storing any pair and then enumerate the pairs without bucketing again (which
 * was half of the LSH stage on a million documents).
 */
export function collectSharedBuckets(hi: Uint32Array, lo: Uint32Array, present: Uint8Array, n: number, bands: number): SharedBuckets {
  let members = new Int32Array(4096);
  let start = new Int32Array(1024);
  let count = 0;
  let used = 0;
  let bound = 0;
  const stats = emptyCandidateStats();
  forEachSharedBucket(hi, lo, present, n, bands, stats, (m, size) => {
    if (used + size > members.length) {
      const grown = new Int32Array(Math.max(used + size, members.length * 2));
      grown.set(members.subarray(0, used));
      members = grown;
    }
    if (count + 2 > start.length) {
      const grown = new Int32Array(start.length * 2);
      grown.set(start);
      start = grown;
    }
    members.set(m.subarray(0, size), used);
    used += size;
    start[++count] = used;
    bound += (size * (size - 1)) / 2;
  });
  return { members, start, count, bound, stats };
}

/**
 * The distinct candidate pairs (a < b) of buckets kept by {@link collectSharedBuckets}. Throws
 * {@link TooManyPairsError} once there are more than `maxPairs` (checked per row, before the pair
 * set grows far past the limit and past memory).
 */
export function candidatesFromBuckets(buckets: SharedBuckets, n: number, maxPairs = Infinity): { pairs: PairSet; stats: CandidateStats } {
  const pairs = new PairSet(Math.max(1024, n));
  const stats = { ...buckets.stats };
  const { members, start } = buckets;
  for (let k = 0; k < buckets.count; k++) {
    const end = start[k + 1]!;
    for (let i = start[k]!; i < end; i++) {
      const a = members[i]!;
      for (let j = i + 1; j < end; j++) pairs.add(a, members[j]!);
      if (pairs.size > maxPairs) throw new TooManyPairsError('candidates', pairs.size, maxPairs, stats.largestBucket);
    }
  }
  stats.candidates = pairs.size;
  return { pairs, stats };
}

