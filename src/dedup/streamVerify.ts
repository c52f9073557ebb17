/**
 * Exact verification of the streaming pipeline: the corpus goes by again in document order, in
 * batches; the fingerprint set of a document that is the first member of pending candidates is
 * held until its last partner has gone by, within a memory budget, and pairs whose first member
 * did not fit wait for another pass. Sets live in a shared set arena (src/parallel/setArena.ts):
 * whoever makes a batch's sets (a worker, or this thread without workers) writes them into blocks
 * allocated here and scores the batch's pairs against held sets where they lie. Where the texts
 * come from (read on this thread, or lines that workers read themselves) is a {@link SetFeed}.
 *
 * Why this file is long: one pass's bookkeeping (held sets, batches in flight, pairs given out and
 * retired) is the state of one class, ExactVerifier; its methods read and change the same per-document
 * lines, and a split would spread that state across modules.
 * @module
 */
import { ProbeTable, probeJaccardAtLeast, probeJaccardAtLeastAt } from '../similarity/probeSet.js';
import type { PairColumns } from './pairColumns.js';
import type { SignReply } from '../parallel/signWorker.js';
import type { ScoreJob, SetTargets } from '../parallel/rangeJobs.js';
import { ArenaFullError, SetArena } from '../parallel/setArena.js';
import { inArenaTable, scratchLayout } from '../parallel/arenaSets.js';
import type { DedupOptions } from './options.js';
import { grownInt32 } from '../lsh/grownInt32.js';
import type { SecondGroups } from '../lsh/secondGroups.js';

/** The sets of some documents of a batch, by their place among the documents asked for. */
export interface BatchSetsView {
  /** The set (a view of the arena, made when asked for: most sets are only ever read by workers). */
  set(slot: number): Uint32Array;
  /** Its length, without a view. */
  length(slot: number): number;
}

const NO_SETS: BatchSetsView = { set: () => new Uint32Array(0), length: () => 0 };

/**
 * What {@link SetBatch.sets} gives: how long the sets written into the arena's blocks are, the sets
 * too long for their blocks, and the similarities of the pairs scored (see `SignRequest.arena`).
 */
export type BatchSets = Pick<SignReply, 'setLen' | 'setData' | 'setStart' | 'sims'>;

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
   * Writes the sets of the batch's documents at `need` (indices into the batch, ascending) into the
   * blocks of `arena` (one per need), and scores the pairs of `score` (`b` indexing `need`) where
   * the sets are made: on a worker (`arenaSets` in src/parallel/arenaSets.ts), or on this thread.
   */
  sets(need: number[], arena: SetTargets, score: ScoreJob | undefined): Promise<BatchSets>;
}

/** A pass over the corpus for verification: its documents in order, in batches. */
export interface SetFeed {
  /** Starts a pass. */
  pass(): AsyncIterable<SetBatch>;
  /** Worker threads behind it (for read-ahead; 0: the sets are made on this thread). */
  workers: number;
  /**
   * Whether the sets' maker places texts in the batch's scratch block (`TextSigner.arenaText`): the
   * block then has room for them. Default true.
   */
  placesText?: boolean;
}

/** What {@link verifyExact} verifies, and where. */
export interface ExactVerification {
  /** The corpus, pass after pass. */
  feed: SetFeed;
  /** Documents in the corpus. */
  n: number;
  /** The candidate pairs (a < b), grouped by second member over all n documents. */
  groups: SecondGroups;
  /** Jaccard threshold: pairs below it are not written. */
  threshold: number;
  /** Bytes of held first-member sets per pass. */
  budget: number;
  /** Where verified pairs go. */
  out: Pick<PairColumns, 'add'>;
  /** Progress of the `verify` phase. */
  onProgress?: DedupOptions['onProgress'];
  /** Caps the shared memory of the sets (default 4 GiB; for tests). */
  arenaBytes?: number;
}

/** What {@link verifyExact} did: passes over the corpus, the most bytes of sets held, sets made. */
export interface ExactVerified {
  passes: number;
  peak: number;
  setDocs: number;
}

