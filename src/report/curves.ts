/**
 * Several (b, r) S-curves for the HTML report (bandings compared in one chart), each
 * with the rule of thumb t ≈ (1/b)^(1/r), the similarity where that curve is steepest. The
 * same data `neardup params --curves` prints, chosen here without flags: the run's banding and its
 * neighbours with one and two rows more or fewer on the same hash budget.
 * @module
 */
import { sCurvePoints } from './charts.js';
import type { ReportCurve, ReportCurves } from './types.js';

export type { ReportCurve, ReportCurves } from './types.js';

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/** The rule of thumb for b bands of r rows: (1/b)^(1/r). */
export function bandingRuleOfThumb(bands: number, rows: number): number {
  return Math.pow(1 / bands, 1 / rows);
}

/** The S-curve of one banding, for the report. */
export function reportCurve(bands: number, rows: number, chosen: boolean): ReportCurve {
  return { bands, rows, label: `${bands}×${rows}`, chosen, ruleOfThumb: round6(bandingRuleOfThumb(bands, rows)), points: sCurvePoints(bands, rows) };
}

/**
 * The chosen banding (`bands` × `rows`) and up to four neighbours on the same `numPerm` hashes
 * (r − 2 … r + 2 rows, ⌊numPerm / r⌋ bands), so the reader sees what moving the steep part costs.
 */
export function reportCurves(bands: number, rows: number, numPerm: number, threshold: number): ReportCurves {
  const curves = [reportCurve(bands, rows, true)];
  for (const r of [rows - 2, rows - 1, rows + 1, rows + 2]) {
    const b = Math.floor(numPerm / r);
    if (r >= 1 && b >= 1) curves.push(reportCurve(b, r, false));
  }
  return { threshold, curves };
}
