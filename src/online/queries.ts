/**
 * The read side of the online index: threshold queries by the LSH bands, the near duplicates of
 * an indexed document from its stored record, and top-k by the bands and the LSH-Forest prefixes.
 * Containment queries are in src/online/containmentQuery.ts.
 * @module
 */
import type { StoredDoc } from '../store/types.js';
import type { IndexContext } from './context.js';
import { decodeRecord, type SetOfText } from './records/record.js';
import { withMeta } from './scoring.js';
import type { Match, Prepared, TopKMatch } from './types.js';
import { filterCandidates, type Cut, type RecordFilter } from './search/filters.js';
import { copyKey, groupCopies } from './search/copies.js';
import { candidateScreen } from './search/screen.js';

/** Matches of a prepared query scoring at least `t` by the index's measure (Jaccard or its estimate), best first. */
export async function thresholdMatches(ctx: IndexContext, p: Prepared, t: number, cut: Cut = {}): Promise<Match[]> {
  // Not a spread of p: its set may be a getter that makes the set (src/online/preparer.ts).
  const screen = candidateScreen(ctx, [{ screen: p.screen, filter: cut.filter }], t);
  const [cands] = await ctx.store.lookup([ctx.keyMaker.bandPart(p.keys)], ctx.maxCandidates, undefined, screen);
  return ctx.scorer.score(p, filterCandidates(cands!, cut.filter), { min: t, limit: cut.limit });
}

/** Options of {@link matchesOfRecord}. */
export interface RecordQuery {
  /** Score threshold. */
  t: number;
  limit?: number;
  /** False leaves the candidate and verified counters alone (the index's own work). */
  counted: boolean;
  filter?: RecordFilter;
}

/** The matches of an indexed document from its stored record, without itself. */
export async function matchesOfRecord(ctx: IndexContext, id: string, record: Uint8Array, q: RecordQuery): Promise<Match[]> {
  const { t, limit, counted } = q;
  // decodeRecord copies the set: score() reuses the scratch buffer readRecordSketch reads into.
  const rec = decodeRecord(record, `record of "${id}"`, ctx.preparer.setOfText);
  const sig = rec.signature ?? (rec.set ? ctx.hasher.sign(rec.set) : null);
  if (!sig) return [];
  const keys = ctx.keyMaker.keys(sig, rec.set?.length ?? 0);
  const p: Prepared = { id, meta: rec.meta, set: rec.set ?? new Uint32Array(0), sig, keys };
  const [cands] = await ctx.store.lookup([ctx.keyMaker.bandPart(keys)], ctx.maxCandidates);
  return ctx.scorer.score(p, filterCandidates(cands!, q.filter), { min: t, skip: (x) => x === id, limit, counted });
}

/** Options of {@link topKMatches}. */
export interface TopKQuery {
  k: number;
  /** Forest trees of the index. */
  trees: number;
  filter?: RecordFilter;
}

/**
 * The k most similar distinct texts of a prepared query, even below the threshold (see
 * `NearDupIndex.topK`), each with its copies (src/online/search/copies.ts): candidates from the
 * bands, then the forest levels deepest first while fewer than 4k distinct texts were found, each
 * level adding at most max(100, 10k), those sharing a prefix in the most trees first. Candidates
 * the filter rejects are not counted.
 */
export async function topKMatches(ctx: IndexContext, p: Prepared, q: TopKQuery): Promise<TopKMatch[]> {
  const { keyMaker, store } = ctx;
  const { k, trees, filter } = q;
  const byId = new Map<string, StoredDoc>();
  const rejected = new Set<string>();
  const take = (c: StoredDoc): void => void byId.set(c.id, c);
  const enough = distinctTexts(byId, 4 * k, ctx.preparer.setOfText);
  const [first] = await store.lookup([keyMaker.bandPart(p.keys)], ctx.maxCandidates);
  for (const c of first!) {
    if (!filter || filter(c.record, c.id)) take(c);
    else rejected.add(c.id);
  }
  // Shallow prefixes can have huge buckets: take at most `budget` candidates from each level,
  // preferring those that share a prefix in the most trees (a rough similarity order).
  const budget = Math.min(ctx.maxCandidates, Math.max(100, 10 * k));
  for (let l = 0; l < keyMaker.levels && !enough(); l++) {
    const lk = keyMaker.levelPart(p.keys, l);
    const lists = await store.lookup(Array.from({ length: trees }, (_, t) => lk.subarray(t, t + 1)), budget);
    const hits = new Map<string, { doc: StoredDoc; n: number }>();
    for (const list of lists) {
      for (const c of list) {
        if (byId.has(c.id) || rejected.has(c.id)) continue;
        const h = hits.get(c.id);
        if (h) h.n++;
        else if (filter && !filter(c.record, c.id)) rejected.add(c.id);
        else hits.set(c.id, { doc: c, n: 1 });
      }
    }
    const ranked = [...hits.values()].sort((a, b) => b.n - a.n);
    for (let i = 0; i < ranked.length && i < budget; i++) take(ranked[i]!.doc);
  }
  return distinctMatches(ctx, p, [...byId.values()], k);
}

/**
 * Whether the candidates (a map that only grows) hold at least `n` distinct texts. Their copy keys
 * are computed only once there are `n` candidates, and each only once.
 */
function distinctTexts(byId: ReadonlyMap<string, StoredDoc>, n: number, setOfText: SetOfText): () => boolean {
  const texts = new Set<string>();
  let keyed = 0;
  return () => {
    if (byId.size < n) return false;
    let i = 0;
    for (const c of byId.values()) if (i++ >= keyed) texts.add(copyKey(c.record, setOfText));
    keyed = byId.size;
    return texts.size >= n;
  };
}

/** Scores every candidate, keeps the k best distinct texts, and fills in hits and copies. */
function distinctMatches(ctx: IndexContext, p: Prepared, cands: StoredDoc[], k: number): TopKMatch[] {
  const groups = groupCopies(ctx.scorer.rank(p, cands, { min: 0 }), k, ctx.preparer.setOfText);
  const hits = ctx.scorer.finish(p, groups.map((g) => g.hit));
  ctx.counters.verified += groups.reduce((n, g) => n + 1 + g.copies.length, 0);
  return hits.map((m, i) => {
    // A copy scores as its hit (same set or signature): only its metadata is read.
    const copies = groups[i]!.copies.map((c) => withMeta({ ...c.m, estimate: m.estimate }, c.record));
    return { ...m, copies };
  });
}