/**
 * Exact verification of candidate pairs (a < b), grouped by second member over all n documents
 * (`groupsFromBuckets`, or `groupBySecond` of a pair list), holding the sets of first members within `budget`
 * bytes of arena blocks; pairs whose first member did not fit are retried in a later pass. A pair
 * whose first member is already held when its second member's batch is requested is scored where
 * that batch's sets are made, its second member's set loaded into a probe table once for all its
 * partners, with size and count bounds that skip pairs below the threshold; the few whose first
 * member became held while the batch was in flight are scored here.
 */
export async function verifyExact(run: ExactVerification): Promise<ExactVerified> {
  const { n, groups } = run;
  if (groups.start.length !== n + 1) throw new RangeError(`verifyExact: pairs grouped over ${groups.start.length - 1} documents, not ${n}`);
  const v = new ExactVerifier(run);
  while (v.remaining > 0) await v.pass();
  return { passes: v.passes, peak: v.peak, setDocs: v.setDocs };
}

/** A batch sent for its sets, until it is collected. */
interface Sent {
  len: number;
  /** Per document of the batch: its place among the sets asked for (−1: none asked). */
  pos: Int32Array;
  /** The arena block of each set asked for, then the scratch block. */
  blocks: Int32Array;
  sets: Promise<BatchSetsView>;
  /** Held blocks to release once this batch is collected. */
  retired: number[];
}

/** The state of one {@link verifyExact} run: per document, per pair, and the pass under way. */
class ExactVerifier {
  /**
   * Per document d, one cache line for what the main thread reads of a pair's first member when it
   * schedules the pair, in no useful order (separate arrays of a million documents, or the arena's
   * offset of a block, cost a cache miss each): [4d] LEFT: pairs left with d as first member (while
   * its set is held: not yet given out to be scored against it), [4d+1] HELD: 1 + the arena block of
   * d's held set (0: not held, or every pair given out), [4d+2] LEN: the held set's length,
   * [4d+3] AT: its offset in the arena, in values. Collecting a batch reads only the pair's own
   * entries (in order), never its first member's line: the counts are kept when a pair is given
   * out, and a held set's block is released once the batches that may read it are collected
   * (see `retire`).
   */
  private readonly doc: Int32Array;
  // Pair q (first member first[q]) is the q-th pair of its second member's group (a CSR by second
  // member, see SecondGroups), so the flags and similarities below are read in order as the
  // documents go by, not at random (a cache miss each, twice per pair, on the main thread).
  private readonly done: Uint8Array;
  /** Pairs scored where their second member's set is made, and their similarity (−1: below). */
  private readonly assigned: Uint8Array;
  private readonly sim: Float64Array;
  private readonly table = new ProbeTable();
  private readonly arena: SetArena;
  // Rare pairs are probed here where both sets lie, by kernels on the arena's memory, the table in
  // the scratch block of the batch being processed (its worker is done with it): copying both sets
  // into a table of this thread's own was 0.1 s on 1M documents.
  private readonly inArena: ReturnType<typeof inArenaTable>;
  // A batch's pairs scored where its sets are made (pair, its second member's place among the sets
  // made, and its first member's held set as (offset, length)), reused between batches.
  private jobP = new Int32Array(1024);
  private jobB = new Int32Array(1024);
  private jobA = new Int32Array(2048);
  remaining: number;
  passes = 0;
  peak = 0;
  setDocs = 0;
  // The pass under way: sets held and their bytes, the next document to collect and to schedule,
  // the batches in flight.
  private heldCount = 0;
  private used = 0;
  private d = 0;
  private scheduled = 0;
  private queue: Sent[] = [];
  /**
   * Held sets whose every pair is given out, to release after the batch being scheduled (null
   * between batches) is collected: batches in flight may still read them.
   */
  private building: number[] | null = null;

  constructor(private readonly run: ExactVerification) {
    const { n, groups } = run;
    this.doc = new Int32Array(4 * n);
    for (let q = 0; q < groups.count; q++) this.doc[4 * groups.first[q]!]!++;
    this.done = new Uint8Array(groups.count);
    this.assigned = new Uint8Array(groups.count);
    this.sim = new Float64Array(groups.count);
    this.remaining = groups.count;
    this.arena = new SetArena(run.arenaBytes);
    this.inArena = inArenaTable(this.arena.memory);
  }

