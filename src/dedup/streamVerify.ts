/**
 * Exact verification of the streaming pipeline: the corpus goes by again in document order, in
 * batches; the fingerprint set of a document that is the first member of pending candidates is
 * held until its last partner has gone by, within a memory budget, and pairs whose first member
 * did not fit wait for another pass. Where the sets come from (texts read on this thread, or lines
 * that workers read themselves) is a {@link SetFeed}.
 * @module
 */
import { ProbeTable, probeJaccardAtLeast } from '../similarity/probeSet.js';
import type { ScoredPair } from '../similarity/bruteForce.js';
import type { SignRequest } from '../parallel/signWorker.js';
import type { DedupOptions } from './options.js';
import { SharedSetPool, blockBytes } from './sharedSetPool.js';

/** The sets of some documents of a batch, by their place among the documents asked for. */
export type SetGetter = (slot: number) => Uint32Array;

/** One batch of consecutive documents, able to produce the unsorted fingerprint sets of some of them. */
export interface SetBatch {
  /** Documents in the batch. */
  len: number;
  /**
   * The sets of the batch's documents at `need` (indices into the batch, ascending); with `score`,
   * also scores those pairs on the same worker (see `SignRequest.score`, `b` indexing `need`).
   */
  sets(need: number[], score: SignRequest['score'] | undefined): Promise<{ get: SetGetter; sims?: Float64Array }>;
}

/** A pass over the corpus for verification: its documents in order, in batches. */
export interface SetFeed {
  /** Starts a pass. */
  pass(): AsyncIterable<SetBatch>;
  /** Can sets be scored where they are made (on workers)? Then held sets live in shared memory. */
  parallel: boolean;
  /** Worker threads behind it (for read-ahead). */
  workers: number;
}

/**
 * Exact verification of candidate pairs (a < b), holding the sets of first members within `budget`
 * bytes; pairs whose first member did not fit are retried in a later pass. Each second member's set
 * is loaded once into a probe table and every held first member is probed against it, with size and
 * count bounds that skip pairs below the threshold. With a parallel feed, a pair whose first member
 * is already held when its second member's batch is requested is scored on the worker that makes
 * that batch's sets.
 */
export async function verifyExact(
  feed: SetFeed,
  n: number,
  pa: Int32Array,
  pb: Int32Array,
  count: number,
  threshold: number,
  budget: number,
  out: ScoredPair[],
  onProgress: DedupOptions['onProgress'],
): Promise<{ passes: number; peak: number; setDocs: number }> {
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
  let setDocs = 0;
  /** May document d need its set in this pass? (Over-approximates: pending only shrinks.) */
  const mayNeed = (d: number): boolean => {
    if (pendingAsA[d]! > 0) return true;
    for (let q = startB[d]!; q < startB[d + 1]!; q++) if (!done[byB[q]!]) return true;
    return false;
  };
  const table = new ProbeTable();
  const parallel = feed.parallel;
  // Pairs scored on a worker (along with their second member's set) and their similarity (−1: below).
  const assigned = parallel ? new Uint8Array(count) : undefined;
  const pool = parallel ? new SharedSetPool() : undefined;
  /** Bytes a held set takes: with workers, its pooled block. */
  const cost = (set: Uint32Array): number => (parallel ? blockBytes(set.byteLength) : set.byteLength);
  const sim = parallel ? new Float64Array(count) : undefined;
  while (remaining > 0) {
    passes++;
    const held = new Map<number, { set: Uint32Array; left: number }>();
    let used = 0;
    let d = 0;
    let scheduled = 0;
    const queue: { len: number; pos: Int32Array; sets: Promise<SetGetter> }[] = [];
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
            used -= cost(h.set);
            // Every pair reading this set has been scored (its last one just now): reuse its block.
            pool?.release(h.set);
          }
        }
        if (pendingAsA[d]! > 0 && (used < budget || held.size === 0)) {
          const set = get(slot);
          if (used + cost(set) <= budget || held.size === 0) {
            // With workers, copy into shared memory, so later batches' workers can score against it
            // without a copy (and the batch's buffer can be freed).
            const own = pool ? pool.copy(set) : set;
            held.set(d, { set: own, left: pendingAsA[d]! });
            used += cost(own);
            if (used > peak) peak = used;
          }
        }
      }
      onProgress?.('verify', count - remaining, count);
    };
    for await (const batch of feed.pass()) {
      const pos = new Int32Array(batch.len).fill(-1);
      const need: number[] = [];
      // Pairs whose first member is held already (it went by in an earlier, processed batch) are
      // scored by the worker that makes this batch's sets: verification runs in parallel. The held
      // set cannot be released before this batch is processed (the pair is still pending).
      const jobB: number[] = [];
      const jobA: Uint32Array[] = [];
      const jobP: number[] = [];
      for (let j = 0; j < batch.len; j++) {
        const doc = scheduled + j;
        if (doc >= n || !mayNeed(doc)) continue;
        pos[j] = need.length;
        need.push(j);
        if (!parallel) continue;
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
      setDocs += need.length;
      const score = jobP.length > 0 ? { b: Int32Array.from(jobB), a: jobA, threshold } : undefined;
      const sets =
        need.length === 0
          ? Promise.resolve<SetGetter>(() => new Uint32Array(0))
          : batch.sets(need, score).then((r) => {
              for (let k = 0; k < jobP.length; k++) sim![jobP[k]!] = r.sims![k]!;
              return r.get;
            });
      queue.push({ len: batch.len, pos, sets });
      scheduled += batch.len;
      if (queue.length > (parallel ? feed.workers * 2 : 0)) await process();
    }
    while (queue.length > 0) await process();
    if (d !== n) throw new Error(`the document source changed between passes: ${n} documents in the first pass, ${d} now`);
  }
  return { passes, peak, setDocs };
}
