/**
 * The shape of the report's data (plain JSON) and the options that build it; computed by ./data.ts,
 * rendered by ./html.ts.
 * @module
 */
import type { DedupOptions, DedupResult } from '../dedup/dedup.js';
import type { Passage } from '../similarity/passages.js';

/** Options of {@link buildReportData}. Every field has a default. */
export interface ReportDataOptions {
  /** The dedup run being reported (threshold, shingles, MinHash, banding, verify). Default: dedup's defaults. */
  dedup?: DedupOptions;
  /** A dedup result already computed with `dedup` on the same texts (saves running it again). */
  result?: DedupResult;
  /** Document ids shown in the report (default: the 0-based index). */
  ids?: readonly (string | number)[];
  /** Where the texts came from, shown in the summary. */
  source?: { name: string; format?: string; bytes?: number };
  /** Pairs in the estimated-against-exact sample. Default 1000. */
  samplePairs?: number;
  /** Band counts of the sweep. Default [2, 5, 10, 20]. */
  sweepBands?: number[];
  /** Signature length of the sweep (rows = ⌊sweepNumPerm / bands⌋). Default 100. */
  sweepNumPerm?: number;
  /** Candidates above this count are counted but not split by exact similarity. Default 2,000,000. */
  sweepVerifyCap?: number;
  /** Character shingle sizes of the similarity-against-k chart. Default 1…12, 15, 20. */
  kValues?: number[];
  /** Sample pairs in the similarity-against-k chart. Default 3 (at the 10th, 50th and 90th percentile). */
  kPairs?: number;
  /** Largest clusters with at least two distinct texts shown side by side (and as many exact-copy clusters listed). Default 6. */
  clusters?: number;
  /**
   * Members shown per cluster: the first one, compared with the members whose texts differ most from
   * it (exact copies are counted, not repeated). Default 4.
   */
  membersPerCluster?: number;
  /** Texts in the cluster view are cut to this many characters. Default 1500. */
  maxTextChars?: number;
  /** Shortest highlighted shared passage, in characters. Default 15. */
  minPassage?: number;
  /** Seed of the samples. Default 1. */
  seed?: number;
  /** Clock for `generatedAt` (tests pass a fixed one). Default: now. */
  now?: () => Date;
  /** Times of stages outside this function (e.g. `read`), in ms, shown before dedup's in the summary. */
  timings?: Record<string, number>;
  /** Pairs just above the threshold shown side by side. Default 4. */
  borderlinePairs?: number;
}

/** A near-duplicate pair just above the threshold, with both texts (cut) and their shared passages. */
export interface BorderlinePair {
  a: string;
  b: string;
  similarity: number;
  aText: string;
  bText: string;
  passages: Passage[];
}

/** One bar of the similarity histogram: pairs with x0 ≤ similarity < x1 (the last bin includes 1). */
export interface HistogramBin {
  x0: number;
  x1: number;
  count: number;
}

/** One member of a shown cluster. */
export interface ReportMember {
  /** Document id. */
  id: string;
  /** 0-based position in the input. */
  index: number;
  /** Text (cut to maxTextChars). */
  text: string;
  /** True when the text was cut. */
  truncated: boolean;
  /** Members of the cluster with exactly this text (this one included). */
  copies: number;
}

/** The shared passages of a cluster's first member and another member. */
export interface ReportComparison {
  /** Index into the cluster's members of the other member (the first member is 0). */
  member: number;
  /** Exact Jaccard of the two documents' shingle sets. */
  similarity: number;
  /** Shared passages; a-offsets in member 0's shown text, b-offsets in the other member's. */
  passages: Passage[];
  /** Fraction of the first member's shown text inside a passage. */
  coverage: number;
  /** True when `similarity` is below the threshold: the two share the cluster through other members. */
  belowThreshold?: boolean;
  /**
   * For a pair below the threshold, the member that links them: both its similarities (with the
   * first member, then with the other) are at or above the threshold. Absent when the link is longer.
   */
  linkedThrough?: { id: string; similarities: [number, number] };
}

