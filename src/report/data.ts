/**
 * The data behind `neardup report`: everything the charts show, computed by the library and kept
 * as plain JSON (rendering is in ./html.ts). {@link buildReportData} runs the steps in order; each
 * step is a function of ./charts.ts, ./sweep.ts or ./clusterView.ts, and the shape of the result is
 * in ./types.ts.
 * @module
 */
import { dedup, DEDUP_DEFAULTS, type DedupResult } from '../dedup/dedup.js';
import { createShingler, type ShingleOptions } from '../text/shingler.js';
import { createMinHasher } from '../sketch/minhash.js';
import { splitmix32 } from '../hash/mix.js';
import { clusterSizeCounts, jaccardVsK, round, sCurvePoints, similarityHistogram } from './charts.js';
import { bandsSweep, estimateSample, runBandingRow } from './sweep.js';
import { borderlinePairs, clusterView } from './clusterView.js';
import type { ReportData, ReportDataOptions } from './types.js';
import { reportCurves } from './curves.js';

export type { BorderlinePair, HistogramBin, ReportComparison, ReportData, ReportDataOptions, ReportMember } from './types.js';

function presetName(o: ShingleOptions | undefined): string {
  const n = o?.normalize;
  if (!n) return 'default';
  if (n.custom) return 'custom';
  return n.preset ?? 'default';
}

/** The report's summary of the run: counts, the largest cluster, and the timings (the report's own since `tStart`). */
function reportSummary(result: DedupResult, n: number, timings: ReportDataOptions['timings'], tStart: number): ReportData['summary'] {
  const s = result.stats;
  return {
    docs: n,
    emptyDocs: s.emptyDocs,
    candidates: s.candidates,
    pairs: s.pairs,
    clusters: s.clusters,
    docsInClusters: result.clusters.reduce((a, c) => a + c.members.length, 0),
    duplicates: result.clusters.reduce((a, c) => a + c.members.length - 1, 0),
    largestCluster: result.clusters.reduce((a, c) => Math.max(a, c.members.length), 0),
    timings: Object.fromEntries(
      [...Object.entries(timings ?? {}), ...Object.entries(s.timings).filter(([k]) => k !== 'total'), ['report', performance.now() - tStart]].map((
        [k, v],
      ) => [k, round(v as number, 1)]),
    ),
  };
}

/**
 * Computes the report data of a corpus: runs (or takes) the dedup, then the S-curve, the
 * similarity histogram, a sample of estimated against exact similarities, the bands sweep,
 * similarity against shingle size, and the largest clusters with their shared passages.
 * Deterministic for fixed inputs, options and seed (except `generatedAt` and timings).
 */
