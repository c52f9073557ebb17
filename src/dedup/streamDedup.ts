/**
 * The streaming two-pass pipeline for corpora larger than memory:
 *
 * 1. Sign every document on worker threads, keeping only the LSH band keys (8 bytes per band per
 *    document), then find candidate pairs.
 * 2. Stream the corpus again and verify candidates exactly: the fingerprint set of a document that
 *    is the first member of pending candidates is held until its last partner has streamed by,
 *    within a memory budget; candidates whose first member did not fit wait for another pass.
 *
 * Memory is O(documents × bands + candidates + budget), independent of the total number of
 * shingles. The output is the same as `dedup()` on the same texts and options, for any worker count.
 * @module
 */
import { chooseBands } from '../lsh/params.js';
import { collectSharedBuckets, type CandidateStats } from '../lsh/candidates.js';
import { joinRanges } from '../lsh/joinRanges.js';
import { groupsFromBuckets, type SecondGroups } from '../lsh/secondGroups.js';
import { bandKeys } from '../lsh/bandKeys.js';
import { BandKeyColumns } from '../lsh/bandKeyColumns.js';
import { PairColumns } from './pairColumns.js';
import { CopyFinder, HashIndex, pairsWithinGroups, type CopyGroups } from './copyGroups.js';
import { textHash2 } from '../hash/murmur3.js';
import type { BandKeyTable } from '../lsh/candidates.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import { resolveDedupOptions, type DedupOptions, type DedupResult } from './options.js';
import { finishDedup } from './finish.js';
import { createTextSigner } from '../sketch/textSigner.js';
import { SignPool, defaultWorkers } from '../parallel/signPool.js';
import type { SignReply } from '../parallel/signWorker.js';
import { closeRangeFiles } from '../parallel/rangeJobs.js';
import { arenaSets } from '../parallel/arenaSets.js';
import { ProbeTable } from '../similarity/probeSet.js';
import { verifyExact, type SetBatch, type SetFeed } from './streamVerify.js';
import { rangedFeed, signRanges, type RangedIndex, type RangedSource } from './rangedSource.js';
import type { TextSigner } from '../sketch/textSigner.js';

/**
 * A re-readable corpus: each call starts a new pass and must yield the same documents in the same
 * order, one text at a time or in arrays (batches).
 */
export type DocSource = () => AsyncIterable<string | string[]> | Iterable<string | string[]>;

/** Options of {@link dedupStream}: those of `dedup()` plus parallelism and memory. */
export interface StreamDedupOptions extends DedupOptions {
  /** Signing worker threads. Default: all cores. 0 signs in this thread. */
  workers?: number;
  /** Documents per batch sent to a worker. Default 1024. */
  batchSize?: number;
  /** Bytes of fingerprint sets held at once during verification. Default 1 GiB. */
  memoryBudget?: number;
}

/** Counters of the streaming pipeline beyond those of `dedup()`. */
export interface StreamDedupExtra {
  /** Passes over the input (1 signing pass + verification passes). */
  passes: number;
  /** Largest number of bytes of fingerprint sets held at once during verification. */
  peakSetBytes: number;
  /** Bytes of the in-memory index after pass 1 (band keys + flags), and per document. */
  indexBytes: number;
  /** Fingerprint sets built during verification (documents read again, over all its passes). */
  setDocs: number;
  /** Whether the workers read the input themselves, in byte ranges ({@link RangedSource}). */
  ranged: boolean;
}

async function* batches(source: DocSource, size: number): AsyncGenerator<string[]> {
  let batch: string[] = [];
  for await (const item of source()) {
    if (typeof item === 'string') {
      batch.push(item);
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    } else {
      if (batch.length > 0) {
        yield batch;
        batch = [];
      }
      // Re-chunk large arrays so no worker gets a huge batch.
      for (let i = 0; i < item.length; i += size) yield item.length <= size ? item : item.slice(i, i + size);
    }
  }
  if (batch.length > 0) yield batch;
}

