/**
 * Containment queries on the online index: which indexed documents the query is mostly inside, or
 * which are mostly inside the query (|A ∩ B| / |A| for the smaller A).
 *
 * Candidates: a short document inside a long one has a small Jaccard similarity (|A| / |B| at
 * best), so the threshold bands alone miss it. The query therefore also consults every level of
 * the LSH-Forest prefix trees the index keeps for topK: a single-slot prefix matches with
 * probability about the Jaccard similarity, so a pair of Jaccard similarity s is found with
 * probability at least 1 − (1 − s)^trees (8 trees by default); its recall falls for very unequal
 * sizes (docs/duplicate-kinds.md). An index opened with `ensemble` also has size-partitioned
 * containment keys (src/online/keys/ensemble.ts), probed per partition at the rows and bands its size
 * range calls for: recall 1.000 on the Kijiji excerpts of 10–80% (bench/online-containment.ts).
 * Scores are exact (fingerprint sets, verify `exact` only). For exact recall over a corpus, use
 * `dedup --measure containment`, whose prefix-filtering join misses nothing.
 * @module
 */
import { intersectionSize } from '../similarity/jaccard.js';
import { readRecordSketch, type SetOfText } from './records/record.js';
import type { StoredDoc } from '../store/types.js';
import type { IndexContext } from './context.js';
import { withMeta } from './scoring.js';
import type { Match, Prepared } from './types.js';
import { filterCandidates, type Cut } from './search/filters.js';

/** One containment match before metadata: `contained` says which side is inside the other. */
export interface ContainmentHit {
  id: string;
  /** |A ∩ B| / min(|A|, |B|). */
  similarity: number;
  /** Exact Jaccard similarity of the two sets. */
  jaccard: number;
  /** `query`: the query (fewer shingles) is inside the document; `document`: the document is inside the query. */
  contained: 'query' | 'document';
  record: Uint8Array;
}

/**
 * Scores distinct candidates by exact containment against the query set; keeps those ≥ `min`,
 * best first (ties by id). Candidates listed twice are scored once. `setOfText` recomputes the sets
 * of records that keep their text instead (setSource `text`).
 */
export function scoreContainment(query: Uint32Array, cands: readonly StoredDoc[], min: number, setOfText?: SetOfText): ContainmentHit[] {
  const seen = new Set<string>();
  const hits: ContainmentHit[] = [];
  const q = query.length;
  if (q === 0) return hits;
  let scratch = new Uint32Array(1024);
  for (const c of cands) {
    if (seen.has(c.id)) continue;
    seen.add(c.id);
    const r = readRecordSketch(c.record, scratch, setOfText);
    if (!r.set || r.set.length === 0) continue;
    if (r.set.length > scratch.length) scratch = new Uint32Array(r.set.length * 2);
    const x = r.set.length;
    const inter = intersectionSize(query, r.set);
    const similarity = inter / Math.min(q, x);
    if (similarity < min) continue;
    hits.push({ id: c.id, similarity, jaccard: inter / (q + x - inter), contained: q <= x ? 'query' : 'document', record: c.record });
  }
  hits.sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return hits;
}

/** Containment matches of a prepared query: candidates from the bands and every forest level, best first. */
export async function containmentMatches(ctx: IndexContext, p: Prepared, t: number, cut: Cut = {}): Promise<Match[]> {
  const { limit = Infinity, filter } = cut;
  const { keyMaker } = ctx;
  const lists = [keyMaker.bandPart(p.keys)];
  for (let l = 0; l < keyMaker.levels; l++) lists.push(keyMaker.levelPart(p.keys, l));
  // The size-partitioned containment keys, when the index has them (src/online/keys/ensemble.ts).
  if (keyMaker.ensemble && p.sig) lists.push(...keyMaker.ensemble.queryKeys(p.sig, p.set.length, t));
  const found = await ctx.store.lookup(lists, ctx.maxCandidates);
  const cands = filterCandidates(found.flat(), filter);
  ctx.counters.candidates += cands.length;
  const hits = scoreContainment(p.set, cands, t, ctx.preparer.setOfText);
  if (hits.length > limit) hits.length = limit;
  ctx.counters.verified += hits.length;
  return hits.map((h) => withMeta({ id: h.id, similarity: h.similarity, estimate: h.jaccard, contained: h.contained }, h.record));
}