/** Everything the report shows. Plain JSON. */
export interface ReportData {
  format: 'neardup-report';
  version: 1;
  /** ISO timestamp. */
  generatedAt: string;
  source: { name: string; format?: string; bytes?: number };
  options: {
    threshold: number;
    shingle: { kind: string; k: number; normalize: string; multiset: boolean };
    minhash: { method: string; numPerm: number; seed: number };
    verify: string;
    bands: number;
    rows: number;
    rule: string;
  };
  summary: {
    docs: number;
    emptyDocs: number;
    candidates: number;
    pairs: number;
    clusters: number;
    docsInClusters: number;
    duplicates: number;
    largestCluster: number;
    timings: Record<string, number>;
  };
  /** The S-curve P(s) = 1 − (1 − s^r)^b of the chosen banding, s = 0, 0.01, …, 1. */
  sCurve: {
    bands: number;
    rows: number;
    threshold: number;
    recallAtThreshold: number;
    falsePositiveArea: number;
    falseNegativeArea: number;
    points: { s: number; p: number }[];
    /**
     * The run's recall estimated from its verified pairs (Horvitz–Thompson over P(s), see
     * src/lsh/recallEstimate.ts), with its standard error; null when the run has none (verify not
     * exact, candidates not LSH, no pairs found). Absent in reports written before it.
     */
    recall?: { estimate: number; stdError: number; verifiedPairs: number; estimatedPairs: number } | null;
  };
  /** Several (b, r) S-curves with their (1/b)^(1/r) rule of thumb (report/curves.ts). */
  sCurves?: ReportCurves;
  /** Similarities of the verified pairs, in bins of 0.01 from ⌊min⌋ to 1. */
  similarityHistogram: { measure: string; pairs: number; bins: HistogramBin[] };
  /** MinHash estimate against exact Jaccard for a sample of pairs, with the RMSE. */
  estimateVsExact: {
    numPerm: number;
    method: string;
    pool: string;
    rmse: number;
    pairs: { a: string; b: string; exact: number; estimate: number }[];
  };
  /**
   * Candidate pairs for b bands at sweepNumPerm hashes (the bands sweep), split by exact
   * similarity; the last row (`run: true`) is this run's own banding at its own signature length.
   */
  bandsSweep: {
    numPerm: number;
    threshold: number;
    rows: {
      bands: number;
      rows: number;
      candidates: number;
      atOrAbove: number | null;
      below: number | null;
      recallAtThreshold: number;
      numPerm?: number;
      run?: boolean;
    }[];
  };
  /** How many clusters have each size, smallest size first. */
  clusterSizes: { size: number; count: number }[];
  /** The near-duplicate pairs closest to the threshold (from above), side by side. */
  borderline: BorderlinePair[];
  /** Exact Jaccard of character k-shingles against k, for a few sample pairs. */
  jaccardVsK: { normalize: string; pairs: { label: string; a: string; b: string; points: { k: number; jaccard: number }[] }[] };
  /** The largest clusters: the first member side by side with the most different other members. */
  clusters: {
    total: number;
    /** Clusters whose members all have the same text. */
    exactCopyClusters: number;
    /** The largest of those (ids and sizes only). */
    copiesOnly: { id: string; size: number }[];
    shown: { id: string; size: number; distinctTexts: number; members: ReportMember[]; comparisons: ReportComparison[] }[];
  };
}

/** One banding's S-curve in the report (src/report/curves.ts). */
export interface ReportCurve {
  bands: number;
  rows: number;
  /** `20×5`. */
  label: string;
  /** True for the banding the run used. */
  chosen: boolean;
  /** (1/b)^(1/r). */
  ruleOfThumb: number;
  /** P(s) = 1 − (1 − s^r)^b at s = 0, 0.01, …, 1 (5 decimals, as the report's S-curve). */
  points: { s: number; p: number }[];
}

/** The report's `sCurves` section (src/report/curves.ts): the run's threshold and the curves, the chosen one first. */
export interface ReportCurves {
  threshold: number;
  curves: ReportCurve[];
}