class Growable {
  data: Uint32Array;
  length = 0;
  constructor(cap: number) {
    this.data = new Uint32Array(cap);
  }
  append(src: Uint32Array): void {
    if (this.length + src.length > this.data.length) {
      const d = new Uint32Array(Math.max(this.length + src.length, this.data.length * 2));
      d.set(this.data.subarray(0, this.length));
      this.data = d;
    }
    this.data.set(src, this.length);
    this.length += src.length;
  }
}

/**
 * Finds near-duplicate pairs and clusters of a corpus streamed from `source` (read twice or more):
 * texts read on this thread ({@link DocSource}), or a line-format file that the workers read
 * themselves in byte ranges ({@link RangedSource}, the faster route: nothing is parsed twice on
 * one thread, and verification reads only the lines it needs),
 * with the same defaults and result as `dedup()`; with `pairs: false` it throws TooManyPairsError
 * where dedup() would cluster bucket by bucket (more than `maxPairs` candidate pairs, counted per
 * bucket). Verification `exact` streams the corpus again;
 * `estimate` and `none` keep signatures instead (numPerm × 4 bytes per document) and read it once.
 */
export async function dedupStream(source: DocSource | RangedSource, options: StreamDedupOptions = {}): Promise<DedupResult & { extra: StreamDedupExtra }> {
  const t0 = performance.now();
  const { threshold, verify, keepPairs, maxPairs } = resolveDedupOptions(options);
  const workers = options.workers ?? defaultWorkers();
  const batchSize = options.batchSize ?? 1024;
  const budget = options.memoryBudget ?? 1 << 30;
  const signerOptions = { shingle: options.shingle, minhash: options.minhash };
  const signer = createTextSigner(signerOptions);
  const numPerm = signer.numPerm;
  const bands = chooseBands(threshold, numPerm, options.lsh);
  const nb = bands.bands;
  const banding = { bands: nb, rows: bands.rows };
  const keepSigs = verify !== 'exact';

  // Pass 1: band keys (and signatures when verifying by estimate). With two workers or more, the
  // band keys are bucketed there (band ranges in parallel), so they are kept in shared memory.
  const keys = new BandKeyColumns(nb, workers >= 2);
  const sigs = keepSigs ? new Growable(1 << 16) : undefined;
  let n = 0;
  let chars = 0;
  // Two 32-bit hashes of each text: identical texts are folded into one document before LSH, as dedup() folds copies.
  const textHashes = new Growable(1 << 16);
  const take = (r: Pick<SignReply, 'count' | 'present' | 'hi' | 'lo' | 'sigs' | 'th'> & { expected?: number }): void => {
    textHashes.append(r.th!);
    // The first range's density sizes the key columns (with some slack) instead of doubling.
    if (n === 0 && r.expected !== undefined) keys.reserve(Math.min(Math.ceil(r.expected * 1.1), 1 << 24));
    keys.append(r.present, r.hi!, r.lo!, r.count);
    if (sigs) sigs.append(r.sigs!);
    n += r.count;
    options.onProgress?.('sign', n, 0);
  };
  const pool = workers > 0 ? new SignPool({ ...signerOptions, workers }) : undefined;
  let ranged: RangedIndex | undefined;
  try {
    if (typeof source !== 'function') {
      ranged = await signRanges(source, { pool, signer, banding, withSignatures: keepSigs }, (r) => {
        chars += r.chars;
        take(r);
      });
    } else {
      const inflight: Promise<SignReply>[] = [];
      for await (const batch of batches(source, batchSize)) {
        for (const t of batch) chars += t.length;
        if (pool) {
          inflight.push(pool.run(batch, banding, keepSigs));
          if (inflight.length >= pool.size * 2) take(await inflight.shift()!);
        } else {
          const m = batch.length;
          const r: SignReply = {
            id: 0,
            count: m,
            present: new Uint8Array(m),
            hi: new Uint32Array(m * nb),
            lo: new Uint32Array(m * nb),
            th: new Uint32Array(2 * m),
          };
          if (keepSigs) r.sigs = new Uint32Array(m * numPerm);
          const row = new Uint32Array(numPerm);
          for (let i = 0; i < m; i++) {
            textHash2(r.th!, i, batch[i]!);
            if (!signer.signInto(batch[i]!, row)) continue;
            r.present[i] = 1;
            r.sigs?.set(row, i * numPerm);
            bandKeys(row, nb, bands.rows, r.hi!, r.lo!, i, m);
          }
          take(r);
        }
      }
      while (inflight.length > 0) take(await inflight.shift()!);
    }
  } catch (e) {
    await pool?.close();
    if (!pool) closeRangeFiles();
    throw e;
  }
  const t1 = performance.now();
  const table = keys.table();
  const present = table.present;
  const empty: number[] = [];
  for (let i = 0; i < n; i++) if (!present[i]) empty.push(i);
  // Copies (the same text, so the same band keys) go through LSH and verification as one document:
  // a group of m copies then costs one, not m(m−1)/2 candidate pairs. Hidden from the buckets here.
  const copies = foldCopies(table, textHashes.data);
  const indexBytes = n * (nb * 8 + 1 + 8) + (sigs ? sigs.length * 4 : 0);

  // LSH candidates, grouped by second member (as verification reads them): the bands bucketed
  // on the workers by ranges (or here), joined, and the pairs listed here.
  let groups: SecondGroups;
  let cstats: CandidateStats;
  try {
    // dedup() clusters bucket by bucket past the limit; this pipeline cannot (the sets are not in
    // memory), so it says so at once (maxBound) instead of after filling memory with candidate pairs.
    const ranges = pool?.bucketRanges(table);
    const parts = ranges ? await Promise.all(ranges) : [collectSharedBuckets(table)];
    const joined = joinRanges(parts, keepPairs ? Infinity : maxPairs);
    groups = groupsFromBuckets(joined, n, maxPairs, joined.stats.largestBucket);
    cstats = { ...joined.stats, candidates: groups.count };
  } catch (e) {
    // Too many candidates: the workers (or the range files) are not needed any more.
    await pool?.close();
    if (!pool) closeRangeFiles();
    throw e;
  }
  keys.release();
  const t2 = performance.now();

  const out = new PairColumns();
  let passes = 1;
  let peakSetBytes = 0;
  let setDocs = 0;
  if (!keepSigs) {
    try {
      const feed = typeof source === 'function' ? textFeed(source, pool, signer, batchSize) : rangedFeed(ranged!, n, { pool, signer, batchSize });
      const r = await verifyExact({ feed, n, groups, threshold, budget, out, onProgress: options.onProgress });
      passes += r.passes;
      peakSetBytes = r.peak;
      setDocs = r.setDocs;
    } finally {
      await pool?.close();
      if (!pool) closeRangeFiles();
    }
  } else {
    await pool?.close();
    if (!pool) closeRangeFiles();
    const s = sigs!.data;
    const { start, first } = groups;
    for (let b = 0; b < n; b++) {
      for (let q = start[b]!, end = start[b + 1]!; q < end; q++) {
        const a = first[q]!;
        let eq = 0;
        for (let x = a * numPerm, y = b * numPerm, end = x + numPerm; x < end; x++, y++) if (s[x] === s[y]) eq++;
        const e = eq / numPerm;
        if (verify === 'none' || e >= threshold) out.add(a, b, e);
      }
    }
  }
  let pairs: PairColumns | ScoredPair[] = out;
  if (copies) {
    // Pairs between the groups' first documents become pairs of groups, counted per document pair.
    const g = copies.groupOf;
    pairs = Array.from({ length: out.size }, (_, p) => ({ a: g[out.a[p]!]!, b: g[out.b[p]!]!, similarity: out.similarity[p]! }));
    let across = 0;
    for (let b = 0; b < n; b++) for (let q = groups.start[b]!; q < groups.start[b + 1]!; q++) across += copies.size(g[groups.first[q]!]!) * copies.size(g[b]!);
    cstats = { ...cstats, candidates: pairsWithinGroups(copies.groups) + across };
  }
  const result = finishDedup({
    n,
    pairs,
    empty,
    bands,
    chars,
    cstats,
    keepPairs,
    maxPairs,
    estimateRecall: verify === 'exact',
    ...(copies ? { groups: copies.groups } : {}),
  }, { t0, t1, t2, shingle: 0, sign: t1 - t0 });
  // Assigned, not spread: a spread would read `pairs`, which makes its objects (see pairColumns.ts).
  return Object.assign(result, { extra: { passes, peakSetBytes, indexBytes, setDocs, ranged: ranged !== undefined } });
}

