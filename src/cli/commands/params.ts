/**
 * `neardup params`: the LSH banding for a threshold and signature length, and what it promises.
 * @module
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { candidateProbability, chooseBands } from '../../lsh/params.js';
import { addLogOptions, engineCliOption, lshOptionsFrom, validated } from '../options.js';
import { Reporter, type LogFlags } from '../report.js';
import { ENGINE_DEFAULTS, engineOption } from '../../engine/options.js';

interface ParamsFlags extends LogFlags {
  curves?: { bands: number; rows: number }[];
  threshold: number;
  numPerm: number;
  minRecall?: number;
  weights?: { fp: number; fn: number };
  bands?: number;
  rows?: number;
}

/** The engine option `name` as `neardup params` words it. */
function paramsOption(name: string, help: string): Option {
  return engineCliOption(engineOption(name)!, { help });
}

/** The `params` command. */
export function paramsCommand(): Command {
  const cmd = new Command('params')
    .description('choose b bands × r rows for a threshold; print the S-curve P(s) and the expected false-positive and false-negative areas')
    // The engine's definitions (parsers, defaults), with this command's wording.
    .addOption(paramsOption('threshold', 'Jaccard threshold'))
    .addOption(paramsOption('numPerm', 'MinHash signature length'))
    .addOption(paramsOption('minRecall', `require P(threshold) ≥ p, then fewest false candidates (default rule, p = ${ENGINE_DEFAULTS.minRecall})`))
    .addOption(paramsOption('weights', 'minimise fp·FP area + fn·FN area instead (datasketch style)'))
    .addOption(paramsOption('bands', 'evaluate an explicit number of bands'))
    .addOption(paramsOption('rows', 'evaluate explicit rows per band'))
    .option('--curves <bxr,...>', 'also draw these bandings in one S-curve chart, e.g. 20x5,10x10,32x4 (b bands × r rows)', parseCurves);
  addLogOptions(cmd, 'print the choice and the table as JSON on stdout');
  cmd.addHelpText('after', PARAMS_HELP);
  cmd.action(runParams);
  return cmd;
}

/** What `--help` prints after the options: the rule of thumb, the areas, examples. */
const PARAMS_HELP = `
The rule of thumb t ≈ (1/b)^(1/r) (the s where the S-curve is steepest) is printed next to
the chosen banding. P(s) = 1 − (1 − s^r)^b is the probability that a pair of Jaccard similarity s becomes a candidate.
FP area = ∫₀ᵗ P(s) ds (below-threshold mass that still becomes candidates);
FN area = ∫ₜ¹ (1 − P(s)) ds (above-threshold mass that is missed).

Examples:
  $ neardup params --threshold 0.8 --num-perm 128
  $ neardup params --threshold 0.5 --num-perm 256 --weights 0.5,0.5
  $ neardup params --threshold 0.9 --num-perm 100 --bands 20 --json
  $ neardup params --threshold 0.8 --curves 20x5,10x10,32x4`;

/** A banding chosen, and its S-curve on the grid of similarities printed. */
interface ParamsRun {
  flags: ParamsFlags;
  b: ReturnType<typeof chooseBands>;
  grid: number[];
  table: { s: number; p: number }[];
}

/** `neardup params`: the banding chosen and its S-curve, as JSON or as text. */
function runParams(flags: ParamsFlags): void {
  const reporter = new Reporter({ ...flags, json: false });
  const t = flags.threshold;
  const b = validated(() => chooseBands(t, flags.numPerm, lshOptionsFrom(flags)));
  const grid = [...new Set([...b.curve.map((c) => c.s), t, 0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95])].sort((x, y) => x - y);
  const table = grid.map((s) => ({ s: Math.round(s * 1e6) / 1e6, p: candidateProbability(s, b.bands, b.rows) }));
  if (flags.json) reporter.json(paramsJson({ flags, b, grid, table }));
  else printParams({ flags, b, grid, table });
}

/** The --json form of a params run. */
function paramsJson({ flags, b, grid, table }: ParamsRun): Record<string, unknown> {
  return {
    threshold: flags.threshold,
    numPerm: flags.numPerm,
    bands: b.bands,
    rows: b.rows,
    hashesUsed: b.bands * b.rows,
    rule: b.rule,
    recallAtThreshold: b.recallAtThreshold,
    falsePositiveArea: b.falsePositiveArea,
    falseNegativeArea: b.falseNegativeArea,
    ruleOfThumb: ruleOfThumb(b.bands, b.rows),
    curve: table,
    ...(flags.curves
      ? {
        curves: flags.curves.map((c) => ({
          ...c,
          ruleOfThumb: ruleOfThumb(c.bands, c.rows),
          curve: grid.map((x) => ({ s: Math.round(x * 1e6) / 1e6, p: candidateProbability(x, c.bands, c.rows) })),
        })),
      }
      : {}),
  };
}

