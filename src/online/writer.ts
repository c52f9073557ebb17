/**
 * How the online index writes: one write at a time per process, under the store's cross-process
 * lock when it has one ({@link WriteLock}), and group commit for single adds ({@link GroupCommit}):
 * adds that arrive while a write is running are written together, in arrival order, as one batch
 * (one transaction or script call), with results as if added one by one.
 * @module
 */
import type { NearDupStore } from '../store/types.js';
import type { Match, Prepared } from './types.js';

/** Serializes the writes of one index. */
export class WriteLock {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly store: NearDupStore) {}

  /**
   * Runs `fn` after every earlier write of this process, holding the store's cross-process write
   * lock when it has one: lookups and the insert that follows are atomic for every writer.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const store = this.store;
    const locked = store.exclusive ? () => store.exclusive!(fn) : fn;
    const run = this.chain.then(locked, locked);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Settles when every write started so far has (whether it succeeded or not). */
  idle(): Promise<unknown> {
    return this.chain;
  }
}

/** A batch holds at most this many adds. */
const MAX_BATCH = 1000;

/** Collects single adds into batches written under the lock. */
export class GroupCommit {
  private queue: { p: Prepared; resolve: (m: Match[]) => void; reject: (e: unknown) => void }[] = [];
  private draining = false;

  /** `insert` writes a batch of distinct ids under the lock and returns each one's matches. */
  constructor(
    private readonly lock: WriteLock,
    private readonly insert: (batch: Prepared[]) => Promise<Match[][]>,
  ) {}

  /** Queues one prepared add; resolves to its matches once its batch is written. */
  add(p: Prepared): Promise<Match[]> {
    return new Promise<Match[]>((resolve, reject) => {
      this.queue.push({ p, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        // drain() settles every add it takes; a failure here means the store's write lock could not
        // be taken (store unavailable or busy): the adds waiting for it fail with that error.
        this.lock
          .exclusive(() => this.drain())
          .catch((e: unknown) => {
            this.draining = false;
            for (const t of this.queue.splice(0)) t.reject(e);
          });
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const ids = new Set<string>();
      const take: typeof this.queue = [];
      // A batch holds each id once; a repeated id waits for the next round.
      while (take.length < MAX_BATCH && this.queue.length && !ids.has(this.queue[0]!.p.id)) {
        const q = this.queue.shift()!;
        ids.add(q.p.id);
        take.push(q);
      }
      try {
        const res = await this.insert(take.map((t) => t.p));
        take.forEach((t, i) => t.resolve(res[i]!));
      } catch (e) {
        for (const t of take) t.reject(e);
      }
    }
    this.draining = false;
  }
}
