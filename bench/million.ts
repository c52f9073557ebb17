/**
 * End-to-end streaming dedup of a large generated file: `dedupStream` reading the TSV from disk
 * twice (sign on workers, then verify exactly), with wall time, peak RSS and recall of the planted
 * near-duplicate pairs whose exact Jaccard is at or above the threshold.
 *
 * Usage: node dist/bench/million.js [--docs 1000000] [--workers 2] [--threshold 0.8] [--file bench/data/m1.tsv]
 * The file (and its `.truth.tsv`) is generated first when missing.
 * @module
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadavg } from 'node:os';
import { generateCorpus } from './gen.js';
import { plantedRecall } from './plantedRecall.js';
import { dedupStream } from '../src/dedup/streamDedup.js';
import { readLineBatches } from '../src/dedup/lineSource.js';

const argv = process.argv.slice(2);
const opt = (name: string, def: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : def;
};
const repoRoot = resolve(new URL('.', import.meta.url).pathname, '../..');
const docs = Number(opt('docs', '1000000'));
const workers = Number(opt('workers', '2'));
const threshold = Number(opt('threshold', '0.8'));
const file = resolve(repoRoot, opt('file', `bench/data/m${docs === 1000000 ? '1' : docs}.tsv`));
if (!existsSync(file) || !existsSync(`${file}.truth.tsv`)) {
  console.log(`generating ${file} …`);
  generateCorpus({ docs, out: file });
}

/** The text column of `<id>\t<text>` lines, as batches. */
async function* texts(): AsyncGenerator<string[]> {
  for await (const lines of readLineBatches(file)) yield lines.map((l) => l.slice(l.indexOf('\t') + 1));
}

const load0 = loadavg()[0]!;
const t0 = performance.now();
const r = await dedupStream(texts, { threshold, workers });
const wall = (performance.now() - t0) / 1000;
const rssMb = process.resourceUsage().maxRSS / 1024;

const { planted, missed: missedCount, missedAbove, foundPlanted, found } = await plantedRecall(file, r.pairs, threshold);
const missed = { length: missedCount };
const byQ = new Map<number, { n: number; found: number }>();
for (const [a, b, q] of planted) {
  const e = byQ.get(q) ?? { n: 0, found: 0 };
  e.n++;
  if (found.has(a * 2 ** 21 + b)) e.found++;
  byQ.set(q, e);
}

const mb = r.stats.chars / 1e6;
console.log(
  `file ${file}: ${r.stats.docs} docs, ${mb.toFixed(0)} M chars; workers ${workers}; threshold ${threshold}; load average at start ${
    load0.toFixed(2)
  }, at end ${loadavg()[0]!.toFixed(2)}`,
);
console.log(
  `wall ${wall.toFixed(1)} s (sign pass ${(r.stats.timings.sign / 1000).toFixed(1)} s = ${(mb / (r.stats.timings.sign / 1000)).toFixed(0)} M chars/s, LSH ${
    (r.stats.timings.lsh / 1000).toFixed(1)
  } s, verify pass(es) ${(r.stats.timings.verify / 1000).toFixed(1)} s, cluster ${(r.stats.timings.cluster / 1000).toFixed(1)} s); peak RSS ${
    rssMb.toFixed(0)
  } MB`,
);
console.log(
  `passes ${r.extra.passes}; peak fingerprint-set bytes held ${(r.extra.peakSetBytes / 1e6).toFixed(0)} MB; index ${
    (r.extra.indexBytes / r.stats.docs).toFixed(0)
  } bytes/doc (${r.bands.bands} bands × 8 + 1)`,
);
console.log(`candidates ${r.stats.candidates}, verified pairs ${r.stats.pairs}, clusters ${r.stats.clusters}`);
console.log(
  `planted ${planted.length}; found ${foundPlanted}; missed ${missed.length}, of which ${missedAbove} have Jaccard ≥ ${threshold}; recall of planted pairs ≥ threshold: ${
    (foundPlanted / (foundPlanted + missedAbove)).toFixed(5)
  }`,
);
console.log(`by edit rate q: ${[...byQ].sort((x, y) => x[0] - y[0]).map(([q, e]) => `q=${q}: ${e.found}/${e.n}`).join(', ')}`);
