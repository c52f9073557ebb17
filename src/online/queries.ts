/**
 * The read side of the online index: threshold queries by the LSH bands, the near duplicates of
 * an indexed document from its stored record, and top-k by the bands and the LSH-Forest prefixes.
 * Containment queries are in src/online/containmentQuery.ts.
 * @module
 */
import type { StoredDoc } from '../store/types.js';
import type { IndexContext } from './context.js';
import { decodeRecord } from './records/record.js';
import type { Match, Prepared } from './types.js';

/** Matches of a prepared query scoring at least `t` by the index's measure (Jaccard or its estimate), best first. */
export async function thresholdMatches(ctx: IndexContext, p: Prepared, t: number, limit?: number): Promise<Match[]> {
  const [cands] = await ctx.store.lookup([ctx.keyMaker.bandPart(p.keys)], ctx.maxCandidates);
  return ctx.scorer.score(p, cands!, t, undefined, limit);
}

/**
 * The matches of an indexed document from its stored record, without itself. `counted` false
 * leaves the candidate and verified counters alone (the index's own work).
 */
export async function matchesOfRecord(ctx: IndexContext, id: string, record: Uint8Array, t: number, limit: number | undefined, counted: boolean): Promise<Match[]> {
  // decodeRecord copies the set: score() reuses the scratch buffer readRecordSketch reads into.
  const rec = decodeRecord(record, `record of "${id}"`);
  const sig = rec.signature ?? (rec.set ? ctx.hasher.sign(rec.set) : null);
  if (!sig) return [];
  const keys = ctx.keyMaker.keys(sig, rec.set?.length ?? 0);
  const p: Prepared = { id, meta: rec.meta, set: rec.set ?? new Uint32Array(0), sig, keys };
  const [cands] = await ctx.store.lookup([ctx.keyMaker.bandPart(keys)], ctx.maxCandidates);
  return ctx.scorer.score(p, cands!, t, (x) => x === id, limit, counted);
}

/**
 * The k best matches of a prepared query, even below the threshold (see `NearDupIndex.topK`):
 * candidates from the bands, then the forest levels deepest first while fewer than 4k were found,
 * each level adding at most max(100, 10k), those sharing a prefix in the most trees first.
 */
export async function topKMatches(ctx: IndexContext, p: Prepared, k: number, trees: number): Promise<Match[]> {
  const { keyMaker, store } = ctx;
  const byId = new Map<string, StoredDoc>();
  const [first] = await store.lookup([keyMaker.bandPart(p.keys)], ctx.maxCandidates);
  for (const c of first!) byId.set(c.id, c);
  // Shallow prefixes can have huge buckets: take at most `budget` candidates from each level,
  // preferring those that share a prefix in the most trees (a rough similarity order).
  const budget = Math.min(ctx.maxCandidates, Math.max(100, 10 * k));
  for (let l = 0; l < keyMaker.levels && byId.size < 4 * k; l++) {
    const lk = keyMaker.levelPart(p.keys, l);
    const lists = await store.lookup(Array.from({ length: trees }, (_, t) => lk.subarray(t, t + 1)), budget);
    const hits = new Map<string, { doc: StoredDoc; n: number }>();
    for (const list of lists) {
      for (const c of list) {
        if (byId.has(c.id)) continue;
        const h = hits.get(c.id);
        if (h) h.n++;
        else hits.set(c.id, { doc: c, n: 1 });
      }
    }
    const ranked = [...hits.values()].sort((a, b) => b.n - a.n);
    for (let i = 0; i < ranked.length && i < budget; i++) byId.set(ranked[i]!.doc.id, ranked[i]!.doc);
  }
  return ctx.scorer.score(p, [...byId.values()], 0, undefined, k);
}
