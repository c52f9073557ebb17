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
import { foldCopies, pairsWithinGroups, type FoldedCopies } from './copyGroups.js';
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
import { Growable } from '../common/growable.js';

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
  const signerOptions = { shingle: options.shingle, minhash: options.minhash };
  const signer = createTextSigner(signerOptions);
  const bands = chooseBands(threshold, signer.numPerm, options.lsh);
  const keepSigs = verify !== 'exact';

  // Pass 1: band keys (and signatures when verifying by estimate). With two workers or more, the
  // band keys are bucketed there (band ranges in parallel), so they are kept in shared memory.
  const signed = new SignedColumns(bands.bands, workers >= 2, keepSigs, options.onProgress);
  const pool = workers > 0 ? new SignPool({ ...signerOptions, workers }) : undefined;
  const run: StreamRun = { source, pool, signer, banding: { bands: bands.bands, rows: bands.rows }, keepSigs, batchSize };
  const ranged = await closingOnError(pool, () => signPass(run, signed));
  const { n, chars, keys, sigs } = signed;
  const t1 = performance.now();
  const table = keys.table();
  const present = table.present;
  const empty: number[] = [];
  for (let i = 0; i < n; i++) if (!present[i]) empty.push(i);
  // Copies (the same text, so the same band keys) go through LSH and verification as one document:
  // a group of m copies then costs one, not m(m−1)/2 candidate pairs. Hidden from the buckets here.
  const copies = foldCopies(table, signed.textHashes.data);
  const indexBytes = n * (bands.bands * 8 + 1 + 8) + (sigs ? sigs.length * 4 : 0);

  // LSH candidates, grouped by second member (as verification reads them): the bands bucketed
  // on the workers by ranges (or here), joined, and the pairs listed here.
  // Too many candidates: the workers (or the range files) are not needed any more.
  const candidates = await closingOnError(pool, () => streamCandidates(table, pool, n, { keepPairs, maxPairs }));
  const groups = candidates.groups;
  let cstats = candidates.cstats;
  keys.release();
  const t2 = performance.now();

  const out = new PairColumns();
  const v = { passes: 1, peakSetBytes: 0, setDocs: 0 };
  if (!keepSigs) {
    try {
      const feed = typeof source === 'function' ? textFeed(source, pool, signer, batchSize) : rangedFeed(ranged!, n, { pool, signer, batchSize });
      const r = await verifyExact({ feed, n, groups, threshold, budget: options.memoryBudget ?? 1 << 30, out, onProgress: options.onProgress });
      v.passes += r.passes;
      v.peakSetBytes = r.peak;
      v.setDocs = r.setDocs;
    } finally {
      await closePool(pool);
    }
  } else {
    await closePool(pool);
    verifyBySignatures({ sigs: sigs!.data, numPerm: signer.numPerm, groups, n, verify, threshold, out });
  }
  let pairs: PairColumns | ScoredPair[] = out;
  if (copies) ({ pairs, cstats } = pairsOfCopies(out, copies, groups, cstats));
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
  return Object.assign(result, { extra: { passes: v.passes, peakSetBytes: v.peakSetBytes, indexBytes, setDocs: v.setDocs, ranged: ranged !== undefined } });
}

/** What signing pass 1 reads with. */
interface StreamRun {
  source: DocSource | RangedSource;
  pool: SignPool | undefined;
  signer: TextSigner;
  banding: { bands: number; rows: number };
  keepSigs: boolean;
  batchSize: number;
}

/** The workers closed (without them, the range files), as every way out of the run does. */
async function closePool(pool: SignPool | undefined): Promise<void> {
  await pool?.close();
  if (!pool) closeRangeFiles();
}

/** Runs `step`; when it throws, closes the workers (or the range files) first. */
async function closingOnError<T>(pool: SignPool | undefined, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    await closePool(pool);
    throw e;
  }
}

/**
 * Pass 1's columns, filled a reply at a time: each document's band keys, its signature (verifying
 * by estimate), and two 32-bit hashes of its text (identical texts are folded into one document
 * before LSH, as dedup() folds copies).
 */
class SignedColumns {
  readonly keys: BandKeyColumns;
  readonly sigs: Growable<Uint32Array> | undefined;
  readonly textHashes: Growable<Uint32Array>;
  n = 0;
  chars = 0;
  private readonly onProgress: StreamDedupOptions['onProgress'];

  constructor(bands: number, shared: boolean, keepSigs: boolean, onProgress: StreamDedupOptions['onProgress']) {
    this.keys = new BandKeyColumns(bands, shared);
    this.sigs = keepSigs ? new Growable<Uint32Array>((n) => new Uint32Array(n), 1 << 16) : undefined;
    this.textHashes = new Growable<Uint32Array>((n) => new Uint32Array(n), 1 << 16);
    this.onProgress = onProgress;
  }

