/**
 * Token ranking for the prefix join ({@link ./prefixJoin.ts}): every fingerprint of a corpus of sets
 * renamed to its rank by document frequency (rarest = 0), each set rewritten as its sorted ranks.
 *
 * The 32-bit path sorts all occurrences once (LSD radix sort, three 11-bit passes, carrying each
 * occurrence's set) and then emits ranks token by token in rank order, so every set comes out
 * sorted without a sort of its own. An earlier version probed a hash table twice per occurrence and
 * radix-sorted each set: on Kijiji char 10-shingles (1.27 M occurrences, mostly distinct) that was
 * two thirds of the whole join.
 * @module
 */

/** Sets renamed to token ranks, sorted, in processing order; `order[p]` is the p-th set's index. */
export interface RankedSets {
  /** The p-th set (processing order: by size, then index) as ascending token ranks. */
  ranked: Uint32Array[];
  /** `order[p]`: the index in the input of the p-th set. */
  order: Int32Array;
  /** Distinct tokens. */
  tokens: number;
  /**
   * Tokens that occur in one set only: exactly the ranks below this number (ranking is by
   * frequency). They can never be shared, so the join neither indexes nor probes them.
   */
  singles: number;
}

/** Values and their owners, side by side: a radix pass reads one such pair of columns and writes another. */
interface RadixColumns {
  v: Uint32Array;
  o: Int32Array;
}

/**
 * One stable counting-sort pass of (value, owner) pairs on the 11 bits of the values at `shift`,
 * from `from` into `to`. A function of its own so that V8 optimizes it at once.
 */
function radixPass(from: RadixColumns, to: RadixColumns, shift: number, bucket: Int32Array): void {
  const { v, o } = from;
  const { v: v2, o: o2 } = to;
  const n = v.length;
  bucket.fill(0);
  for (let k = 0; k < n; k++) bucket[((v[k]! >>> shift) & 0x7ff) + 1]!++;
  for (let b = 0; b < 2048; b++) bucket[b + 1]! += bucket[b]!;
  for (let k = 0; k < n; k++) {
    const x = v[k]!;
    const d = bucket[(x >>> shift) & 0x7ff]!++;
    v2[d] = x;
    o2[d] = o[k]!;
  }
}

/** Indices of the non-empty sets, by size and then index (the join's processing order). */
function processingOrder(lengths: (i: number) => number, n: number): Int32Array {
  const nonEmpty: number[] = [];
  for (let i = 0; i < n; i++) if (lengths(i) > 0) nonEmpty.push(i);
  nonEmpty.sort((u, v) => lengths(u) - lengths(v) || u - v);
  return Int32Array.from(nonEmpty);
}

/**
 * Ranks the tokens of `sets` (sorted unique uint32 fingerprints) by document frequency, ties by
 * fingerprint, and returns the non-empty sets renamed and sorted, in processing order.
 */
