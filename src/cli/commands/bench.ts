/**
 * `neardup bench <input>`: LSH against exact brute force on the user's own data (the Kijiji
 * ads experiment), and candidate pairs against the number of bands with the recall at high similarity
 * (the bands sweep).
 * @module
 */
import { Command, Option } from 'commander';
import { bruteForcePairs, type ScoredPair } from '../../similarity/bruteForce.js';
import { createShingler, defaultK } from '../../text/shingler.js';
import { candidateProbability } from '../../lsh/params.js';
import { UsageError } from '../../common/errors.js';
import { findDuplicates } from '../engine.js';
import type { DedupOptions } from '../../dedup/dedup.js';
import { loadCorpus, withInputCopy } from '../corpus.js';
import {
  addEngineOptions,
  addLogOptions,
  collectList,
  dedupOptionsFrom,
  parsePositiveInt,
  parseUnit,
  readOptionsFrom,
  type EngineFlags,
  type InputFlags,
} from '../options.js';
import { int, ms, Reporter, type LogFlags } from '../report.js';

interface BenchFlags extends InputFlags, EngineFlags, LogFlags {
  bandsList: string[];
  sweepPerm: number;
  recallAt: number;
}

function key(p: { a: number; b: number }, n: number): number {
  return p.a * n + p.b;
}

function pct(x: number, d: number): string {
  return d === 0 ? 'n/a' : `${((100 * x) / d).toFixed(2)}%`;
}

/** The `bench` command. */
export function benchCommand(): Command {
  const cmd = new Command('bench')
    .description(
      'benchmark on your data: LSH against exact brute force (time, pairs, recall, precision), and candidates and recall against the number of bands',
    )
    .argument('<input>', 'any input dedup reads');
  addEngineOptions(cmd);
  cmd
    .addOption(new Option('--verify <mode>', 'how the LSH run checks candidates').choices(['exact', 'estimate', 'none']).default('exact'))
    .option('--bands-list <list>', 'band counts of the second experiment, comma-separated', collectList)
    .option('--sweep-perm <n>', 'signature length of the second experiment', parsePositiveInt('sweep-perm', 65536), 100)
    .option('--recall-at <s>', 'similarity at or above which the second experiment measures recall', parseUnit('recall-at'), 0.9);
  addLogOptions(cmd, 'print both experiments as JSON on stdout');
  cmd.addHelpText(
    'after',
    `
Experiment 1 runs the full pipeline (shingle, sign, LSH, verify, cluster) and the exact all-pairs
baseline (shingle, compare every pair, with size filtering) with the same shingles, after a short
warm-up of both on the first 300 documents, and compares their pairs.
Experiment 2 runs LSH without verification at --sweep-perm hashes for each band count (rows =
hashes / bands) and reports the candidate pairs and the share of brute-force pairs with similarity
≥ --recall-at among them, next to the theoretical P(s).

Examples:
  $ neardup bench ads.tsv --text 'Title,Short Description' -k 10 --normalize lowercase-collapse
  $ neardup bench ads.tsv --text 'Title,Short Description' --bands-list 2,5,10,20,25 --json`,
  );
  cmd.action(async (file: string, flags: BenchFlags) => {
    await runBench(file, flags);
  });
  return cmd;
}

