/**
 * The report's small charts, each one step of {@link buildReportData}: the S-curve, the similarity
 * histogram, cluster sizes, and similarity against shingle size.
 * @module
 */
import type { DedupResult } from '../dedup/dedup.js';
import type { NormalizeOptions } from '../text/normalize.js';
import { createShingler } from '../text/shingler.js';
import { candidateProbability } from '../lsh/params.js';
import { jaccard } from '../similarity/jaccard.js';
import type { HistogramBin, ReportData } from './types.js';

/** Rounds to `d` decimals (the report's numbers are for reading, not for recomputing). */
export const round = (x: number, d = 4): number => Math.round(x * 10 ** d) / 10 ** d;

/**
 * `x` rounded down to `d` decimals, exactly: never above `x` (a coverage of 0.99996 stays below 1, so
 * a text that differs in one character is not "100%"), and never a step below it when `x * 10^d`
 * falls just short in floating point (0.57 stays 0.57).
 */
export const roundDown = (x: number, d = 4): number => {
  const y = Math.floor(x * 10 ** d);
  return (y + 1) / 10 ** d <= x ? (y + 1) / 10 ** d : y / 10 ** d;
};

/** The S-curve P(s) = 1 − (1 − s^r)^b of a banding on the grid s = 0, 0.01, …, 1. */
export function sCurvePoints(bands: number, rows: number): { s: number; p: number }[] {
  const points: { s: number; p: number }[] = [];
  for (let i = 0; i <= 100; i++) points.push({ s: i / 100, p: round(candidateProbability(i / 100, bands, rows), 5) });
  return points;
}

/** Verified pair similarities in bins of 0.01 from ⌊min⌋ to 1 (the last bin includes 1); none without pairs. */
export function similarityHistogram(pairs: DedupResult['pairs']): HistogramBin[] {
  const bins: HistogramBin[] = [];
  if (pairs.length === 0) return bins;
  let lo = 1;
  for (const p of pairs) lo = Math.min(lo, p.similarity);
  const start = Math.floor(lo * 100);
  const counts = new Array<number>(101 - start).fill(0);
  for (const p of pairs) counts[Math.min(99, Math.floor(p.similarity * 100 + 1e-9)) - start]!++;
  for (let i = start; i < 100; i++) bins.push({ x0: i / 100, x1: (i + 1) / 100, count: counts[i - start]! });
  return bins;
}

/** How many clusters have each size, smallest size first. */
export function clusterSizeCounts(clusters: DedupResult['clusters']): ReportData['clusterSizes'] {
  const sizeCount = new Map<number, number>();
  for (const c of clusters) sizeCount.set(c.members.length, (sizeCount.get(c.members.length) ?? 0) + 1);
  return [...sizeCount].map(([size, count]) => ({ size, count })).sort((x, y) => x.size - y.size);
}

/** Options of {@link jaccardVsK}. */
export interface JaccardVsKOptions {
  /** Character shingle sizes. */
  kValues: number[];
  /** Sample pairs (at evenly spaced percentiles from the 10th to the 90th; one: the median). */
  pairs: number;
  /** The run's normalization, used for every k. */
  normalize: NormalizeOptions | undefined;
}

/** Exact Jaccard of character k-shingles against k for a few verified pairs below 1, picked by percentile of similarity. */
export function jaccardVsK(
  texts: readonly string[],
  pairs: DedupResult['pairs'],
  idOf: (i: number) => string,
  o: JaccardVsKOptions,
): ReportData['jaccardVsK']['pairs'] {
  const { kValues, normalize } = o;
  const graded = pairs.filter((p) => p.similarity < 1).sort((x, y) => x.similarity - y.similarity || x.a - y.a || x.b - y.b);
  const kPairs = Math.min(o.pairs, graded.length);
  const quantiles = kPairs === 1 ? [0.5] : Array.from({ length: kPairs }, (_, i) => 0.1 + (0.8 * i) / (kPairs - 1));
  const kShinglers = kValues.map((k) => createShingler({ kind: 'char', k, ...(normalize ? { normalize } : {}) }));
  const chosen = new Set<number>();
  const jk: ReportData['jaccardVsK']['pairs'] = [];
  for (const q of quantiles) {
    const at = Math.min(graded.length - 1, Math.round(q * (graded.length - 1)));
    if (chosen.has(at)) continue;
    chosen.add(at);
    const p = graded[at]!;
    jk.push({
      label: `${idOf(p.a)} ~ ${idOf(p.b)} (${Math.round(q * 100)}th pct)`,
      a: idOf(p.a),
      b: idOf(p.b),
      points: kValues.map((k, i) => ({ k, jaccard: round(jaccard(kShinglers[i]!.set(texts[p.a]!), kShinglers[i]!.set(texts[p.b]!))) })),
    });
  }
  return jk;
}