  take(r: Pick<SignReply, 'count' | 'present' | 'hi' | 'lo' | 'sigs' | 'th'> & { expected?: number }): void {
    this.textHashes.append(r.th!);
    // The first range's density sizes the key columns (with some slack) instead of doubling.
    if (this.n === 0 && r.expected !== undefined) this.keys.reserve(Math.min(Math.ceil(r.expected * 1.1), 1 << 24));
    this.keys.append(r.present, r.hi!, r.lo!, r.count);
    if (this.sigs) this.sigs.append(r.sigs!);
    this.n += r.count;
    this.onProgress?.('sign', this.n, 0);
  }
}

/** Pass 1: every document signed (by the workers, or here) into `signed`. A ranged source gives back its index of ranges. */
async function signPass(run: StreamRun, signed: SignedColumns): Promise<RangedIndex | undefined> {
  const { source, pool, signer, banding, keepSigs } = run;
  if (typeof source !== 'function') {
    return await signRanges(source, { pool, signer, banding, withSignatures: keepSigs }, (r) => {
      signed.chars += r.chars;
      signed.take(r);
    });
  }
  const inflight: Promise<SignReply>[] = [];
  for await (const batch of batches(source, run.batchSize)) {
    for (const t of batch) signed.chars += t.length;
    if (pool) {
      inflight.push(pool.run(batch, banding, keepSigs));
      if (inflight.length >= pool.size * 2) signed.take(await inflight.shift()!);
    } else signed.take(signHere(batch, signer, banding, keepSigs));
  }
  while (inflight.length > 0) signed.take(await inflight.shift()!);
  return undefined;
}

/** A batch signed on this thread, as a worker would sign it. */
function signHere(batch: string[], signer: TextSigner, banding: { bands: number; rows: number }, keepSigs: boolean): SignReply {
  const nb = banding.bands;
  const numPerm = signer.numPerm;
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
    bandKeys(row, nb, banding.rows, r.hi!, r.lo!, i, m);
  }
  return r;
}

/**
 * The candidate pairs grouped by second member. dedup() clusters bucket by bucket past the limit;
 * this pipeline cannot (the sets are not in memory), so it says so at once (maxBound) instead of
 * after filling memory with candidate pairs.
 */
async function streamCandidates(
  table: BandKeyTable,
  pool: SignPool | undefined,
  n: number,
  limits: { keepPairs: boolean; maxPairs: number },
): Promise<{ groups: SecondGroups; cstats: CandidateStats }> {
  const ranges = pool?.bucketRanges(table);
  const parts = ranges ? await Promise.all(ranges) : [collectSharedBuckets(table)];
  const joined = joinRanges(parts, limits.keepPairs ? Infinity : limits.maxPairs);
  const groups = groupsFromBuckets(joined, n, limits.maxPairs, joined.stats.largestBucket);
  return { groups, cstats: { ...joined.stats, candidates: groups.count } };
}

/** What verification by signatures (`estimate`, `none`) reads and writes. */
interface SignatureVerify {
  sigs: Uint32Array;
  numPerm: number;
  groups: SecondGroups;
  n: number;
  verify: DedupOptions['verify'];
  threshold: number;
  out: PairColumns;
}

/** Each candidate pair scored by its signatures' agreement, kept at or above the threshold (all of them with `none`). */
function verifyBySignatures({ sigs: s, numPerm, groups, n, verify, threshold, out }: SignatureVerify): void {
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

/** Pairs between the groups' first documents become pairs of groups, and candidates are counted per document pair. */
function pairsOfCopies(out: PairColumns, copies: FoldedCopies, groups: SecondGroups, cstats: CandidateStats): { pairs: ScoredPair[]; cstats: CandidateStats } {
  const g = copies.groupOf;
  const pairs = Array.from({ length: out.size }, (_, p) => ({ a: g[out.a[p]!]!, b: g[out.b[p]!]!, similarity: out.similarity[p]! }));
  let across = 0;
  const n = g.length;
  for (let b = 0; b < n; b++) for (let q = groups.start[b]!; q < groups.start[b + 1]!; q++) across += copies.size(g[groups.first[q]!]!) * copies.size(g[b]!);
  return { pairs, cstats: { ...cstats, candidates: pairsWithinGroups(copies.groups) + across } };
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
          return arenaSets(texts, { signer, table, arena, score });
        },
      };
    }
  }
  // Without workers, this thread does what a worker does, with its own fallback table.
  const table = new ProbeTable();
  return { pass, workers: pool?.size ?? 0, placesText: signer.arenaText };
}
