/**
 * Recall of online containment queries (`query(text, { measure: 'containment' })`) on the Kijiji
 * ads, with and without the size-partitioned containment keys (index option `ensemble`), against
 * brute-force containment. All ads are indexed; each trial plants an excerpt of a share of a long ad
 * (a fixed-seed random slice), and every indexed ad the excerpt is at least t inside (or that is at
 * least t inside it) is a true match. Recall = true matches found / true matches.
 * Usage: node dist/bench/online-containment.js [trials per row = 300] [t = 0.9]
 */
import { NearDupIndex } from '../src/index.js';
import { createShingler } from '../src/text/shingler.js';
import { intersectionSize } from '../src/similarity/jaccard.js';
import { splitmix32 } from '../src/hash/mix.js';
import { kijijiDocs } from '../test/helpers.js';

const trials = Number(process.argv[2] ?? 300);
const t = Number(process.argv[3] ?? 0.9);
const docs = kijijiDocs();
const sh = createShingler();
const sets = docs.map((d) => sh.set(d));
const rows: [number, number][] = [
  [0.5, 0.8],
  [0.3, 0.5],
  [0.2, 0.3],
  [0.1, 0.2],
];
const long = docs.map((d, i) => [d.length, i] as const).filter(([l]) => l > 500);

console.log(`Kijiji ads: ${docs.length} indexed, ${long.length} longer than 500 characters; ${trials} excerpts per row; containment t = ${t}`);
console.log('');
console.log(
  '| excerpt (share of the ad) | true matches | recall, bands + forest | recall, + ensemble | candidates per query, without / with | query ms, without / with |',
);
console.log('|---|---|---|---|---|---|');
const plain = await NearDupIndex.open({});
const ens = await NearDupIndex.open({ ensemble: true });
for (const idx of [plain, ens]) {
  for (let i = 0; i < docs.length; i += 500) await idx.addMany(docs.slice(i, i + 500).map((text, j) => ({ id: `d${i + j}`, text })));
}
for (const [lo, hi] of rows) {
  const rnd = splitmix32(Math.round(lo * 1000));
  const u = (): number => rnd() / 4294967296;
  let truth = 0;
  const found = [0, 0];
  const cands = [0, 0];
  const ms = [0, 0];
  for (let k = 0; k < trials; k++) {
    const [len, i] = long[Math.floor(u() * long.length)]!;
    const part = Math.max(5, Math.floor(len * (lo + (hi - lo) * u())));
    const from = Math.floor(u() * (len - part));
    const q = docs[i]!.slice(from, from + part);
    const qs = sh.set(q);
    if (qs.length === 0) continue;
    const want = new Set<string>();
    sets.forEach((x, j) => {
      if (x.length && intersectionSize(qs, x) / Math.min(qs.length, x.length) >= t) want.add(`d${j}`);
    });
    truth += want.size;
    for (const [n, idx] of [plain, ens].entries()) {
      const before = (await idx.stats()).counters.candidates;
      const t0 = performance.now();
      const got = await idx.query(q, { measure: 'containment', threshold: t });
      ms[n]! += performance.now() - t0;
      cands[n]! += (await idx.stats()).counters.candidates - before;
      found[n]! += got.filter((m) => want.has(m.id)).length;
    }
  }
  const f = (x: number) => (x / truth).toFixed(3);
  console.log(
    `| ${lo * 100}–${hi * 100}% | ${truth} | ${f(found[0]!)} | ${f(found[1]!)} | ${(cands[0]! / trials).toFixed(0)} / ${(cands[1]! / trials).toFixed(0)} | ${
      (ms[0]! / trials).toFixed(2)
    } / ${(ms[1]! / trials).toFixed(2)} |`,
  );
}
const st = await ens.stats();
console.log('');
console.log(
  `keys per document: ${(await plain.stats()).manifest.keysPerDoc} without, ${st.manifest.keysPerDoc} with the ensemble (${
    JSON.stringify(st.manifest.ensemble)
  })`,
);
await plain.close();
await ens.close();