  /** One pass over the corpus: every pair whose first member's set is held in it is scored. */
  async pass(): Promise<void> {
    this.passes++;
    this.heldCount = 0;
    this.used = 0;
    this.d = 0;
    this.scheduled = 0;
    this.queue = [];
    const { feed, n } = this.run;
    for await (const batch of feed.pass()) {
      this.queue.push(await this.send(batch));
      this.scheduled += batch.len;
      if (this.queue.length > feed.workers * 2) await this.collect();
    }
    while (this.queue.length > 0) await this.collect();
    if (this.d !== n) throw new Error(`the document source changed between passes: ${n} documents in the first pass, ${this.d} now`);
  }

  /** May document d need its set in this pass? (Over-approximates: pending only shrinks.) */
  private mayNeed(d: number): boolean {
    if (this.doc[4 * d]! > 0) return true;
    const { start } = this.run.groups;
    for (let q = start[d]!; q < start[d + 1]!; q++) if (!this.done[q]) return true;
    return false;
  }

  /** Loads the `m` values of block `h` into the in-arena table, in block `scratch`; false when it cannot (no kernels, no block, no room). */
  private loadInArena(h: number, m: number, scratch: number): boolean {
    const inArena = this.inArena;
    if (!inArena || h < 0 || scratch < 0) return false;
    inArena.place(this.arena.offset(scratch) * 4, this.arena.bytes(scratch));
    if (!inArena.table.fits(m)) return false;
    inArena.table.loadAt(this.arena.offset(h) * 4, m);
    return true;
  }

  /** Releases held block `h` now, or after the last batch that may read it is collected. */
  private retire(h: number): void {
    const after = this.building ?? this.queue[this.queue.length - 1]?.retired;
    if (after) after.push(h);
    else this.free(h);
  }

  /** Counts one pair of held document line `at` as given out; its last one retires the set. */
  private givenOut(at: number): void {
    const doc = this.doc;
    if (--doc[at]! === 0) {
      this.retire(doc[at + 1]! - 1);
      doc[at + 1] = 0;
    }
  }

  private free(h: number): void {
    this.heldCount--;
    this.used -= this.arena.bytes(h);
    this.arena.release(h);
  }

  /** Collects the oldest batch in flight: its documents' pairs are written, and the sets they need later held. */
  private async collect(): Promise<void> {
    const item = this.queue.shift()!;
    const sets = await item.sets;
    // The worker has read every held set this batch was given: those no later batch reads are free.
    for (const h of item.retired) this.free(h);
    const blocks = item.blocks;
    for (let j = 0; j < item.len; j++, this.d++) {
      const slot = item.pos[j]!;
      this.scoreSecond(slot, sets, blocks);
      if (this.doc[4 * this.d]! > 0) this.hold(slot, sets, blocks);
    }
    for (const b of blocks) if (b >= 0) this.arena.release(b);
    this.run.onProgress?.('verify', this.run.groups.count - this.remaining, this.run.groups.count);
  }

  /** Writes the pairs of document `this.d` as second member: scored by the batch's maker, or here. */
  private scoreSecond(slot: number, sets: BatchSetsView, blocks: Int32Array): void {
    const { doc, done, assigned, sim, arena } = this;
    const { groups, threshold, out } = this.run;
    const { start, first } = groups;
    const d = this.d;
    const arenaTable = this.inArena?.table ?? null;
    let loaded: ProbeTable | null = null;
    for (let p = start[d]!; p < start[d + 1]!; p++) {
      if (done[p]) continue;
      const a = first[p]!;
      let s: number;
      if (assigned[p]) s = sim[p]!;
      else {
        const at = 4 * a;
        if (doc[at + 1] === 0) continue;
        // Rare: a held set that was not held yet when d's batch was sent (it was in flight).
        if (!loaded) {
          // d's set goes into a probe table once for all its held partners.
          if (this.loadInArena(blocks[slot]!, sets.length(slot), blocks[blocks.length - 1]!)) loaded = arenaTable!;
          else {
            this.table.load(sets.set(slot));
            loaded = this.table;
          }
        }
        s = loaded === arenaTable
          ? probeJaccardAtLeastAt(loaded, doc[at + 3]! * 4, doc[at + 2]!, threshold)
          : probeJaccardAtLeast(loaded, arena.view(doc[at + 1]! - 1, doc[at + 2]!), threshold);
        this.givenOut(at);
      }
      if (s >= 0) out.add(a, d, s);
      done[p] = 1;
      this.remaining--;
    }
  }