export function rankTokens(sets: readonly Uint32Array[]): RankedSets {
  const order = processingOrder((i) => sets[i]!.length, sets.length);
  const m = order.length;
  const offset = new Int32Array(m + 1);
  for (let p = 0; p < m; p++) offset[p + 1] = offset[p]! + sets[order[p]!]!.length;
  const occ = offset[m]!;
  // All occurrences with the set (processing position) each belongs to.
  let val = new Uint32Array(occ);
  let own = new Int32Array(occ);
  for (let p = 0; p < m; p++) {
    val.set(sets[order[p]!]!, offset[p]!);
    own.fill(p, offset[p]!, offset[p + 1]!);
  }
  // Three stable counting passes of 11 bits, low to high: sorted by fingerprint. (Two 16-bit passes
  // scatter to 65,536 places at once and ran slower: cache and TLB misses.)
  const val2 = new Uint32Array(occ);
  const own2 = new Int32Array(occ);
  const bucket = new Int32Array(2049);
  const first = { v: val, o: own };
  const second = { v: val2, o: own2 };
  radixPass(first, second, 0, bucket);
  radixPass(second, first, 11, bucket);
  radixPass(first, second, 22, bucket);
  val = val2;
  own = own2;
  // Runs of equal fingerprints are the distinct tokens, in fingerprint order.
  let tokens = 0;
  for (let k = 0; k < occ; k++) if (k === 0 || val[k] !== val[k - 1]) tokens++;
  const runStart = new Int32Array(tokens + 1);
  let maxCount = 0;
  for (let k = 0, d = 0; k < occ; k++) {
    if (k === 0 || val[k] !== val[k - 1]) runStart[d++] = k;
  }
  runStart[tokens] = occ;
  for (let d = 0; d < tokens; d++) maxCount = Math.max(maxCount, runStart[d + 1]! - runStart[d]!);
  // Stable counting sort of the tokens by frequency: rank order = (frequency, fingerprint).
  const byCount = new Int32Array(maxCount + 2);
  for (let d = 0; d < tokens; d++) byCount[runStart[d + 1]! - runStart[d]! + 1]!++;
  for (let c = 0; c <= maxCount; c++) byCount[c + 1]! += byCount[c]!;
  const singles = byCount[2]!;
  const byRank = new Int32Array(tokens);
  for (let d = 0; d < tokens; d++) byRank[byCount[runStart[d + 1]! - runStart[d]!]!++] = d;
  // Emit ranks in increasing order into each set's slice: every set comes out sorted.
  const buf = new Uint32Array(occ);
  const fill = offset.slice(0, m);
  for (let r = 0; r < tokens; r++) {
    const d = byRank[r]!;
    for (let k = runStart[d]!, e = runStart[d + 1]!; k < e; k++) buf[fill[own[k]!]!++] = r;
  }
  const ranked: Uint32Array[] = new Array(m);
  for (let p = 0; p < m; p++) ranked[p] = buf.subarray(offset[p]!, offset[p + 1]!);
  return { ranked, order, tokens, singles };
}

/**
 * {@link rankTokens} for 64-bit fingerprints: all occurrences sorted once (native BigUint64Array
 * sort), runs counted, each set's tokens found by binary search in the distinct values and sorted.
 */
export function rankTokens64(sets: readonly BigUint64Array[]): RankedSets {
  const order = processingOrder((i) => sets[i]!.length, sets.length);
  const m = order.length;
  let occurrences = 0;
  for (let p = 0; p < m; p++) occurrences += sets[order[p]!]!.length;
  const all = new BigUint64Array(occurrences);
  let o = 0;
  for (let p = 0; p < m; p++) {
    all.set(sets[order[p]!]!, o);
    o += sets[order[p]!]!.length;
  }
  all.sort();
  let tokens = 0;
  for (let k = 0; k < occurrences; k++) if (k === 0 || all[k] !== all[k - 1]) tokens++;
  const distinct = new BigUint64Array(tokens);
  const count = new Int32Array(tokens);
  for (let k = 0, d = -1; k < occurrences; k++) {
    if (k === 0 || all[k] !== all[k - 1]) distinct[++d] = all[k]!;
    count[d]!++;
  }
  // Rank by (frequency, fingerprint): distinct is in fingerprint order, so ties keep index order.
  const idx = new Int32Array(tokens);
  for (let k = 0; k < tokens; k++) idx[k] = k;
  idx.sort((u, v) => count[u]! - count[v]! || u - v);
  const rank = new Int32Array(tokens);
  let singles = 0;
  for (let r = 0; r < tokens; r++) {
    rank[idx[r]!] = r;
    if (count[idx[r]!] === 1) singles = r + 1;
  }
  const ranked: Uint32Array[] = new Array(m);
  for (let p = 0; p < m; p++) {
    const set = sets[order[p]!]!;
    const r = new Uint32Array(set.length);
    for (let k = 0; k < set.length; k++) {
      const v = set[k]!;
      let lo = 0;
      let hi = tokens - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (distinct[mid]! < v) lo = mid + 1;
        else hi = mid;
      }
      r[k] = rank[lo]!;
    }
    r.sort();
    ranked[p] = r;
  }
  return { ranked, order, tokens, singles };
}
