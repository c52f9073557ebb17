/**
 * `neardup params`: the LSH banding for a threshold and signature length, and what it promises.
 * @module
 */
import { Command, Option } from 'commander';
import { candidateProbability, chooseBands } from '../../lsh/params.js';
import { addLogOptions, lshOptionsFrom, parsePositiveInt, parseUnit, parseWeights, validated } from '../options.js';
import { Reporter, type LogFlags } from '../report.js';

interface ParamsFlags extends LogFlags {
  threshold: number;
  numPerm: number;
  minRecall?: number;
  weights?: { fp: number; fn: number };
  bands?: number;
  rows?: number;
}

/** The `params` command. */
export function paramsCommand(): Command {
  const cmd = new Command('params')
    .description('choose b bands × r rows for a threshold; print the S-curve P(s) and the expected false-positive and false-negative areas')
    .option('--threshold <t>', 'Jaccard threshold', parseUnit('threshold'), 0.8)
    .option('--num-perm <n>', 'MinHash signature length', parsePositiveInt('num-perm', 65536), 128)
    .addOption(new Option('--min-recall <p>', 'require P(threshold) ≥ p, then fewest false candidates (default rule, p = 0.99)').argParser(parseUnit('min-recall', true)).conflicts(['weights']))
    .addOption(new Option('--weights <fp,fn>', 'minimise fp·FP area + fn·FN area instead (datasketch style)').argParser(parseWeights))
    .option('--bands <b>', 'evaluate an explicit number of bands', parsePositiveInt('bands', 65536))
    .option('--rows <r>', 'evaluate explicit rows per band', parsePositiveInt('rows', 65536));
  addLogOptions(cmd, 'print the choice and the table as JSON on stdout');
  cmd.addHelpText(
    'after',
    `
P(s) = 1 − (1 − s^r)^b is the probability that a pair of Jaccard similarity s becomes a candidate.
FP area = ∫₀ᵗ P(s) ds (below-threshold mass that still becomes candidates);
FN area = ∫ₜ¹ (1 − P(s)) ds (above-threshold mass that is missed).

Examples:
  $ neardup params --threshold 0.8 --num-perm 128
  $ neardup params --threshold 0.5 --num-perm 256 --weights 0.5,0.5
  $ neardup params --threshold 0.9 --num-perm 100 --bands 20 --json`,
  );
  cmd.action((flags: ParamsFlags) => {
    const reporter = new Reporter({ ...flags, json: false });
    const t = flags.threshold;
    const b = validated(() => chooseBands(t, flags.numPerm, lshOptionsFrom(flags)));
    const grid = [...new Set([...b.curve.map((c) => c.s), t, 0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95])].sort((x, y) => x - y);
    const table = grid.map((s) => ({ s: Math.round(s * 1e6) / 1e6, p: candidateProbability(s, b.bands, b.rows) }));
    if (flags.json) {
      reporter.json({
        threshold: t,
        numPerm: flags.numPerm,
        bands: b.bands,
        rows: b.rows,
        hashesUsed: b.bands * b.rows,
        rule: b.rule,
        recallAtThreshold: b.recallAtThreshold,
        falsePositiveArea: b.falsePositiveArea,
        falseNegativeArea: b.falseNegativeArea,
        curve: table,
      });
      return;
    }
    const out = (s: string): void => void process.stdout.write(s + '\n');
    const rule =
      b.rule === 'min-recall'
        ? `P(${t}) ≥ ${flags.minRecall ?? 0.99} with the smallest false-positive area`
        : b.rule === 'weights'
          ? `minimum of ${flags.weights!.fp}·FP + ${flags.weights!.fn}·FN`
          : b.rule === 'explicit'
            ? 'explicit'
            : `best effort: no banding reaches P(${t}) ≥ ${flags.minRecall ?? 0.99}`;
    out(`threshold ${t}, ${flags.numPerm} hashes → b = ${b.bands} bands × r = ${b.rows} rows (${b.bands * b.rows} hashes used; rule: ${rule})`);
    out(`P(${t}) = ${b.recallAtThreshold.toFixed(4)}   expected recall of a pair exactly at the threshold`);
    out(`FP area ∫₀^t P(s) ds     = ${b.falsePositiveArea.toFixed(5)}`);
    out(`FN area ∫_t^1 1−P(s) ds  = ${b.falseNegativeArea.toFixed(5)}`);
    out('');
    out('   s      P(s)');
    for (const { s, p } of table) {
      const bar = '█'.repeat(Math.round(p * 30));
      out(`${s.toFixed(2).padStart(5)}  ${p.toFixed(4)}  ${bar}${s === t ? '  ← threshold' : ''}`);
    }
  });
  return cmd;
}