  /** Holds the set of document `this.d` (pairs left as first member) for this pass, when the budget has room. */
  private hold(slot: number, sets: BatchSetsView, blocks: Int32Array): void {
    const { doc, arena, run } = this;
    const at = 4 * this.d;
    if (blocks[slot]! < 0 && (this.used < run.budget || this.heldCount === 0)) {
      // A set that found no block when it came back (see arenaSetsOf): held sets may have been
      // released since. Without one now, it waits for a later pass, unless nothing is held
      // (then no pass would ever hold it).
      const set = sets.set(slot);
      try {
        blocks[slot] = arena.alloc(set.length);
        arena.view(blocks[slot]!, set.length).set(set);
      } catch (e) {
        if (!(e instanceof ArenaFullError) || this.heldCount === 0) throw e;
      }
    }
    if (!(blocks[slot]! >= 0) || (this.used >= run.budget && this.heldCount > 0)) return;
    const bytes = arena.bytes(blocks[slot]!);
    if (this.used + bytes > run.budget && this.heldCount > 0) return;
    // The set stays where it was written, in shared memory, where later batches are scored
    // against it; all d's pending pairs are scored in this pass.
    doc[at + 1] = blocks[slot]! + 1;
    doc[at + 2] = sets.length(slot);
    doc[at + 3] = arena.offset(blocks[slot]!);
    blocks[slot] = -1;
    this.heldCount++;
    this.used += bytes;
    if (this.used > this.peak) this.peak = this.used;
  }

  /** An arena block, or −1 when the arena is full (without an await per block). */
  private tryBlock(values: number): number {
    try {
      return this.arena.alloc(values);
    } catch (e) {
      if (!(e instanceof ArenaFullError)) throw e;
      return -1;
    }
  }

  /** An arena block; when the arena is full, batches in flight are collected first (freeing theirs). */
  private async block(values: number): Promise<number> {
    for (;;) {
      try {
        return this.arena.alloc(values);
      } catch (e) {
        if (!(e instanceof ArenaFullError) || this.queue.length === 0) throw e;
        await this.collect();
      }
    }
  }

  /**
   * Picks the documents of `batch` whose sets this pass may need (their places in `pos`, in order in
   * the returned list) and gives out the pairs whose first member is held already (it went by in an
   * earlier, processed batch): the maker of this batch's sets scores them, so verification runs in
   * parallel. A held set whose last pair is given out here is released once this batch is collected.
   */
  private gather(batch: SetBatch, pos: Int32Array): { need: number[]; jobs: number } {
    const { doc, done, assigned } = this;
    const { n, groups } = this.run;
    const { start, first } = groups;
    const need: number[] = [];
    let jobs = 0;
    for (let j = 0; j < batch.len; j++) {
      const b = this.scheduled + j;
      if (b >= n || !this.mayNeed(b)) continue;
      pos[j] = need.length;
      need.push(j);
      const most = jobs + start[b + 1]! - start[b]!;
      if (most > this.jobP.length) {
        this.jobP = grownInt32(this.jobP, jobs, most * 2);
        this.jobB = grownInt32(this.jobB, jobs, most * 2);
        this.jobA = grownInt32(this.jobA, 2 * jobs, most * 4);
      }
      const { jobP, jobB, jobA } = this;
      for (let p = start[b]!; p < start[b + 1]!; p++) {
        if (done[p] || assigned[p]) continue;
        const at = 4 * first[p]!;
        if (doc[at + 1] === 0) continue;
        assigned[p] = 1;
        jobP[jobs] = p;
        jobB[jobs] = pos[j]!;
        jobA[2 * jobs] = doc[at + 3]!;
        jobA[2 * jobs++ + 1] = doc[at + 2]!;
        this.givenOut(at); // retired after this batch (`building`)
      }
    }
    return { need, jobs };
  }

