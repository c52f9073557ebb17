/**
 * Choosing the LSH banding (b bands of r rows) for a similarity threshold.
 * A pair of similarity s becomes a candidate with probability P(s) = 1 − (1 − s^r)^b.
 * @module
 */
import { checkThreshold, ENGINE_DEFAULTS } from '../engine/options.js';
import type { ChooseBandsOptions } from '../engine/config.js';
export type { ChooseBandsOptions } from '../engine/config.js';

/** The threshold check of the engine's options (../engine/options.ts), where it is defined. */
export { checkThreshold };

/** P(s) = 1 − (1 − s^r)^b: the chance a pair of Jaccard similarity s shares at least one band. */
export function candidateProbability(s: number, bands: number, rows: number): number {
  return 1 - Math.pow(1 - Math.pow(s, rows), bands);
}

/** Simpson steps of the areas a choice reports and is decided by. */
const STEPS = 2000;
/**
 * Steps of the first, coarse comparison of every (b, r): only those within SHORTLIST_SLACK of the
 * coarse best are integrated again with STEPS: a choice by weights, which integrates every (b, r)
 * twice, took 231–237 ms and takes 15–16 ms (128 slots). The coarse areas of these smooth
 * S-curves are within ~1e-6 of the fine ones, far inside the slack; test/lsh/params.test.ts checks
 * the choice against a scan of every (b, r) at full precision over a grid of thresholds and lengths.
 */
const COARSE_STEPS = 100;
const SHORTLIST_SLACK = (best: number): number => 0.02 * best + 1e-9;

/** ∫ P(s) ds over [lo, hi], by composite Simpson's rule (the integrand is smooth). */
function integrate(f: (s: number) => number, lo: number, hi: number, steps = STEPS): number {
  if (hi <= lo) return 0;
  const h = (hi - lo) / steps;
  let sum = f(lo) + f(hi);
  for (let i = 1; i < steps; i++) sum += (i % 2 === 1 ? 4 : 2) * f(lo + i * h);
  return (sum * h) / 3;
}

/** The false-positive area ∫₀^t P(s) ds: how much below-threshold mass still becomes candidates. */
export function falsePositiveArea(threshold: number, bands: number, rows: number): number {
  return fpArea(threshold, bands, rows, STEPS);
}

/** The false-negative area ∫_t^1 (1 − P(s)) ds: how much above-threshold mass is missed. */
export function falseNegativeArea(threshold: number, bands: number, rows: number): number {
  return fnArea(threshold, bands, rows, STEPS);
}

const fpArea = (t: number, b: number, r: number, steps: number): number => integrate((s) => candidateProbability(s, b, r), 0, t, steps);
const fnArea = (t: number, b: number, r: number, steps: number): number => integrate((s) => 1 - candidateProbability(s, b, r), t, 1, steps);

/** b bands of r rows. */
interface Shape {
  b: number;
  r: number;
}

/**
 * The shape of least `cost` (first in order among equals, as a plain scan over `shapes` at full
 * precision would pick): a coarse cost of every shape, then the full one of the shortlist.
 */
function cheapest(shapes: Shape[], cost: (x: Shape, steps: number) => number): (Shape & { cost: number }) | undefined {
  const coarse = shapes.map((x) => cost(x, COARSE_STEPS));
  const floor = coarse.reduce((a, c) => Math.min(a, c), Infinity);
  let best: (Shape & { cost: number }) | undefined;
  for (let i = 0; i < shapes.length; i++) {
    if (coarse[i]! > floor + SHORTLIST_SLACK(floor)) continue;
    const c = cost(shapes[i]!, STEPS);
    if (!best || c < best.cost - 1e-15) best = { ...shapes[i]!, cost: c };
  }
  return best;
}

/** The chosen banding and what it promises. */
export interface BandChoice {
  /** Number of bands b. */
  bands: number;
  /** Rows per band r. */
  rows: number;
  /** The threshold it was chosen for. */
  threshold: number;
  /** Signature length it was chosen for (b·r ≤ numPerm; the remaining slots are unused by LSH). */
  numPerm: number;
  /** P(threshold): the expected recall of a pair exactly at the threshold. */
  recallAtThreshold: number;
  /** ∫₀^t P(s) ds. */
  falsePositiveArea: number;
  /** ∫_t^1 (1 − P(s)) ds. */
  falseNegativeArea: number;
  /** The S-curve at s = 0.1, 0.2, …, 1.0. */
  curve: { s: number; p: number }[];
  /** How it was chosen. */
  rule: 'min-recall' | 'weights' | 'explicit' | 'best-effort';
}

