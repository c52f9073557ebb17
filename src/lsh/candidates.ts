/**
 * Batch candidate generation: documents that share a band key in any band become candidate pairs.
 * @module
 */
import { BucketTable } from './bucketTable.js';
import { PairSet } from './pairSet.js';
import { bandKeys } from './bandKeys.js';
import { murmur3Words } from '../hash/murmur3.js';
import { firstOccurrences } from './firstOccurrences.js';
import type { SignatureMatrix } from '../sketch/signatureMatrix.js';
import { TooManyPairsError } from './tooManyPairs.js';
import { grownInt32 } from './grownInt32.js';

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
  return candidatesFromBuckets(collectSharedBuckets(bandKeyMatrix(sigs, bands, rows)), sigs.count, maxPairs);
}

/** The band keys of every present row of `sigs`, band-major: key of row d in band b at [b·n + d]. */
export function bandKeyMatrix(sigs: SignatureMatrix, bands: number, rows: number): BandKeyTable {
  const n = sigs.count;
  const hi = new Uint32Array(n * bands);
  const lo = new Uint32Array(n * bands);
  const bh = new Uint32Array(bands);
  const bl = new Uint32Array(bands);
  for (let d = 0; d < n; d++) {
    if (!sigs.present[d]) continue;
    bandKeys(sigs.row(d), bands, rows, bh, bl);
    for (let b = 0, i = d; b < bands; b++, i += n) {
      hi[i] = bh[b]!;
      lo[i] = bl[b]!;
    }
  }
  return { hi, lo, present: sigs.present, n, bands, docStride: 1, bandStride: n };
}

/**
 * The band keys of n documents: document d's key in band b is (`hi`, `lo`) at
 * [d·`docStride` + b·`bandStride`]; documents with `present[d] = 0` have none.
 */
export interface BandKeyTable {
  hi: Uint32Array;
  lo: Uint32Array;
  present: Uint8Array;
  n: number;
  bands: number;
  docStride: number;
  bandStride: number;
}

/** A {@link BandKeyTable} whose keys are stored document by document: [d·bands + b]. */
export function docMajorKeys(keys: DocMajorKeys): BandKeyTable {
  const { hi, lo, present, n, bands } = keys;
  return { hi, lo, present, n, bands, docStride: bands, bandStride: 1 };
}

/**
 * Calls `fn` with the members (ascending, in `members[0..size)`) of every bucket of ≥ 2 documents,
 * band by band, skipping a bucket whose member list already appeared in an earlier band
 * ({@link collectSharedBuckets}). Adds the buckets' counters to `stats`.
 */
export function forEachSharedBucket(keys: BandKeyTable, stats: CandidateStats, fn: (members: Int32Array, size: number) => void): void {
  const kept = collectSharedBuckets(keys);
  stats.sharedBuckets += kept.stats.sharedBuckets;
  stats.repeatedBuckets += kept.stats.repeatedBuckets;
  stats.largestBucket = Math.max(stats.largestBucket, kept.stats.largestBucket);
  const { members, start } = kept;
  for (let k = 0; k < kept.count; k++) fn(members.subarray(start[k]!, start[k + 1]!), start[k + 1]! - start[k]!);
}

/**
 * Every bucket of ≥ 2 documents of bands [`fromBand`, `toBand`), band by band, repeats included,
 * with its member list's 53-bit digest (`digestHi`, and 21 bits in `digestLo`). Band-major keys
 * (`docStride` 1) are read sequentially, several times faster than document-major ones, whose
 * every read is a cache line of its own.
 */