  /** Asks for the sets `batch`'s documents need in this pass, with the pairs their maker scores. */
  private async send(batch: SetBatch): Promise<Sent> {
    const pos = new Int32Array(batch.len).fill(-1);
    const retired: number[] = (this.building = []);
    const { need, jobs } = this.gather(batch, pos);
    this.setDocs += need.length;
    // A block per needed set, sized by the feed's bound, where the set is written; the last block
    // is the scratch of the probe table that makes them, sized for the largest bound.
    const blocks = new Int32Array(need.length + 1).fill(-1);
    let sets: Promise<BatchSetsView> = Promise.resolve(NO_SETS);
    if (need.length > 0) {
      const arena = this.arena;
      const targets = new Int32Array(2 * need.length);
      let most = 0;
      for (let i = 0; i < need.length; i++) {
        const bound = batch.bound(need[i]!);
        if (bound > most) most = bound;
        blocks[i] = this.tryBlock(bound);
        if (blocks[i]! < 0) blocks[i] = await this.block(bound);
        arena.ref(blocks[i]!, arena.capacity(blocks[i]!), targets, i);
      }
      const layout = scratchLayout(most, this.run.feed.placesText ?? true);
      const scratch = (blocks[need.length] = await this.block(layout.bytes / 4));
      // The pairs' held sets stay where they are until this batch is collected (`retired`), even
      // if blocks above waited for batches in flight.
      const scored = this.jobP.slice(0, jobs);
      const score: ScoreJob | undefined = jobs > 0
        ? { b: this.jobB.slice(0, jobs), a: this.jobA.slice(0, 2 * jobs), threshold: this.run.threshold }
        : undefined;
      const where = {
        memory: arena.memory,
        id: arena.id,
        targets,
        scratch: [arena.offset(scratch), arena.bytes(scratch), layout.tableBytes] as [number, number, number],
      };
      const sim = this.sim;
      sets = batch.sets(need, where, score).then((reply) => {
        for (let k = 0; k < scored.length; k++) sim[scored[k]!] = reply.sims![k]!;
        return arenaSetsOf(arena, blocks, reply);
      });
    }
    this.building = null;
    return { len: batch.len, pos, blocks, sets, retired };
  }
}

/**
 * The sets a worker wrote into `blocks` (one per needed document, then its scratch block), as views
 * of the arena. A set longer than its block came back in the reply: it gets a block of its size
 * (`blocks` is updated) or, when the arena is full, stays in the reply, without a block (-1): it is
 * then scored against held sets here but not held, and its pairs as first member wait for a later
 * pass. (Batches in flight cannot be collected first, as scheduling does: this batch is older.)
 */
function arenaSetsOf(arena: SetArena, blocks: Int32Array, reply: BatchSets): BatchSetsView {
  const len = reply.setLen!;
  const start = reply.setStart!;
  let loose: Map<number, Uint32Array> | undefined;
  for (let i = 0; i < len.length; i++) {
    const m = len[i]!;
    if (start[i + 1]! > start[i]!) {
      const set = reply.setData!.subarray(start[i]!, start[i + 1]!);
      arena.release(blocks[i]!);
      blocks[i] = -1;
      try {
        blocks[i] = arena.alloc(m);
        arena.view(blocks[i]!, m).set(set);
      } catch (e) {
        if (!(e instanceof ArenaFullError)) throw e;
        (loose ??= new Map()).set(i, set);
      }
    }
  }
  return {
    set: (slot) => (blocks[slot]! >= 0 ? arena.view(blocks[slot]!, len[slot]!) : loose!.get(slot)!),
    length: (slot) => len[slot]!,
  };
}