export function buildReportData(texts: readonly string[], options: ReportDataOptions = {}): ReportData {
  const o = options.dedup ?? {};
  const threshold = o.threshold ?? DEDUP_DEFAULTS.threshold;
  const verify = o.verify ?? DEDUP_DEFAULTS.verify;
  const result = options.result ?? dedup(texts, o);
  const tStart = performance.now();
  const n = texts.length;
  const idOf = (i: number): string => String(options.ids ? options.ids[i]! : i);
  const shingler = createShingler(o.shingle);
  const hasher = createMinHasher(o.minhash);
  const sets = texts.map((t) => shingler.set(t));
  const b = result.bands;
  const view = { texts, sets, idOf };
  const shown = { maxTextChars: options.maxTextChars ?? 1500, minPassage: options.minPassage ?? 15 };

  const points = sCurvePoints(b.bands, b.rows);
  const bins = similarityHistogram(result.pairs);
  // The bands sweep at sweepNumPerm hashes (same shingles, method and seed).
  const sweepNumPerm = options.sweepNumPerm ?? 100;
  const sweep = bandsSweep(sets, {
    bands: options.sweepBands ?? [2, 5, 10, 20],
    numPerm: sweepNumPerm,
    minhash: o.minhash,
    verifyCap: options.sweepVerifyCap ?? 2_000_000,
    threshold,
  });
  // Estimated against exact similarity, on a uniform sample of the sweep's most permissive candidates.
  const sample = estimateSample(sets, sweep.pool, { want: options.samplePairs ?? 1000, hasher, rand: splitmix32(options.seed ?? 1), idOf });
  const jk = jaccardVsK(texts, result.pairs, idOf, {
    kValues: options.kValues ?? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 20],
    pairs: options.kPairs ?? 3,
    normalize: o.shingle?.normalize,
  });
  const clusters = clusterView(view, result.clusters, {
    ...shown,
    threshold,
    clusters: options.clusters ?? 6,
    membersPerCluster: Math.max(2, options.membersPerCluster ?? 4),
  });
  // This run's own banding, next to the sweep.
  sweep.rows.push(runBandingRow(result, hasher.numPerm, verify === 'exact'));
  const clusterSizes = clusterSizeCounts(result.clusters);
  const borderline = borderlinePairs(view, result.pairs, options.borderlinePairs ?? 4, shown);

  const sh = shingler.options;
  return {
    format: 'neardup-report',
    version: 1,
    generatedAt: (options.now ?? (() => new Date()))().toISOString(),
    source: options.source ?? { name: '(texts)' },
    options: {
      threshold,
      shingle: { kind: sh.kind, k: sh.k, normalize: presetName(o.shingle), multiset: sh.multiset },
      minhash: { method: hasher.method, numPerm: hasher.numPerm, seed: hasher.seed },
      verify,
      bands: b.bands,
      rows: b.rows,
      rule: b.rule,
    },
    summary: reportSummary(result, n, options.timings, tStart),
    sCurve: sCurveData(result, threshold, points),
    sCurves: reportCurves(b.bands, b.rows, hasher.numPerm, threshold),
    similarityHistogram: { measure: (o.verify ?? 'exact') === 'exact' ? 'exact Jaccard' : 'MinHash estimate', pairs: result.pairs.length, bins },
    estimateVsExact: estimateVsExact(hasher, sweep, sweepNumPerm, sample),
    bandsSweep: { numPerm: sweepNumPerm, threshold, rows: sweep.rows },
    clusterSizes,
    borderline,
    jaccardVsK: { normalize: presetName(o.shingle), pairs: jk },
    clusters,
  };
}

/** The report's S-curve of this run's banding, with the recall its verified pairs estimate. */
function sCurveData(result: DedupResult, threshold: number, points: { s: number; p: number }[]): ReportData['sCurve'] {
  const b = result.bands;
  const s = result.stats;
  return {
    bands: b.bands,
    rows: b.rows,
    threshold,
    recallAtThreshold: round(b.recallAtThreshold, 6),
    falsePositiveArea: round(b.falsePositiveArea, 6),
    falseNegativeArea: round(b.falseNegativeArea, 6),
    points,
    recall: s.recall && s.recall.found > 0
      ? {
        estimate: round(s.recall.recall, 6),
        stdError: round(s.recall.stdError, 6),
        verifiedPairs: s.recall.found,
        estimatedPairs: round(s.recall.estimatedPairs, 2),
      }
      : null,
  };
}

/** The report's MinHash estimates against exact similarity, on a sample of the sweep's candidates. */
function estimateVsExact(
  hasher: { numPerm: number; method: ReportData['estimateVsExact']['method'] },
  sweep: { poolBands: number },
  sweepNumPerm: number,
  sample: { pairs: ReportData['estimateVsExact']['pairs']; sse: number },
): ReportData['estimateVsExact'] {
  return {
    numPerm: hasher.numPerm,
    method: hasher.method,
    pool: `uniform sample of the candidate pairs of ${sweep.poolBands} bands × ${
      Math.floor(sweepNumPerm / Math.max(1, sweep.poolBands))
    } rows at ${sweepNumPerm} hashes`,
    rmse: sample.pairs.length ? round(Math.sqrt(sample.sse / sample.pairs.length), 5) : 0,
    pairs: sample.pairs,
  };
}
