/**
 * The memory store's expiry index: document id → expiry (ms since the epoch) in a Map, and a binary
 * min-heap of (expiry, id) entries over it. Replacing or removing an id leaves its old heap entry
 * behind (an entry counts only while the Map still holds the same expiry for its id); the heap is
 * rebuilt from the Map when stale entries outnumber live ones. Finding the expired ids visits only
 * the heap entries at or before `now` (a subtree walk), never the whole index.
 * @module
 */

/** Expiries of the documents of one memory store. */
export class ExpiryHeap {
  private readonly at = new Map<string, number>();
  private hAt: number[] = [];
  private hId: string[] = [];

  /** Records `id`'s expiry (`undefined`: it has none). */
  set(id: string, at: number | undefined): void {
    if (at === undefined) {
      this.at.delete(id);
      return;
    }
    if (this.at.get(id) === at) return;
    this.at.set(id, at);
    this.push(at, id);
    if (this.hAt.length > 2 * this.at.size + 64) this.rebuild();
  }

  /** Every id with an expiry, with it. */
  entries(): [string, number][] {
    return [...this.at];
  }

  /** True when `id` has an expiry at or before `now`. */
  expired(id: string, now: number): boolean {
    const at = this.at.get(id);
    return at !== undefined && at <= now;
  }

  /** Forgets `id` (removed). */
  delete(id: string): void {
    if (this.at.delete(id) && this.hAt.length > 2 * this.at.size + 64) this.rebuild();
  }

  /** Up to `limit` ids expired at `now`, earliest first. */
  due(now: number, limit: number): string[] {
    const found = this.walk(now);
    found.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    return found.slice(0, limit).map((e) => e[1]);
  }

  /** How many ids are expired at `now`. */
  count(now: number): number {
    return this.walk(now).length;
  }

  /** Live entries with an expiry ≤ now (each id once). */
  private walk(now: number): [number, string][] {
    const out: [number, string][] = [];
    const seen = new Set<string>();
    const stack = this.hAt.length && this.hAt[0]! <= now ? [0] : [];
    while (stack.length) {
      const i = stack.pop()!;
      const id = this.hId[i]!;
      const at = this.hAt[i]!;
      if (this.at.get(id) === at && !seen.has(id)) {
        seen.add(id);
        out.push([at, id]);
      }
      for (const c of [2 * i + 1, 2 * i + 2]) if (c < this.hAt.length && this.hAt[c]! <= now) stack.push(c);
    }
    return out;
  }

  private push(at: number, id: string): void {
    const { hAt, hId } = this;
    let i = hAt.length;
    hAt.push(at);
    hId.push(id);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (hAt[p]! <= at) break;
      hAt[i] = hAt[p]!;
      hId[i] = hId[p]!;
      i = p;
    }
    hAt[i] = at;
    hId[i] = id;
  }

  private rebuild(): void {
    const entries = [...this.at].sort((a, b) => a[1] - b[1]);
    // A sorted array is a valid min-heap.
    this.hAt = entries.map((e) => e[1]);
    this.hId = entries.map((e) => e[0]);
  }
}
