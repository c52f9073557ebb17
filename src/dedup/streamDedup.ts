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
import { candidatePairBound, candidatesFromBandKeys } from '../lsh/candidates.js';
import { TooManyPairsError } from '../lsh/tooManyPairs.js';
import { bandKeys } from '../lsh/bandKeys.js';
import { ProbeTable, probeJaccardAtLeast } from '../similarity/probeSet.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import { resolveDedupOptions, type DedupOptions, type DedupResult } from './options.js';
import { finishDedup } from './finish.js';
import { createTextSigner } from '../sketch/textSigner.js';
import { SignPool, defaultWorkers } from '../parallel/signPool.js';
import type { SignReply } from '../parallel/signWorker.js';

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
 * Finds near-duplicate pairs and clusters of a corpus streamed from `source` (read twice or more),
 * with the same defaults and result as `dedup()`; with `pairs: false` it throws TooManyPairsError
 * where dedup() would cluster bucket by bucket (more than `maxPairs` candidate pairs, counted per
 * bucket). Verification `exact` streams the corpus again;
 * `estimate` and `none` keep signatures instead (numPerm × 4 bytes per document) and read it once.
 */
export async function dedupStream(source: DocSource, options: StreamDedupOptions = {}): Promise<DedupResult & { extra: StreamDedupExtra }> {
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

  // Pass 1: band keys (and signatures when verifying by estimate).
  const hi = new Growable(1 << 16);
  const lo = new Growable(1 << 16);
  const sigs = keepSigs ? new Growable(1 << 16) : undefined;
  let present = new Uint8Array(1 << 12);
  let n = 0;
  let chars = 0;
  const bh = new Uint32Array(nb);
  const bl = new Uint32Array(nb);
  const take = (r: SignReply): void => {
    if (n + r.count > present.length) {
      const p = new Uint8Array(Math.max(n + r.count, present.length * 2));
      p.set(present);
      present = p;
    }
    present.set(r.present, n);
    hi.append(r.hi!);
    lo.append(r.lo!);
    if (sigs) sigs.append(r.sigs!);
    n += r.count;
    options.onProgress?.('sign', n, 0);
  };
  const pool = workers > 0 ? new SignPool({ ...signerOptions, workers }) : undefined;
  try {
    const inflight: Promise<SignReply>[] = [];
    for await (const batch of batches(source, batchSize)) {
      for (const t of batch) chars += t.length;
      if (pool) {
        inflight.push(pool.run(batch, banding, keepSigs));
        if (inflight.length >= pool.size * 2) take(await inflight.shift()!);
      } else {
        const m = batch.length;
        const r: SignReply = { id: 0, count: m, present: new Uint8Array(m), hi: new Uint32Array(m * nb), lo: new Uint32Array(m * nb) };
        if (keepSigs) r.sigs = new Uint32Array(m * numPerm);
        const row = new Uint32Array(numPerm);
        for (let i = 0; i < m; i++) {
          if (!signer.signInto(batch[i]!, row)) continue;
          r.present[i] = 1;
          r.sigs?.set(row, i * numPerm);
          bandKeys(row, nb, bands.rows, bh, bl);
          r.hi!.set(bh, i * nb);
          r.lo!.set(bl, i * nb);
        }
        take(r);
      }
    }
    while (inflight.length > 0) take(await inflight.shift()!);
  } catch (e) {
    await pool?.close();
    throw e;
  }
  const t1 = performance.now();
  const indexBytes = hi.length * 4 + lo.length * 4 + n + (sigs ? sigs.length * 4 : 0);

  // LSH candidates.
  if (!keepPairs) {
    // dedup() clusters bucket by bucket past the limit; this pipeline cannot (the sets are not in
    // memory), so it says so at once instead of after filling memory with candidate pairs.
    const bound = candidatePairBound(hi.data, lo.data, present, n, nb);
    if (bound > maxPairs) throw new TooManyPairsError('candidates', bound, maxPairs, 0);
  }
  const { pairs: cand, stats: cstats } = candidatesFromBandKeys(hi.data, lo.data, present, n, nb, maxPairs);
  hi.data = lo.data = new Uint32Array(0);
  const t2 = performance.now();

  const empty: number[] = [];
  for (let i = 0; i < n; i++) if (!present[i]) empty.push(i);
  const out: ScoredPair[] = [];
  let passes = 1;
  let peakSetBytes = 0;
  if (!keepSigs) {
    try {
      const r = await verifyExact(source, n, cand.a, cand.b, cand.size, threshold, signer.distinct.bind(signer), pool, budget, batchSize, out, options.onProgress);
      passes += r.passes;
      peakSetBytes = r.peak;
    } finally {
      await pool?.close();
    }
  } else {
    await pool?.close();
    const s = sigs!.data;
    for (let p = 0; p < cand.size; p++) {
      const a = cand.a[p]!;
      const b = cand.b[p]!;
      let eq = 0;
      for (let x = a * numPerm, y = b * numPerm, end = x + numPerm; x < end; x++, y++) if (s[x] === s[y]) eq++;
      const e = eq / numPerm;
      if (verify === 'none' || e >= threshold) out.push({ a, b, similarity: e });
    }
  }
  const result = finishDedup({ n, pairs: out, empty, bands, chars, cstats, keepPairs, maxPairs }, { t0, t1, t2, shingle: 0, sign: t1 - t0 });
  return { ...result, extra: { passes, peakSetBytes, indexBytes } };
}