/**
 * Groups documents with the same text (both text hashes and every band key equal; documents without
 * shingles stay alone), numbered in order of first appearance as dedup()'s copy groups are. Every
 * document but the first of its group is hidden from the buckets (`present` 0). Undefined when no
 * document has a copy.
 */
function foldCopies(table: BandKeyTable, th: Uint32Array): { groups: CopyGroups; groupOf: Int32Array; size: (g: number) => number } | undefined {
  const { n, hi, lo, present, bands, bandStride, docStride } = table;
  const index = new HashIndex(n);
  const finder = new CopyFinder(n);
  const firstOf: number[] = [];
  let folded = 0;
  const same = (a: number, b: number): boolean => {
    if (th[2 * a] !== th[2 * b] || th[2 * a + 1] !== th[2 * b + 1]) return false;
    for (let k = 0; k < bands; k++) {
      const x = k * bandStride + a * docStride;
      const y = k * bandStride + b * docStride;
      if (hi[x] !== hi[y] || lo[x] !== lo[y]) return false;
    }
    return true;
  };
  const hidden: number[] = [];
  for (let i = 0; i < n; i++) {
    if (!present[i]) {
      firstOf.push(i);
      finder.startGroup();
      continue;
    }
    const g = index.find(th[2 * i]!, (v) => same(firstOf[v]!, i));
    if (g >= 0) {
      finder.join(g);
      hidden.push(i);
      folded++;
    } else {
      index.insert(th[2 * i]!, finder.startGroup());
      firstOf.push(i);
    }
  }
  if (folded === 0) return undefined;
  for (const i of hidden) present[i] = 0;
  const groups = finder.result();
  const groupOf = new Int32Array(n);
  for (let g = 0; g < groups.groups; g++) for (let j = groups.start[g]!; j < groups.start[g + 1]!; j++) groupOf[groups.members[j]!] = g;
  return { groups, groupOf, size: (g) => groups.start[g + 1]! - groups.start[g]! };
}

/** Verification's feed over texts read on this thread: the needed ones go to the pool (or are set here, as a worker would). */
function textFeed(source: DocSource, pool: SignPool | undefined, signer: TextSigner, batchSize: number): SetFeed {
  async function* pass(): AsyncGenerator<SetBatch> {
    for await (const batch of batches(source, batchSize)) {
      yield {
        len: batch.length,
        // A text of L UTF-16 units has at most L shingles (before normalization; longer sets come back whole).
        bound: (j) => batch[j]!.length,
        sets: async (need, arena, score) => {
          const texts = need.map((j) => batch[j]!);
          if (pool) return pool.sets(texts, arena, score);
          return arenaSets(texts, signer, table, arena, score);
        },
      };
    }
  }
  // Without workers, this thread does what a worker does, with its own fallback table.
  const table = new ProbeTable();
  return { pass, workers: pool?.size ?? 0, placesText: signer.arenaText };
}
