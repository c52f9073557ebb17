/**
 * The write step of the online index: for a batch of prepared documents (distinct ids, under the
 * write lock), find each one's near duplicates among the indexed documents and the earlier
 * documents of the batch, write all of them in one store call, and tell the observers.
 * @module
 */
import type { PutEntry } from '../store/types.js';
import type { IndexContext } from './context.js';
import { byScore } from './scoring.js';
import type { Match, Prepared } from './types.js';
import { filterCandidates } from './search/filters.js';
import { candidateScreen } from './search/screen.js';

/** Looks up, scores and writes prepared documents, as if added one by one; returns each one's matches. */
export async function insertPrepared(ctx: IndexContext, prepared: Prepared[]): Promise<Match[][]> {
  const { keyMaker, scorer, store } = ctx;
  const now = ctx.now();
  const seen = new Map<string, number>();
  prepared.forEach((p, i) => seen.set(p.id, i));
  const t = ctx.manifest.threshold;
  const [found, old] = await Promise.all([
    store.lookup(prepared.map((p) => keyMaker.bandPart(p.keys)), ctx.maxCandidates, undefined, candidateScreen(ctx, prepared, t)),
    ctx.raw.get(prepared.map((p) => p.id)),
  ]);
  const results: Match[][] = [];
  const entries: PutEntry[] = [];
  // Within the batch: band key -> earlier batch items.
  const local = new BatchKeys(prepared.length * keyMaker.bands);
  for (let i = 0; i < prepared.length; i++) {
    const p = prepared[i]!;
    // Stored versions of ids that this or an earlier batch item replaces are not reported.
    const stale = (id: string): boolean => {
      const j = seen.get(id);
      return j !== undefined && j <= i;
    };
    const matches = scorer.score(p, filterCandidates(found[i]!, p.filter), { min: t, skip: stale, limit: p.limit });
    const earlier = new Set<number>();
    const bk = keyMaker.bandPart(p.keys);
    // Earlier documents of the batch that are already expired (added with a past expiry) are not reported.
    for (let b = 0; b < bk.length; b++) {
      for (let e = local.first(bk[b]!); e >= 0; e = local.next(e)) {
        const j = local.item(e);
        if (!(prepared[j]!.expiresAt! <= now)) earlier.add(j);
      }
    }
    if (earlier.size) {
      const cands = [...earlier].map((j) => ({ id: prepared[j]!.id, record: entries[j]!.record }));
      matches.push(...scorer.score(p, filterCandidates(cands, p.filter), { min: t }));
      matches.sort(byScore);
    }
    if (p.limit !== undefined && matches.length > p.limit) matches.length = p.limit;
    for (let b = 0; b < bk.length; b++) local.add(bk[b]!, i);
    const oldRec = old[i];
    entries.push({
      id: p.id,
      record: ctx.preparer.recordOf(p),
      keys: p.keys,
      ...(oldRec ? { oldKeys: ctx.preparer.keysOfRecord(oldRec) } : {}),
      ...(p.expiresAt !== undefined ? { expiresAt: p.expiresAt } : {}),
      ...(p.screen ? { screen: p.screen } : {}),
    });
    results.push(matches);
  }
  await ctx.raw.put(entries);
  ctx.counters.adds += prepared.length;
  await ctx.notify({ kind: 'add', documents: prepared.map((p, i) => ({ id: p.id, duplicates: results[i]!.map((m) => m.id), replaced: old[i] != null })) });
  return results;
}

/**
 * Band key → the batch items that have it, in the order added: open addressing over typed arrays
 * with each key's items chained (a Map of arrays made an object per key, 16 per document).
 */
class BatchKeys {
  private readonly slotKey: Float64Array;
  /** Per slot: its key's first and last entry (−1: empty). */
  private readonly head: Int32Array;
  private readonly tail: Int32Array;
  /** Per entry: its item and the next entry of the same key (−1: none). */
  private readonly items: Int32Array;
  private readonly nexts: Int32Array;
  private readonly mask: number;
  private readonly bits = new Float64Array(1);
  private readonly words = new Uint32Array(this.bits.buffer);
  private entries = 0;

  /** Room for `most` (key, item) entries. */
  constructor(most: number) {
    let size = 16;
    while (size < 2 * most) size *= 2;
    this.mask = size - 1;
    this.slotKey = new Float64Array(size);
    this.head = new Int32Array(size).fill(-1);
    this.tail = new Int32Array(size);
    this.items = new Int32Array(Math.max(1, most));
    this.nexts = new Int32Array(Math.max(1, most));
  }

  private slot(key: number): number {
    this.bits[0] = key;
    let h = Math.imul(this.words[0]! ^ Math.imul(this.words[1]!, 0x9e3779b1), 0x85ebca6b);
    h ^= h >>> 15;
    let s = h & this.mask;
    while (this.head[s] !== -1 && this.slotKey[s] !== key) s = (s + 1) & this.mask;
    return s;
  }

  /** Records that item `item` has `key`. */
  add(key: number, item: number): void {
    const s = this.slot(key);
    const e = this.entries++;
    this.items[e] = item;
    this.nexts[e] = -1;
    if (this.head[s] === -1) {
      this.slotKey[s] = key;
      this.head[s] = e;
    } else this.nexts[this.tail[s]!] = e;
    this.tail[s] = e;
  }

  /** The first entry of `key`, or −1. */
  first(key: number): number {
    return this.head[this.slot(key)]!;
  }

  /** The entry after `e` of the same key, or −1. */
  next(e: number): number {
    return this.nexts[e]!;
  }

  /** The item of entry `e`. */
  item(e: number): number {
    return this.items[e]!;
  }
}