function allSharedBuckets(keys: BandKeyTable, fromBand: number, toBand: number): SharedBuckets {
  const { hi, lo, present, n, docStride, bandStride } = keys;
  // Room for a shared bucket per four documents and band before growing (growing copies), but no
  // more than 4M up front: a corpus of tens of millions would reserve gigabytes it may not use.
  const out = new BucketList(Math.min(((toBand - fromBand) * n) >>> 2, 1 << 22));
  const stats = emptyCandidateStats();
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
  for (let b = fromBand; b < toBand; b++) {
    start.fill(0);
    let m = 0;
    if (bits === 0) {
      for (let d = 0; d < n; d++) if (present[d]) m++;
      start[1] = m;
    } else {
      for (let d = 0, i = b * bandStride; d < n; d++, i += docStride) if (present[d]) start[(lo[i]! >>> shift) + 1]!++;
      for (let p = 0; p < parts; p++) start[p + 1]! += start[p]!;
    }
    const fillAt = start.slice(0, parts);
    for (let d = 0, i = b * bandStride; d < n; d++, i += docStride) {
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
      // Shared buckets visited by index, in the order they were made, not through a callback per
      // bucket (most are pairs), and without visiting the singletons.
      const shared = table.shared();
      for (let t = 0; t < shared.length; t++) {
        const bk = shared[t]!;
        const size = table.sizeAt(bk);
        stats.sharedBuckets++;
        if (size > stats.largestBucket) stats.largestBucket = size;
        if (members.length < size) members = new Int32Array(size * 2);
        // Docs are in ascending order within a partition, so the members come ascending.
        table.membersAt(bk, docs, base, members);
        // The member list's digest: 32 bits of one hash and 21 of another (53 bits, as before).
        out.push(members, 0, size, murmur3Words(members, 0x51ed27, 0, size), murmur3Words(members, 0x2545f491, 0, size) >>> 11);
      }
    }
  }
  return out.result(stats);
}

/** A fresh set of bucket counters. */
export function emptyCandidateStats(): CandidateStats {
  return { sharedBuckets: 0, repeatedBuckets: 0, largestBucket: 0, candidates: 0 };
}

/**
 * Candidate pairs from precomputed document-major band keys (see {@link docMajorKeys}). Same result
 * as {@link lshCandidates}, and the same `maxPairs` limit.
 */
export function candidatesFromBandKeys(keys: DocMajorKeys, maxPairs = Infinity): { pairs: PairSet; stats: CandidateStats } {
  return candidatesFromBuckets(collectSharedBuckets(docMajorKeys(keys)), keys.n, maxPairs);
}

/** Document-major band keys: document d's key in band b is (`hi`, `lo`) at [d·`bands` + b]. */
export type DocMajorKeys = Pick<BandKeyTable, 'hi' | 'lo' | 'present' | 'n' | 'bands'>;

/** Buckets in one list: bucket k's members (ascending) are `members[start[k] .. start[k + 1])`. */
export interface BucketLists {
  members: Int32Array;
  start: Int32Array;
  /** Buckets. */
  count: number;
}

/** The shared buckets of band keys, kept from one bucketing pass ({@link collectSharedBuckets}). */
export interface SharedBuckets extends BucketLists {
  /** Σ size·(size − 1)/2 over the buckets: an upper bound on the distinct candidate pairs. */
  bound: number;
  stats: CandidateStats;
  /** Bucket i's member-list digest: `digestHi[i]`, `digestLo[i]` (kept for `joinRanges`). */
  digestHi: Int32Array;
  digestLo: Int32Array;
}

/** Buckets appended one by one into growing typed arrays. */
class BucketList {
  members: Int32Array;
  start: Int32Array;
  digestHi: Int32Array;
  digestLo: Int32Array;
  count = 0;
  used = 0;
  bound = 0;

  /** @param expected buckets to make room for at first */
  constructor(expected = 1024) {
    const cap = Math.max(16, expected);
    this.members = new Int32Array(cap * 2);
    this.start = new Int32Array(cap + 1);
    this.digestHi = new Int32Array(cap);
    this.digestLo = new Int32Array(cap);
  }

