/**
 * Kijiji end to end as one process: read the TSV, dedup (char 10-shingles, seed000 normalization,
 * threshold 0.8), write the pairs atomically, exit. Time it from outside:
 *   /usr/bin/time -v node dist/bench/kijiji-e2e.js [out.tsv]
 * @module
 */
import { renameSync, writeFileSync } from 'node:fs';
import { kijijiTexts, repoRoot } from '../test/helpers/kijiji.js';
import { resolve } from 'node:path';
import { dedup } from '../src/dedup/dedup.js';

const out = resolve(process.argv[2] ?? resolve(repoRoot, 'bench/data/kijiji-pairs.tsv'));
const texts = kijijiTexts();
const r = dedup(texts, { threshold: 0.8, shingle: { k: 10, normalize: { preset: 'seed000' } } });
const lines = r.pairs.map((p) => `${p.a}\t${p.b}\t${p.similarity.toFixed(6)}`);
writeFileSync(`${out}.tmp`, `a\tb\tsimilarity\n${lines.join('\n')}\n`);
renameSync(`${out}.tmp`, out);
console.log(`${r.stats.docs} docs, ${r.stats.pairs} pairs, ${r.stats.clusters} clusters in ${r.stats.timings.total.toFixed(0)} ms (in-process)`);
