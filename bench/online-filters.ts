/**
 * What metadata filters and distinct topK cost in process (memory store): the Kijiji ads (data/ in
 * the repo), each given a `site` among 100, queried with each ad's own text. Per query, the mean
 * time (best of `rounds`), with no filter, a filter of one site (1 % of the documents) and a list of
 * 50 sites (50 %); threshold queries and topK 10.
 * Usage: node dist/bench/online-filters.js [queries=400] [rounds=3]
 */
import { NearDupIndex, type MetaFilter } from '../src/index.js';
import { kijijiTexts } from '../test/helpers/kijiji.js';

const Q = Number(process.argv[2] ?? 400);
const ROUNDS = Number(process.argv[3] ?? 3);
const texts = kijijiTexts();
const idx = await NearDupIndex.open<{ site: string }>({});
await idx.addMany(texts.map((text, i) => ({ id: `ad-${i}`, text, meta: { site: `s${i % 100}` } })));
const queries = Array.from({ length: Q }, (_, i) => texts[(i * 7919) % texts.length]!);
const filters: [string, MetaFilter | undefined][] = [
  ['none', undefined],
  ['site of 1 %', { site: 's3' }],
  ['site in a list of 50 %', { site: Array.from({ length: 50 }, (_, i) => `s${i * 2}`) }],
];

/** Mean ms per query of the best round, and the mean results per query. */
async function timed(run: (text: string) => Promise<unknown[]>): Promise<{ ms: number; hits: number }> {
  let best = Infinity;
  let hits = 0;
  for (let r = 0; r < ROUNDS; r++) {
    let n = 0;
    const t0 = performance.now();
    for (const q of queries) n += (await run(q)).length;
    best = Math.min(best, (performance.now() - t0) / Q);
    hits = n / Q;
  }
  return { ms: best, hits };
}

console.log(`${texts.length} ads, ${Q} queries, best of ${ROUNDS}`);
console.log('| filter | threshold query | hits | topK 10 | hits (documents, copies included) |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, filter] of filters) {
  const q = await timed((t) => idx.query(t, filter ? { filter } : {}));
  const k = await timed(async (t) => (await idx.topK(t, 10, filter ? { filter } : {})).flatMap((m) => [m, ...m.copies]));
  console.log(`| ${name} | ${q.ms.toFixed(3)} ms | ${q.hits.toFixed(1)} | ${k.ms.toFixed(3)} ms | ${k.hits.toFixed(1)} |`);
}
await idx.close();