  /** Why these parameters: called once per bucket met while listing candidates; an options object would be an allocation per bucket. */
  push(from: Int32Array, at: number, size: number, dh: number, dl: number): void {
    if (this.used + size > this.members.length) this.members = grownInt32(this.members, this.used, Math.max(this.used + size, this.members.length * 2));
    if (this.count + 2 > this.start.length) {
      this.start = grownInt32(this.start, this.count + 1, this.start.length * 2);
      this.digestHi = grownInt32(this.digestHi, this.count, this.start.length);
      this.digestLo = grownInt32(this.digestLo, this.count, this.start.length);
    }
    // A loop, not set(subarray(…)): most buckets hold two documents, and a view per bucket cost more.
    const members = this.members;
    for (let i = 0, u = this.used; i < size; i++) members[u + i] = from[at + i]!;
    this.used += size;
    this.digestHi[this.count] = dh;
    this.digestLo[this.count] = dl;
    this.start[++this.count] = this.used;
    this.bound += (size * (size - 1)) / 2;
  }

  result(stats: CandidateStats): SharedBuckets {
    const { members, start, count, bound, digestHi, digestLo } = this;
    return { members, start, count, bound, stats, digestHi, digestLo };
  }
}

/**
 * The buckets of `all` whose member list did not appear earlier in it, with their counters:
 * `all`'s arrays compacted in place (kept buckets keep their order, so nothing is overwritten
 * before it is read).
 */
function keepFirsts(all: SharedBuckets): SharedBuckets {
  const keep = firstOccurrences(all.digestHi, all.digestLo, all.count);
  const { members, start, digestHi, digestLo } = all;
  const stats = { ...all.stats };
  let count = 0;
  let used = 0;
  let bound = 0;
  for (let k = 0, from = 0; k < all.count; k++) {
    const end = start[k + 1]!;
    if (keep[k]) {
      const size = end - from;
      for (let i = from; i < end; i++) members[used++] = members[i]!;
      digestHi[count] = digestHi[k]!;
      digestLo[count] = digestLo[k]!;
      start[++count] = used;
      bound += (size * (size - 1)) / 2;
    } else stats.repeatedBuckets++;
    from = end;
  }
  return { members, start, count, bound, stats, digestHi, digestLo };
}

/**
 * Buckets the band keys once and keeps the shared buckets (at most one member id per document and
 * band, and a bucket repeated from an earlier band is not kept), so that a caller can check the
 * pair bound before storing any pair and then enumerate the pairs without bucketing again (which
 * was half of the LSH stage on a million documents). A large group of copies collides in every
 * band; its pairs are then enumerated once, not once per band. With `fromBand`/`toBand`, only
 * those bands: `joinRanges` joins the results of consecutive band ranges (so the ranges can be
 * bucketed on different threads).
 */
export function collectSharedBuckets(keys: BandKeyTable, fromBand = 0, toBand = keys.bands): SharedBuckets {
  return keepFirsts(allSharedBuckets(keys, fromBand, toBand));
}

/**
 * The distinct candidate pairs (a < b) of buckets kept by {@link collectSharedBuckets} (or joined
 * from band ranges by `joinRanges`), in bucket order. Throws {@link TooManyPairsError} once there
 * are more than `maxPairs` (checked per row, before the pair set grows far past the limit and past
 * memory).
 */
export function candidatesFromBuckets(
  buckets: BucketLists & { stats: CandidateStats },
  n: number,
  maxPairs = Infinity,
): { pairs: PairSet; stats: CandidateStats } {
  const { members, start, count, stats } = buckets;
  const pairs = new PairSet(Math.max(1024, n));
  for (let k = 0; k < count; k++) {
    const end = start[k + 1]!;
    for (let i = start[k]!; i < end; i++) {
      const a = members[i]!;
      for (let j = i + 1; j < end; j++) pairs.add(a, members[j]!);
      if (pairs.size > maxPairs) throw new TooManyPairsError('candidates', pairs.size, maxPairs, stats.largestBucket);
    }
  }
  return { pairs, stats: { ...stats, candidates: pairs.size } };
}
