/**
 * The recall of an LSH run, estimated from the pairs it found (Horvitz–Thompson).
 *
 * A pair of similarity s becomes a candidate with probability P(s) = 1 − (1 − s^r)^b. Each verified
 * pair therefore stands for 1/P(s) pairs of its similarity, found or not: N̂ = Σ 1/P(s) over the
 * found pairs estimates the number N of pairs at or above the threshold, and found / N̂ the recall.
 *
 * Standard error. Were the pairs' inclusions independent, Var(N̂) = Σ_all (1 − P)/P, which
 * Σ_found (1 − P)/P² estimates without bias. They are not: pairs of one cluster of near duplicates
 * share documents, hence signatures, and are found or missed together (on generated corpora the
 * independent formula's errors came out 1.4 to 2 times too small). So the pairs are summed per
 * unit u (a cluster): Var̂(N̂) = Σ_u (Σ_{i∈u} √(1 − P_i)/P_i)², which is the independent formula
 * for single pairs and unbiased when a unit's pairs are found all together or not at all, its
 * other extreme. The recall found/N̂ differs from the run's actual recall found/N by
 * found·(1/N̂ − 1/N) ≈ −found·(N̂ − N)/N², so by the delta method SE(recall) ≈ recall · SE(N̂) / N̂.
 * Pairs found together by construction (copies of one document collide in the same bands) are one
 * term: one similarity with its count c, adding c/P to N̂ and c·√(1 − P)/P to its unit's sum.
 *
 * Limits: the estimate knows of missed pairs only through found pairs of similar similarity; a run
 * that found few pairs near the threshold, where P is small, can miss many and not know it (its
 * standard error is then too small as well).
 * @module
 */

/** P(s) = 1 − (1 − s^r)^b, computed as −expm1(b·log1p(−s^r)) so that small P keep their digits. */
function foundProbability(s: number, bands: number, rows: number): number {
  const x = Math.pow(s, rows);
  return x >= 1 ? 1 : -Math.expm1(bands * Math.log1p(-x));
}

/** The recall of a run estimated from its found pairs ({@link estimateRecall}). */
export interface RecallEstimate {
  /** Pairs found (verified at or above the threshold), counted with their multiplicities. */
  found: number;
  /** N̂ = Σ count/P(s): the estimated number of pairs at or above the threshold, found or not. */
  estimatedPairs: number;
  /** √(Σ_u (Σ_{i∈u} count_i·√(1 − P_i)/P_i)²) over units u: the standard error of {@link estimatedPairs}. */
  estimatedPairsStdError: number;
  /** found / N̂ (NaN when nothing was found: there is nothing to estimate from). */
  recall: number;
  /** recall · SE(N̂) / N̂, by the delta method (NaN when nothing was found). */
  stdError: number;
}

/**
 * Sums the Horvitz–Thompson terms of found pairs one at a time, for pipelines that never hold their
 * similarities in one array; {@link estimateRecall} is the one-call form.
 */
export class RecallAccumulator {
  private found = 0;
  private total = 0;
  /** Σ count·√(1 − P)/P per unit: in an array for units [0, unitCount), else in a map. */
  private readonly units = new Map<number, number>();
  private readonly dense: Float64Array | undefined;
  private single = 0;

  /**
   * @param bands - b of the banding that found the pairs.
   * @param rows - r of that banding.
   * @param unitCount - when the units are integers in [0, unitCount): sum them in an array (8 bytes
   *   per unit, a third of the time per pair of a map's lookups).
   */
  constructor(readonly bands: number, readonly rows: number, unitCount = 0) {
    if (!(Number.isInteger(bands) && bands >= 1 && Number.isInteger(rows) && rows >= 1)) {
      throw new RangeError(`bands and rows must be positive integers, got ${bands} × ${rows}`);
    }
    this.dense = unitCount > 0 ? new Float64Array(unitCount) : undefined;
  }

  /**
   * Adds `count` pairs of similarity `s` found together (one inclusion event), in `unit` (pairs
   * whose inclusions are correlated, e.g. the cluster's number; undefined: a unit of its own).
   */
  add(s: number, count = 1, unit?: number): void {
    if (!(s > 0 && s <= 1)) throw new RangeError(`a found pair's similarity must be in (0, 1], got ${s}`);
    const p = foundProbability(s, this.bands, this.rows);
    this.found += count;
    this.total += count / p;
    const term = (count * Math.sqrt(1 - p)) / p;
    if (term === 0) return;
    if (unit === undefined) this.single += term * term;
    else if (this.dense && unit >= 0 && unit < this.dense.length) this.dense[unit]! += term;
    else this.units.set(unit, (this.units.get(unit) ?? 0) + term);
  }

  /** The sums behind the estimate, which add up over disjoint sets of units ({@link recallFromParts}). */
  parts(): RecallParts {
    let variance = this.single;
    for (const u of this.units.values()) variance += u * u;
    if (this.dense) { for (const u of this.dense) variance += u * u; }
    return { found: this.found, total: this.total, variance };
  }

  /** The estimate from the pairs added so far. */
  result(): RecallEstimate {
    return recallFromParts([this.parts()]);
  }
}

/** An estimate's sums over some units: pairs found, Σ 1/P, and the units' summed squared errors. */
export interface RecallParts {
  found: number;
  total: number;
  variance: number;
}

/** The estimate from the sums of disjoint sets of units (e.g. a sharded job's tasks). */
export function recallFromParts(parts: readonly RecallParts[]): RecallEstimate {
  let found = 0;
  let total = 0;
  let variance = 0;
  for (const p of parts) {
    found += p.found;
    total += p.total;
    variance += p.variance;
  }
  const se = Math.sqrt(variance);
  const recall = found > 0 ? found / total : NaN;
  return { found, estimatedPairs: total, estimatedPairsStdError: se, recall, stdError: found > 0 ? (recall * se) / total : NaN };
}

/**
 * Estimates the recall of an LSH run with `bands` bands of `rows` rows from the similarities of the
 * pairs it found (exact Jaccard, at or above the threshold), with its standard error. `counts[i]`,
 * when given, is how many pairs similarity i stands for, found together (default 1 each);
 * `units[i]`, the unit (cluster) of pair i, whose pairs' errors are summed before squaring
 * (default: each pair independent).
 * @example
 * ```ts
 * const e = estimateRecall([0.81, 0.9, 1], 16, 6);
 * console.log(e.recall.toFixed(4), '±', e.stdError.toFixed(4));
 * ```
 */
export function estimateRecall(
  similarities: ArrayLike<number>,
  bands: number,
  rows: number,
  options: { counts?: ArrayLike<number>; units?: ArrayLike<number> } = {},
): RecallEstimate {
  const { counts, units } = options;
  const acc = new RecallAccumulator(bands, rows);
  for (let i = 0; i < similarities.length; i++) acc.add(similarities[i]!, counts ? counts[i]! : 1, units ? units[i] : undefined);
  return acc.result();
}