async function runBench(file: string, flags: BenchFlags): Promise<void> {
  const reporter = new Reporter(flags);
  if ((flags.keep ?? 'first') !== 'first')
    throw new UsageError(`--keep ${flags.keep} applies to the outputs of neardup dedup and neardup job: bench times the search, not the copy`);
  const options = dedupOptionsFrom(flags);
  const bandsList = (flags.bandsList ?? ['2', '5', '10', '20']).map((s) => {
    const b = Number(s);
    if (!Number.isInteger(b) || b < 1 || b > flags.sweepPerm)
      throw new UsageError(`--bands-list entries must be integers from 1 to --sweep-perm (${flags.sweepPerm}), got "${s}"`);
    return b;
  });
  // A named pipe (`<(zcat a.gz)`) is copied first: the readers sniff a format by a positional read.
  const corpus = await withInputCopy(file, readOptionsFrom(flags), (f, r) => loadCorpus(f, r, reporter));
  const { texts } = corpus;
  const n = texts.length;

  // Warm both code paths up on a slice first, so neither timing below pays for JIT compilation.
  await reporter.stage('warm-up', async () => {
    const slice = texts.slice(0, Math.min(n, 300));
    await findDuplicates(slice, options);
    const sh = createShingler(options.shingle);
    bruteForcePairs(slice.map((x) => sh.set(x)), options.threshold!);
  });
  const run: BenchRun = { texts, options, flags, reporter };
  const { exp1, bf, times } = await lshVsBruteForce(run);
  const exp2 = await bandSweep(run, bf, bandsList);
  const sh = options.shingle!;
  const k = sh.k ?? defaultK(sh.kind ?? 'char');
  if (flags.json) {
    reporter.json({
      command: 'bench',
      input: { path: file === '-' ? '<stdin>' : file, format: corpus.input.format, docs: n, bytes: corpus.bytes, skipped: corpus.input.skips.count },
      shingle: { kind: sh.kind, k, normalize: flags.normalize },
      lshVsBruteForce: exp1,
      bandSweep: { numPerm: flags.sweepPerm, recallAt: flags.recallAt, rows: exp2 },
    });
    return;
  }
  const out = (s: string): void => void process.stdout.write(s + '\n');
  out(`neardup bench: ${int(n)} docs from ${file === '-' ? '<stdin>' : file} [${corpus.input.format}]; ${sh.kind} ${k}-shingles, normalize ${flags.normalize}`);
  out('');
  printLshVsBruteForce(out, exp1, flags, times);
  out('');
  printBandSweep(out, exp2, flags);
}

/** What both experiments run on. */
interface BenchRun {
  texts: string[];
  options: DedupOptions;
  flags: BenchFlags;
  reporter: Reporter;
}

/** Experiment 1: LSH (the whole pipeline) against brute force (shingling + all pairs); also the brute-force pairs down to --recall-at. */
async function lshVsBruteForce({ texts, options, flags, reporter }: BenchRun): Promise<{ exp1: LshVsBruteForce; bf: ScoredPair[]; times: BenchTimes }> {
  const n = texts.length;
  const t = options.threshold!;
  const { value: lsh, ms: lshMs } = await reporter.stage('lsh', () => findDuplicates(texts, options), (r) => `${int(r.stats.pairs)} pairs`);
  const floor = Math.min(t, flags.recallAt);
  const { value: bf, ms: bfMs } = await reporter.stage(
    'brute force',
    () => {
      const sh = createShingler(options.shingle);
      const sets = texts.map((x) => sh.set(x));
      const bar = reporter.progress('brute', 'docs', n);
      try {
        return bruteForcePairs(sets, floor, { onProgress: (d) => bar.update(d) });
      } finally {
        bar.stop();
      }
    },
    (r) => `${int(r.length)} pairs ≥ ${floor}`,
  );
  const bfAtT = bf.filter((p) => p.similarity >= t);
  const bfKeys = new Set(bfAtT.map((p) => key(p, n)));
  let common = 0;
  for (const p of lsh.pairs) if (bfKeys.has(key(p, n))) common++;
  const exp1 = {
    threshold: t,
    lsh: {
      seconds: lshMs / 1000,
      pairs: lsh.pairs.length,
      candidates: lsh.stats.candidates,
      bands: lsh.bands.bands,
      rows: lsh.bands.rows,
      numPerm: flags.numPerm,
      method: flags.method,
      verify: options.verify,
    },
    bruteForce: { seconds: bfMs / 1000, pairs: bfAtT.length },
    common,
    recall: bfAtT.length ? common / bfAtT.length : 1,
    precision: lsh.pairs.length ? common / lsh.pairs.length : 1,
    speedup: bfMs / Math.max(lshMs, 1e-6),
  };
  return { exp1, bf, times: { lshMs, bfMs } };
}

/** Experiment 1's wall times, ms. */
interface BenchTimes {
  lshMs: number;
  bfMs: number;
}

/** The result of experiment 1, as --json writes it. */
interface LshVsBruteForce {
  threshold: number;
  lsh: {
    seconds: number;
    pairs: number;
    candidates: number;
    bands: number;
    rows: number;
    numPerm: number;
    method: BenchFlags['method'];
    verify: DedupOptions['verify'];
  };
  bruteForce: { seconds: number; pairs: number };
  common: number;
  recall: number;
  precision: number;
  speedup: number;
}