/** The text form of a params run, on stdout. */
function printParams({ flags, b, table }: ParamsRun): void {
  const t = flags.threshold;
  const out = (s: string): void => void process.stdout.write(s + '\n');
  const rule = b.rule === 'min-recall'
    ? `P(${t}) ≥ ${flags.minRecall ?? ENGINE_DEFAULTS.minRecall} with the smallest false-positive area`
    : b.rule === 'weights'
    ? `minimum of ${flags.weights!.fp}·FP + ${flags.weights!.fn}·FN`
    : b.rule === 'explicit'
    ? 'explicit'
    : `best effort: no banding reaches P(${t}) ≥ ${flags.minRecall ?? ENGINE_DEFAULTS.minRecall}`;
  out(`threshold ${t}, ${flags.numPerm} hashes → b = ${b.bands} bands × r = ${b.rows} rows (${b.bands * b.rows} hashes used; rule: ${rule})`);
  out(
    `rule of thumb t ≈ (1/b)^(1/r) = (1/${b.bands})^(1/${b.rows}) = ${
      ruleOfThumb(b.bands, b.rows).toFixed(3)
    }   (where this S-curve is steepest; the threshold is ${t})`,
  );
  out(`P(${t}) = ${b.recallAtThreshold.toFixed(4)}   expected recall of a pair exactly at the threshold`);
  out(`FP area ∫₀^t P(s) ds     = ${b.falsePositiveArea.toFixed(5)}`);
  out(`FN area ∫_t^1 1−P(s) ds  = ${b.falseNegativeArea.toFixed(5)}`);
  out('');
  out('   s      P(s)');
  for (const { s, p } of table) {
    const bar = '█'.repeat(Math.round(p * 30));
    out(`${s.toFixed(2).padStart(5)}  ${p.toFixed(4)}  ${bar}${s === t ? '  ← threshold' : ''}`);
  }
  if (flags.curves) {
    out('');
    for (const line of sCurveChart([{ bands: b.bands, rows: b.rows }, ...flags.curves], t)) out(line);
  }
}

/** The rule of thumb: the similarity (1/b)^(1/r) where b bands of r rows switch on. */
export function ruleOfThumb(bands: number, rows: number): number {
  return Math.pow(1 / bands, 1 / rows);
}

/** Parses `20x5,10x10` into bandings. */
function parseCurves(v: string): { bands: number; rows: number }[] {
  const out = v.split(',').map((part) => {
    const m = /^\s*(\d+)\s*[x×]\s*(\d+)\s*$/.exec(part);
    const bands = m ? Number(m[1]) : NaN;
    const rows = m ? Number(m[2]) : NaN;
    if (!m || bands < 1 || rows < 1 || bands > 65536 || rows > 65536) throw new InvalidArgumentError(`curves must be b×r pairs like 20x5,10x10, got "${part}"`);
    return { bands, rows };
  });
  if (out.length > 8) throw new InvalidArgumentError(`at most 8 curves, got ${out.length}`);
  return out;
}

/** Marks of the curves in the chart, in order. */
const MARKS = ['●', '○', '+', 'x', '*', '#', '%', '@', '&'];

/**
 * Several S-curves P(s) in one text chart (s across, P up), 61 × 21 cells, each curve with its
 * own mark, the threshold as a vertical line; a legend with each banding's rule of thumb follows.
 */
export function sCurveChart(curves: readonly { bands: number; rows: number }[], threshold: number): string[] {
  const W = 61;
  const H = 21;
  const grid: string[][] = Array.from({ length: H }, () => Array.from({ length: W }, () => ' '));
  const tx = Math.round(threshold * (W - 1));
  for (let y = 0; y < H; y++) grid[y]![tx] = '│';
  curves.forEach((c, k) => {
    let prev = -1;
    for (let x = 0; x < W; x++) {
      const row = H - 1 - Math.round(candidateProbability(x / (W - 1), c.bands, c.rows) * (H - 1));
      // A steep step climbs several rows in one column: mark the rows between, or the curve has holes.
      const bottom = prev < 0 ? row : Math.max(row, prev - 1);
      for (let y = row; y <= bottom; y++) grid[y]![x] = MARKS[k % MARKS.length]!;
      prev = row;
    }
  });
  const lines = ['P(s)'];
  for (let y = 0; y < H; y++) {
    const label = y === 0 ? '1.0' : y === H - 1 ? '0.0' : y === (H - 1) / 2 ? '0.5' : '';
    lines.push(`${label.padStart(4)} ┤${grid[y]!.join('')}`);
  }
  lines.push(`     └${'─'.repeat(W)}`);
  lines.push(`      0${' '.repeat(Math.floor(W / 2) - 2)}0.5${' '.repeat(W - Math.floor(W / 2) - 3)}1  s (│ = threshold ${threshold})`);
  curves.forEach((c, k) => {
    lines.push(
      `  ${MARKS[k % MARKS.length]} b=${c.bands} × r=${c.rows}${k === 0 ? ' (chosen)' : ''}: (1/b)^(1/r) = ${
        ruleOfThumb(c.bands, c.rows).toFixed(3)
      }, P(${threshold}) = ${candidateProbability(threshold, c.bands, c.rows).toFixed(4)}`,
    );
  });
  return lines;
}
