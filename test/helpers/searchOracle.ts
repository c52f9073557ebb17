/**
 * The class of answers of topK (distinct texts, each with its copies) and of metadata filters, as
 * properties over random indexes with planted copies, checked against brute force. Every route runs
 * the same property through a {@link Searcher}: the library on each store (test/online/search.test.ts,
 * test/store/parity.test.ts) and the HTTP API (test/server/search.test.ts).
 *
 * The corpus: every document holds one common block of words and a few words of its own, so any two
 * share most of their words, and the index's forest (32 trees at depth 1) makes every document a
 * topK candidate; its one band of all 128 rows finds exact copies only, so topK always consults the
 * forest. topK is then exact, and must equal the oracle: the distinct fingerprint sets (among the
 * documents the filter keeps) ranked by exact Jaccard, ties by smallest id, each listing its other
 * copies by id. Threshold searches (query, duplicatesOf, add) go by the bands of a second index: a
 * filtered answer must be the unfiltered one with the oracle's filter applied.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { NearDupIndex, createShingler, jaccard, type NearDupIndexOptions } from '../../src/index.js';
import type { MetaFilter } from '../../src/online/nearDupIndex.js';

/** A document of the corpus. */
export interface Doc {
  id: string;
  text: string;
  meta?: unknown;
}

/** A hit as compared: id, similarity, and the copies' ids. */
export interface Hit {
  id: string;
  similarity: number;
  copies?: string[];
}

/** One route to an index: the library, or the HTTP API. */
export interface Searcher {
  topK(text: string, k: number, filter?: MetaFilter): Promise<Hit[]>;
  query(text: string, filter?: MetaFilter): Promise<Hit[]>;
  duplicatesOf(id: string, filter?: MetaFilter): Promise<Hit[] | null>;
  add(doc: Doc, filter?: MetaFilter): Promise<Hit[]>;
}

/** The options of the topK index (every document a candidate) and of the threshold index. */
export const TOPK_OPTIONS: NearDupIndexOptions = {
  shingle: { kind: 'word', k: 1 },
  numPerm: 128,
  bands: 1,
  rows: 128,
  forest: { trees: 32, depths: [1] },
  threshold: 0.5,
};
export const THRESHOLD_OPTIONS: NearDupIndexOptions = { shingle: { kind: 'word', k: 1 }, numPerm: 128, threshold: 0.7, forest: false };

const COMMON = Array.from({ length: 24 }, (_, i) => `common${i}`).join(' ');
const WORDS = Array.from({ length: 16 }, (_, i) => `w${i}`);
const SITES = ['a', 'b', 'c'];
const LANGS = ['en', 'fr', 'de'];

const metaArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ site: fc.constantFrom(...SITES), lang: fc.constantFrom(...LANGS), n: fc.integer({ min: 0, max: 2 }), ok: fc.boolean() }, {
      requiredKeys: ['site'],
    }),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>('a', 3, ['a'], { site: null }, { site: { a: 1 } }) },
);

const one = <T>(xs: readonly T[]) => fc.oneof(fc.constantFrom(...xs), fc.subarray([...xs], { minLength: 1 }));
/** Random filters over the corpus's fields, with scalars and lists, types that differ (1 and "1"), null, and fields no document has. */
export const filterArb: fc.Arbitrary<MetaFilter> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({}) },
  { weight: 4, arbitrary: fc.record({ site: one([...SITES, 'zz']) }) },
  { weight: 3, arbitrary: fc.record({ site: one(SITES), lang: one(LANGS) }) },
  { weight: 2, arbitrary: fc.record({ lang: one([...LANGS, null]) }) },
  { weight: 2, arbitrary: fc.record({ n: one<number | string>([0, 1, 2, '1']) }) },
  { weight: 1, arbitrary: fc.record({ ok: one([true, false]), site: one(SITES) }) },
  { weight: 1, arbitrary: fc.record({ missing: one<string | null>(['x', null]) }) },
  { weight: 1, arbitrary: fc.record({ site: fc.constant(null) }) },
);

/** A random corpus: base texts, near-duplicate variants, and planted copies (same text, other id and meta). */
export const corpusArb: fc.Arbitrary<Doc[]> = fc
  .array(
    fc.record({
      words: fc.subarray(WORDS, { minLength: 0, maxLength: 8 }),
      copies: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) }),
      metas: fc.array(metaArb, { minLength: 5, maxLength: 5 }),
    }),
    { minLength: 1, maxLength: 14 },
  )
  .map((bases) => {
    const docs: Doc[] = [];
    bases.forEach((b, i) => {
      const text = `${COMMON} ${b.words.join(' ')}`;
      for (let c = 0; c <= b.copies; c++) {
        const meta = b.metas[c];
        // Ids out of insertion order: the hit is the smallest id, not the first added.
        docs.push({ id: `d${(i * 7 + c * 3) % 50}-${i}-${c}`, text, ...(meta === undefined ? {} : { meta }) });
      }
    });
    return docs;
  });