/** Experiment 2: candidates and recall at ≥ --recall-at for each band count. */
async function bandSweep({ texts, options, flags, reporter }: BenchRun, bf: ScoredPair[], bandsList: number[]): Promise<BandSweepRow[]> {
  const n = texts.length;
  const high: ScoredPair[] = bf.filter((p) => p.similarity >= flags.recallAt);
  const exp2: BandSweepRow[] = [];
  for (const b of bandsList) {
    const rows = Math.floor(flags.sweepPerm / b);
    const opts = { ...options, minhash: { ...options.minhash, numPerm: flags.sweepPerm }, lsh: { bands: b, rows }, verify: 'none' as const };
    const { value: r, ms: tms } = await reporter.stage(`sweep b=${b}`, () => findDuplicates(texts, opts), (x) => `${int(x.stats.candidates)} candidates`);
    const cand = new Set(r.pairs.map((p) => key(p, n)));
    let found = 0;
    for (const p of high) if (cand.has(key(p, n))) found++;
    exp2.push({
      bands: b,
      rows,
      candidates: r.stats.candidates,
      seconds: tms / 1000,
      found,
      total: high.length,
      recall: high.length ? found / high.length : 1,
      expectedRecall: candidateProbability(flags.recallAt, b, rows),
    });
  }
  return exp2;
}

/** One banding of experiment 2. */
interface BandSweepRow {
  bands: number;
  rows: number;
  candidates: number;
  seconds: number;
  found: number;
  total: number;
  recall: number;
  expectedRecall: number;
}

/** Experiment 1 as text. */
function printLshVsBruteForce(out: (s: string) => void, exp1: LshVsBruteForce, flags: BenchFlags, times: BenchTimes): void {
  const { lsh, bruteForce, common } = exp1;
  out(`1. LSH against brute force, Jaccard ≥ ${exp1.threshold}`);
  const lshLabel = `LSH (${flags.method}, ${flags.numPerm} hashes, ${lsh.bands}×${lsh.rows}, verify ${lsh.verify})`;
  const bfLabel = 'brute force (exact Jaccard, all pairs)';
  const w = Math.max(lshLabel.length, bfLabel.length) + 2;
  out(`   ${''.padEnd(w)}${'time'.padStart(10)}${'pairs'.padStart(12)}`);
  out(`   ${lshLabel.padEnd(w)}${ms(times.lshMs).padStart(10)}${int(lsh.pairs).padStart(12)}`);
  out(`   ${bfLabel.padEnd(w)}${ms(times.bfMs).padStart(10)}${int(bruteForce.pairs).padStart(12)}`);
  out(`   ${'in common'.padEnd(w)}${''.padStart(10)}${int(common).padStart(12)}`);
  out(
    `   recall ${pct(common, bruteForce.pairs)} · precision ${pct(common, lsh.pairs)} · LSH candidates ${int(lsh.candidates)} · speed-up ${
      exp1.speedup.toFixed(1)
    }×`,
  );
}

/** Experiment 2 as text. */
function printBandSweep(out: (s: string) => void, exp2: BandSweepRow[], flags: BenchFlags): void {
  out(`2. Candidate pairs against the number of bands, ${flags.sweepPerm} hashes, no verification`);
  out(
    `   ${'bands'.padStart(5)} ${'rows'.padStart(5)} ${'candidates'.padStart(12)} ${`recall at ≥ ${flags.recallAt}`.padStart(24)} ${
      `P(${flags.recallAt})`.padStart(8)
    } ${'time'.padStart(9)}`,
  );
  for (const e of exp2) {
    const rec = `${int(e.found)}/${int(e.total)} (${pct(e.found, e.total)})`;
    out(
      `   ${String(e.bands).padStart(5)} ${String(e.rows).padStart(5)} ${int(e.candidates).padStart(12)} ${rec.padStart(24)} ${
        e.expectedRecall.toFixed(4).padStart(8)
      } ${ms(e.seconds * 1000).padStart(9)}`,
    );
  }
}
