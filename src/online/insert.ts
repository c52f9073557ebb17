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

/** Looks up, scores and writes prepared documents, as if added one by one; returns each one's matches. */
export async function insertPrepared(ctx: IndexContext, prepared: Prepared[]): Promise<Match[][]> {
  const { keyMaker, scorer, store } = ctx;
  const now = ctx.now();
  const seen = new Map<string, number>();
  prepared.forEach((p, i) => seen.set(p.id, i));
  const t = ctx.manifest.threshold;
  const [found, old] = await Promise.all([
    store.lookup(prepared.map((p) => keyMaker.bandPart(p.keys)), ctx.maxCandidates),
    ctx.raw.get(prepared.map((p) => p.id)),
  ]);
  const results: Match[][] = [];
  const entries: PutEntry[] = [];
  // Within the batch: band key -> earlier batch items (a small numeric map, batch-local).
  const local = new Map<number, number[]>();
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
    for (let b = 0; b < bk.length; b++) for (const j of local.get(bk[b]!) ?? []) if (!(prepared[j]!.expiresAt! <= now)) earlier.add(j);
    if (earlier.size) {
      const cands = [...earlier].map((j) => ({ id: prepared[j]!.id, record: entries[j]!.record }));
      matches.push(...scorer.score(p, filterCandidates(cands, p.filter), { min: t }));
      matches.sort(byScore);
    }
    if (p.limit !== undefined && matches.length > p.limit) matches.length = p.limit;
    for (let b = 0; b < bk.length; b++) {
      const l = local.get(bk[b]!);
      if (l) l.push(i);
      else local.set(bk[b]!, [i]);
    }
    const oldRec = old[i];
    entries.push({
      id: p.id,
      record: ctx.preparer.recordOf(p),
      keys: p.keys,
      ...(oldRec ? { oldKeys: ctx.preparer.keysOfRecord(oldRec) } : {}),
      ...(p.expiresAt !== undefined ? { expiresAt: p.expiresAt } : {}),
    });
    results.push(matches);
  }
  await ctx.raw.put(entries);
  ctx.counters.adds += prepared.length;
  await ctx.notify({ kind: 'add', documents: prepared.map((p, i) => ({ id: p.id, duplicates: results[i]!.map((m) => m.id), replaced: old[i] != null })) });
  return results;
}
