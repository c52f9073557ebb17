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
import type { SignReply } from '../parallel/signWorker.js';
import type { ScoreJob, SetTargets } from '../parallel/rangeJobs.js';
import { SetArena } from '../parallel/setArena.js';
import type { DedupOptions } from './options.js';

/** The sets of some documents of a batch, by their place among the documents asked for. */
export type SetGetter = (slot: number) => Uint32Array;

/**
 * What {@link SetBatch.sets} gives: the sets themselves (made on this thread), or a worker's reply
 * saying how long the sets it wrote into the arena's blocks are (see `SignRequest.arena`).
 */
export type BatchSets = { get: SetGetter } | { reply: Pick<SignReply, 'setLen' | 'setData' | 'setStart' | 'sims'> };

/** One batch of consecutive documents, able to produce the unsorted fingerprint sets of some of them. */
export interface SetBatch {
  /** Documents in the batch. */
  len: number;
  /**
   * An upper bound of the set size of the batch's document `j` (the size of the block its set is
   * written to; a set that turns out longer is returned in the reply instead).
   */
  bound(j: number): number;
  /**
   * The sets of the batch's documents at `need` (indices into the batch, ascending). A parallel feed
   * is given `arena`, the blocks the sets go to (one per need), and may be given `score`, pairs to
   * score on the same worker (`b` indexing `need`).
   */
  sets(need: number[], arena?: SetTargets, score?: ScoreJob): Promise<BatchSets>;
}

/** A pass over the corpus for verification: its documents in order, in batches. */
export interface SetFeed {
  /** Starts a pass. */
  pass(): AsyncIterable<SetBatch>;
  /** Can sets be made and scored on workers? Then sets live in a shared {@link SetArena}. */
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
  const arena = parallel ? new SetArena() : undefined;
  const sim = parallel ? new Float64Array(count) : undefined;
  /** A held set; `block` is its arena handle (−1 without workers). */
  type Held = { set: Uint32Array; left: number; block: number };
  while (remaining > 0) {
    passes++;
    const held = new Map<number, Held>();
    let used = 0;
    let d = 0;
    let scheduled = 0;
    const queue: { len: number; pos: Int32Array; blocks: Int32Array | undefined; sets: Promise<SetGetter> }[] = [];
    const process = async (): Promise<void> => {
      const item = queue.shift()!;
      const get = await item.sets;
      const blocks = item.blocks;
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
            // Every pair reading this set has been scored (its last one just now): reuse its block.
            if (arena) {
              used -= arena.bytes(h.block);
              arena.release(h.block);
            } else used -= h.set.byteLength;
          }
        }
        if (pendingAsA[d]! > 0 && (used < budget || held.size === 0)) {
          const set = get(slot);
          const bytes = arena ? arena.bytes(blocks![slot]!) : set.byteLength;
          if (used + bytes <= budget || held.size === 0) {
            // With workers the set stays where the worker wrote it, in shared memory, where later
            // batches' workers score against it.
            held.set(d, { set, left: pendingAsA[d]!, block: arena ? blocks![slot]! : -1 });
            if (blocks) blocks[slot] = -1;
            used += bytes;
            if (used > peak) peak = used;
          }
        }
      }
      if (blocks) for (const b of blocks) if (b >= 0) arena!.release(b);
      onProgress?.('verify', count - remaining, count);
    };
    for await (const batch of feed.pass()) {
      const pos = new Int32Array(batch.len).fill(-1);
      const need: number[] = [];
      // Pairs whose first member is held already (it went by in an earlier, processed batch) are
      // scored by the worker that makes this batch's sets: verification runs in parallel. The held
      // set cannot be released before this batch is processed (the pair is still pending).
      const jobB: number[] = [];
      const jobA: number[] = [];
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
          jobA.push(h.block, h.set.length);
          jobP.push(p);
        }
      }
      setDocs += need.length;
      let blocks: Int32Array | undefined;
      let sets: Promise<SetGetter>;
      if (need.length === 0) sets = Promise.resolve(() => new Uint32Array(0));
      else if (!arena) sets = batch.sets(need).then((r) => (r as { get: SetGetter }).get);
      else {
        // A block per needed set, sized by the feed's bound; the worker writes the set into it.
        const blk = (blocks = new Int32Array(need.length));
        const targets = new Int32Array(3 * need.length);
        for (let i = 0; i < need.length; i++) {
          blk[i] = arena.alloc(batch.bound(need[i]!));
          arena.ref(blk[i]!, arena.capacity(blk[i]!), targets, i);
        }
        let score: ScoreJob | undefined;
        if (jobP.length > 0) {
          const a = new Int32Array(3 * jobP.length);
          for (let k = 0; k < jobP.length; k++) arena.ref(jobA[2 * k]!, jobA[2 * k + 1]!, a, k);
          score = { b: Int32Array.from(jobB), a, threshold };
        }
        sets = batch.sets(need, { chunks: arena.chunks, targets }, score).then((r) => {
          const reply = (r as Extract<BatchSets, { reply: unknown }>).reply;
          for (let k = 0; k < jobP.length; k++) sim![jobP[k]!] = reply.sims![k]!;
          return arenaSets(arena, blk, reply);
        });
      }
      queue.push({ len: batch.len, pos, blocks, sets });
      scheduled += batch.len;
      if (queue.length > (parallel ? feed.workers * 2 : 0)) await process();
    }
    while (queue.length > 0) await process();
    if (d !== n) throw new Error(`the document source changed between passes: ${n} documents in the first pass, ${d} now`);
  }
  return { passes, peak, setDocs };
}

/**
 * The sets a worker wrote into `blocks` (one per needed document), as views of the arena. A set
 * longer than its block came back in the reply: it gets a block of its size (`blocks` is updated).
 */
function arenaSets(arena: SetArena, blocks: Int32Array, reply: Pick<SignReply, 'setLen' | 'setData' | 'setStart'>): SetGetter {
  const sets: Uint32Array[] = [];
  const len = reply.setLen!;
  for (let i = 0; i < blocks.length; i++) {
    const m = len[i]!;
    if (m > arena.capacity(blocks[i]!)) {
      arena.release(blocks[i]!);
      blocks[i] = arena.alloc(m);
      arena.view(blocks[i]!, m).set(reply.setData!.subarray(reply.setStart![i]!, reply.setStart![i + 1]!));
    }
    sets.push(arena.view(blocks[i]!, m));
  }
  return (slot) => sets[slot]!;
}