function describe(threshold: number, numPerm: number, shape: { b: number; r: number }, rule: BandChoice['rule']): BandChoice {
  const { b: bands, r: rows } = shape;
  const curve = [];
  for (let i = 1; i <= 10; i++) {
    const s = i / 10;
    curve.push({ s, p: candidateProbability(s, bands, rows) });
  }
  return {
    bands,
    rows,
    threshold,
    numPerm,
    recallAtThreshold: candidateProbability(threshold, bands, rows),
    falsePositiveArea: falsePositiveArea(threshold, bands, rows),
    falseNegativeArea: falseNegativeArea(threshold, bands, rows),
    curve,
    rule,
  };
}

/**
 * Picks b bands of r rows (b·r ≤ numPerm) for `threshold`.
 *
 * Default rule: P(threshold) ≥ minRecallAtThreshold (0.99) with the fewest expected false
 * candidates, i.e. the smallest ∫₀^t P(s) ds. When no (b, r) reaches the recall, the one with the
 * highest P(threshold) is returned with `rule: 'best-effort'`.
 */
export function chooseBands(threshold: number, numPerm: number, options: ChooseBandsOptions = {}): BandChoice {
  checkThreshold(threshold);
  if (!Number.isInteger(numPerm) || numPerm < 1) throw new RangeError(`numPerm must be a positive integer, got ${numPerm}`);
  const { bands, rows } = options;
  if (bands !== undefined || rows !== undefined) {
    const b = bands ?? Math.floor(numPerm / rows!);
    const r = rows ?? Math.floor(numPerm / b);
    if (!Number.isInteger(b) || !Number.isInteger(r) || b < 1 || r < 1 || b * r > numPerm) {
      throw new RangeError(`bands × rows must be positive integers with bands·rows ≤ numPerm (${numPerm}), got ${b} × ${r}`);
    }
    return describe(threshold, numPerm, { b, r }, 'explicit');
  }
  if (options.weights) {
    const { fp, fn } = options.weights;
    if (!(fp >= 0 && fn >= 0 && fp + fn > 0)) throw new RangeError('weights must be non-negative and not both 0');
    const shapes: Shape[] = [];
    for (let b = 1; b <= numPerm; b++) for (let r = 1; b * r <= numPerm; r++) shapes.push({ b, r });
    const cost = (x: Shape, steps: number): number => fp * fpArea(threshold, x.b, x.r, steps) + fn * fnArea(threshold, x.b, x.r, steps);
    return describe(threshold, numPerm, cheapest(shapes, cost)!, 'weights');
  }
  const minRecall = options.minRecallAtThreshold ?? ENGINE_DEFAULTS.minRecall;
  if (!(minRecall > 0 && minRecall < 1)) throw new RangeError(`minRecallAtThreshold must be in (0, 1), got ${minRecall}`);
  const reaching: Shape[] = [];
  let fallback = { b: numPerm, r: 1, p: -1 };
  for (let r = 1; r <= numPerm; r++) {
    // For a fixed r, P(t) and the false-positive area both grow with b: the smallest b that
    // reaches the recall is the only one worth comparing.
    const maxB = Math.floor(numPerm / r);
    const pr = Math.pow(threshold, r);
    const need = pr >= 1 ? 1 : Math.ceil(Math.log(1 - minRecall) / Math.log(1 - pr) - 1e-12);
    const pMax = candidateProbability(threshold, maxB, r);
    if (pMax > fallback.p) fallback = { b: maxB, r, p: pMax };
    // Clamp first: for large r, `need` can be astronomically large (P(t) ≈ 0 per band).
    let b = Math.min(Math.max(1, need), maxB + 1);
    while (b > 1 && candidateProbability(threshold, b - 1, r) >= minRecall) b--;
    while (b <= maxB && candidateProbability(threshold, b, r) < minRecall) b++;
    if (b <= maxB) reaching.push({ b, r });
  }
  const best = cheapest(reaching, (x, steps) => fpArea(threshold, x.b, x.r, steps));
  if (!best) return describe(threshold, numPerm, fallback, 'best-effort');
  return describe(threshold, numPerm, best, 'min-recall');
}
