/**
 * Checks what `neardup dedup --output dedup` drops on a JSONL corpus under both removal rules: each
 * run's `--removed` audit is read back and every dropped document's exact Jaccard to the kept
 * document it names is computed here, from the texts, with the run's shingling. Prints, per rule and
 * threshold: documents dropped, those below the threshold to their kept document, the lowest such
 * similarity, and the largest cluster.
 *
 * Usage: node dist/bench/removal-audit.js --corpus FILE.jsonl [--thresholds 0.8,0.5] [-k 5]
 * (the JSONL records need `id` and `text` fields).
 * @module
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createShingler } from '../src/text/shingler.js';
import { jaccard } from '../src/similarity/jaccard.js';

const argv = process.argv.slice(2);
const opt = (name: string, def?: string): string => {
  const i = argv.indexOf(name);
  if (i >= 0) return argv[i + 1]!;
  if (def === undefined) throw new Error(`give ${name}`);
  return def;
};
const corpus = opt('--corpus');
const thresholds = opt('--thresholds', '0.8,0.5').split(',').map(Number);
const k = Number(opt('-k', '5'));
const main = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'main.js');

const texts = new Map<string, string>();
for (const line of readFileSync(corpus, 'utf8').split('\n')) {
  if (!line) continue;
  const r = JSON.parse(line) as { id: string; text: string };
  texts.set(String(r.id), r.text);
}
const shingler = createShingler({ kind: 'char', k });
const sets = new Map<string, Uint32Array>();
const setOf = (id: string): Uint32Array => {
  let s = sets.get(id);
  if (!s) sets.set(id, s = shingler.set(texts.get(id)!));
  return s;
};
const dir = mkdtempSync(path.join(tmpdir(), 'removal-audit-'));
console.log(`${corpus}: ${texts.size} documents, char shingles k=${k}`);
console.log('| threshold | rule | dropped | below the threshold to their kept document | lowest | largest cluster |');
console.log('|---|---|---|---|---|---|');
for (const t of thresholds) {
  for (const rule of ['cluster', 'verified']) {
    const audit = path.join(dir, `${rule}-${t}.tsv`);
    const r = spawnSync(process.execPath, [
      main,
      'dedup',
      corpus,
      '--id-field',
      'id',
      '-k',
      String(k),
      '--threshold',
      String(t),
      '--removal',
      rule,
      '--output',
      'dedup',
      '--dry-run',
      '--removed',
      audit,
      '--json',
    ], { encoding: 'utf8', maxBuffer: 1 << 28 });
    if (r.status !== 0) throw new Error(r.stderr);
    const summary = JSON.parse(r.stdout) as { removal: { largestCluster?: number } };
    let dropped = 0;
    let below = 0;
    let lowest = Infinity;
    for (const line of readFileSync(audit, 'utf8').split('\n').slice(1)) {
      if (!line) continue;
      const [id, kept] = line.split('\t');
      dropped++;
      const s = jaccard(setOf(id!), setOf(kept!));
      if (s < t) below++;
      lowest = Math.min(lowest, s);
    }
    let largest = summary.removal.largestCluster;
    if (largest === undefined) {
      const c = spawnSync(process.execPath, [
        main,
        'dedup',
        corpus,
        '--id-field',
        'id',
        '-k',
        String(k),
        '--threshold',
        String(t),
        '--output',
        'clusters',
        '-q',
      ], { encoding: 'utf8', maxBuffer: 1 << 30 });
      largest = Math.max(0, ...c.stdout.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { size: number }).size));
    }
    console.log(
      `| ${t} | ${rule} | ${dropped.toLocaleString('en-US')} | ${below.toLocaleString('en-US')} (${((100 * below) / Math.max(1, dropped)).toFixed(1)} %) | ${
        lowest.toFixed(3)
      } | ${largest} |`,
    );
  }
}
rmSync(dir, { recursive: true, force: true });