/**
 * Exact verification of candidate pairs (a < b) by streaming the corpus, holding the sets of first
 * members within `budget` bytes; pairs whose first member did not fit are retried in a later pass.
 * Sets are computed on the worker pool when there is one (in order, a few batches ahead), unsorted
 * (`TextSigner.distinct`): each second member's set is loaded once into a probe table and every held
 * first member is probed against it, with size and count bounds that skip pairs below the threshold.
 */
async function verifyExact(
  source: DocSource,
  n: number,
  pa: Int32Array,
  pb: Int32Array,
  count: number,
  threshold: number,
  /** The distinct (unsorted) fingerprint set of a text. */
  setOf: (text: string) => Uint32Array,
  pool: SignPool | undefined,
  budget: number,
  batchSize: number,
  out: ScoredPair[],
  onProgress: DedupOptions['onProgress'],
): Promise<{ passes: number; peak: number }> {
  // Pairs grouped by second member (CSR), and each document's count of pending pairs as first member.
  const startB = new Int32Array(n + 1);
  for (let p = 0; p < count; p++) startB[pb[p]! + 1]!++;
  for (let d = 0; d < n; d++) startB[d + 1]! += startB[d]!;
  const byB = new Int32Array(count);
  const fill = startB.slice(0, n);
  for (let p = 0; p < count; p++) byB[fill[pb[p]!]!++] = p;
  const pendingAsA = new Int32Array(n);
  for (let p = 0; p < count; p++) pendingAsA[pa[p]!]!++;
  const done = new Uint8Array(count);
  let remaining = count;
  let passes = 0;
  let peak = 0;
  /** May document d need its set in this pass? (Over-approximates: pending only shrinks.) */
  const mayNeed = (d: number): boolean => {
    if (pendingAsA[d]! > 0) return true;
    for (let q = startB[d]!; q < startB[d + 1]!; q++) if (!done[byB[q]!]) return true;
    return false;
  };
  const table = new ProbeTable();
  // Pairs scored on a worker (along with their second member's set) and their similarity (−1: below).
  const assigned = pool ? new Uint8Array(count) : undefined;
  const sim = pool ? new Float64Array(count) : undefined;
  while (remaining > 0) {
    passes++;
    const held = new Map<number, { set: Uint32Array; left: number }>();
    let used = 0;
    let d = 0;
    let scheduled = 0;
    const queue: { base: number; len: number; pos: Int32Array; sets: Promise<(i: number) => Uint32Array> }[] = [];
    const process = async (): Promise<void> => {
      const item = queue.shift()!;
      const get = await item.sets;
      for (let j = 0; j < item.len; j++, d++) {
        const slot = item.pos[j]!;
        let loaded = false;
        for (let q = startB[d]!; q < startB[d + 1]!; q++) {
          const p = byB[q]!;
          if (done[p]) continue;
          const h = held.get(pa[p]!);
          if (!h) continue;
          let s: number;
          if (assigned?.[p]) s = sim![p]!;
          else {
            if (!loaded) {
              // d's set goes into the probe table once for all its held partners.
              table.load(get(slot));
              loaded = true;
            }
            s = probeJaccardAtLeast(table, h.set, threshold);
          }
          if (s >= 0) out.push({ a: pa[p]!, b: d, similarity: s });
          done[p] = 1;
          remaining--;
          pendingAsA[pa[p]!]!--;
          if (--h.left === 0) {
            held.delete(pa[p]!);
            used -= h.set.byteLength;
          }
        }
        if (pendingAsA[d]! > 0 && (used < budget || held.size === 0)) {
          const set = get(slot);
          if (used + set.byteLength <= budget || held.size === 0) {
            // Copy out of the batch's buffer so the rest of it can be freed; with workers, into
            // shared memory, so later batches' workers can score against it without a copy.
            const own = pool ? sharedCopy(set) : set;
            held.set(d, { set: own, left: pendingAsA[d]! });
            used += own.byteLength;
            if (used > peak) peak = used;
          }
        }
      }
      onProgress?.('verify', count - remaining, count);
    };
    for await (const batch of batches(source, batchSize)) {
      const pos = new Int32Array(batch.length).fill(-1);
      const texts: string[] = [];
      // Pairs whose first member is held already (it streamed by in an earlier, processed batch)
      // are scored by the worker that computes this batch's sets: verification runs in parallel.
      // The held set cannot be released before this batch is processed (the pair is still pending).
      const jobB: number[] = [];
      const jobA: Uint32Array[] = [];
      const jobP: number[] = [];
      for (let j = 0; j < batch.length; j++) {
        const doc = scheduled + j;
        if (!mayNeed(doc)) continue;
        pos[j] = texts.length;
        texts.push(batch[j]!);
        if (!pool) continue;
        for (let q = startB[doc]!; q < startB[doc + 1]!; q++) {
          const p = byB[q]!;
          if (done[p] || assigned![p]) continue;
          const h = held.get(pa[p]!);
          if (!h) continue;
          assigned![p] = 1;
          jobB.push(pos[j]!);
          jobA.push(h.set);
          jobP.push(p);
        }
      }
      let sets: Promise<(i: number) => Uint32Array>;
      if (pool && texts.length > 0) {
        const score = jobP.length > 0 ? { b: Int32Array.from(jobB), a: jobA, threshold } : undefined;
        sets = pool.sets(texts, true, score).then((r) => {
          for (let k = 0; k < jobP.length; k++) sim![jobP[k]!] = r.sims![k]!;
          return (i: number) => r.setData!.subarray(r.setStart![i]!, r.setStart![i + 1]!);
        });
      } else {
        const local = texts.map(setOf);
        sets = Promise.resolve((i: number) => local[i]!);
      }
      queue.push({ base: scheduled, len: batch.length, pos, sets });
      scheduled += batch.length;
      if (queue.length > (pool ? pool.size * 2 : 0)) await process();
    }
    while (queue.length > 0) await process();
    if (d !== n) throw new Error(`the document source changed between passes: ${n} documents in the first pass, ${d} now`);
  }
  return { passes, peak };
}

/** A copy of `set` in its own SharedArrayBuffer (posted to workers without copying). */
function sharedCopy(set: Uint32Array): Uint32Array {
  const own = new Uint32Array(new SharedArrayBuffer(set.byteLength));
  own.set(set);
  return own;
}