/** A query text: one of the corpus's, or a random mix of words. */
export const queryArb = fc.subarray(WORDS, { minLength: 0, maxLength: 10 }).map((w) => `${COMMON} ${w.join(' ')}`);

/** Brute-force filter: every field present, equal (===) to the value or one of the list's. */
export function oracleMatches(meta: unknown, filter: MetaFilter | undefined): boolean {
  if (!filter || Object.keys(filter).length === 0) return true;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return false;
  return Object.entries(filter).every(([k, v]) =>
    k in (meta as object) && (Array.isArray(v) ? v : [v]).some((x) => x === (meta as Record<string, unknown>)[k])
  );
}

const shingler = createShingler(TOPK_OPTIONS.shingle);

/** Brute-force topK: distinct sets among the documents the filter keeps, best first, ties by smallest id. */
export function oracleTopK(docs: readonly Doc[], text: string, k: number, filter?: MetaFilter): Hit[] {
  const q = shingler.set(text);
  const groups = new Map<string, { ids: string[]; similarity: number }>();
  for (const d of docs) {
    if (!oracleMatches(d.meta, filter)) continue;
    const s = shingler.set(d.text);
    const key = s.join(',');
    const g = groups.get(key);
    if (g) g.ids.push(d.id);
    else groups.set(key, { ids: [d.id], similarity: jaccard(q, s) });
  }
  const ranked = [...groups.values()].map((g) => ({ ...g, ids: g.ids.sort() }));
  ranked.sort((a, b) => b.similarity - a.similarity || (a.ids[0]! < b.ids[0]! ? -1 : 1));
  return ranked.slice(0, k).map((g) => ({ id: g.ids[0]!, similarity: g.similarity, copies: g.ids.slice(1) }));
}

/** The library as a {@link Searcher}. */
export function librarySearcher(topK: NearDupIndex, threshold: NearDupIndex): Searcher {
  const hit = (m: { id: string; similarity: number; copies?: { id: string }[] }): Hit => ({
    id: m.id,
    similarity: m.similarity,
    ...(m.copies ? { copies: m.copies.map((c) => c.id) } : {}),
  });
  return {
    topK: async (text, k, filter) => (await topK.topK(text, k, { filter })).map(hit),
    query: async (text, filter) => (await threshold.query(text, { filter })).map(hit),
    duplicatesOf: async (id, filter) => (await threshold.duplicatesOf(id, { filter }))?.map(hit) ?? null,
    add: async (d, filter) => (await threshold.add(d.id, d.text, d.meta, { filter })).map(hit),
  };
}

/** Opens the two indexes of the property on stores from `spec` (called once per index, fresh each time). */
export async function openPair(spec: () => Promise<string>): Promise<[NearDupIndex, NearDupIndex]> {
  const a = await NearDupIndex.open({ ...TOPK_OPTIONS, store: await spec() });
  const b = await NearDupIndex.open({ ...THRESHOLD_OPTIONS, store: await spec() });
  return [a, b];
}

/** How one route is set up for one run: the searcher over the corpus, and how to close it. */
export type Setup = (docs: Doc[]) => Promise<{ searcher: Searcher; close(): Promise<void> }>;

/** The library on fresh stores from `spec`. */
export function librarySetup(spec: () => Promise<string>): Setup {
  return async (docs) => {
    const [a, b] = await openPair(spec);
    await a.addMany(docs);
    await b.addMany(docs);
    return { searcher: librarySearcher(a, b), close: async () => void (await Promise.all([a.close(), b.close()])) };
  };
}

/** The property: topK equals the oracle; filtered threshold searches equal unfiltered ones filtered. */
export async function checkSearchProperty(setup: Setup, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(corpusArb, queryArb, fc.integer({ min: 1, max: 6 }), filterArb, fc.nat(), async (docs, text, k, filter, pick) => {
      const { searcher, close } = await setup(docs);
      try {
        const q = pick % 2 ? docs[pick % docs.length]!.text : text;
        assert.deepEqual(await searcher.topK(q, k), oracleTopK(docs, q, k), 'topK, no filter');
        assert.deepEqual(await searcher.topK(q, k, filter), oracleTopK(docs, q, k, filter), 'topK, filtered');
        const keep = (hits: Hit[]) => hits.filter((h) => oracleMatches(docs.find((d) => d.id === h.id)!.meta, filter));
        assert.deepEqual(await searcher.query(q, filter), keep(await searcher.query(q)), 'query');
        const id = docs[pick % docs.length]!.id;
        assert.deepEqual(await searcher.duplicatesOf(id, filter), keep((await searcher.duplicatesOf(id))!), 'duplicatesOf');
        const before = keep(await searcher.query(q));
        assert.deepEqual(await searcher.add({ id: 'new', text: q, meta: { site: 'a' } }, filter), before, 'add');
      } finally {
        await close();
      }
    }),
    { numRuns },
  );
}
