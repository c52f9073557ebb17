/**
 * Clustering without a candidate pair list, for when there are too many candidate pairs to hold
 * (thousands of near-identical documents in one bucket): buckets are verified one at a time, and a
 * pair whose documents are already in one cluster is skipped, since its edge cannot change the
 * clusters. The clusters equal those of verifying every candidate pair.
 * @module
 */
import { forEachSharedBucket, type BandKeyTable, type CandidateStats } from '../lsh/candidates.js';
import { UnionFind } from '../cluster/clusters.js';

/**
 * Verifies the shared buckets of the band keys with `score`
 * (the similarity a pair is kept with, or −1), calling `kept(a, b, similarity)` for every kept pair
 * (each joins two clusters, so there are fewer than n). Returns the number of pairs verified.
 */
export function clusterBucketwise(
  keys: BandKeyTable,
  stats: CandidateStats,
  on: {
    score: (a: number, b: number) => number;
    kept: (a: number, b: number, similarity: number) => void;
    onProgress?: (stage: 'verify', done: number, total: number) => void;
  },
): number {
  const { score, kept, onProgress } = on;
  const uf = new UnionFind(keys.n);
  let verified = 0;
  forEachSharedBucket(keys, stats, (members, size) => {
    // A bucket already inside one cluster costs one pass.
    const r0 = uf.find(members[0]!);
    let one = true;
    for (let i = 1; i < size && one; i++) one = uf.find(members[i]!) === r0;
    if (one) return;
    for (let i = 0; i < size; i++) {
      const a = members[i]!;
      for (let j = i + 1; j < size; j++) {
        const b = members[j]!;
        if (uf.find(a) === uf.find(b)) continue;
        verified++;
        const s = score(a, b);
        if (s >= 0) {
          uf.union(a, b);
          kept(a, b, s);
        }
      }
      if (onProgress && (i & 1023) === 0) onProgress('verify', verified, 0);
    }
  });
  return verified;
}
