/**
 * The data behind `neardup report`: everything the charts show, computed by the library and kept
 * as plain JSON (rendering is in ./html.ts).
 * @module
 */
import { reportCurves, type ReportCurves } from './curves.js';
import { dedup, DEDUP_DEFAULTS, type DedupOptions, type DedupResult } from '../dedup/dedup.js';
import { createShingler, type ShingleOptions } from '../text/shingler.js';
import { createMinHasher, estimateJaccard } from '../sketch/minhash.js';
import { SignatureMatrix } from '../sketch/signatureMatrix.js';
import { candidateProbability } from '../lsh/params.js';
import { lshCandidates } from '../lsh/candidates.js';
import { jaccard } from '../similarity/jaccard.js';
import { commonPassages, type Passage } from '../similarity/passages.js';
import { splitmix32 } from '../hash/mix.js';

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
  /** Band counts of the sweep (seed 001 used 2, 5, 10, 20). Default [2, 5, 10, 20]. */
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
   * Candidate pairs for b bands at sweepNumPerm hashes (seed 001's experiment), split by exact
   * similarity; the last row (`run: true`) is this run's own banding at its own signature length.
   */
  bandsSweep: {
    numPerm: number;
    threshold: number;
    rows: { bands: number; rows: number; candidates: number; atOrAbove: number | null; below: number | null; recallAtThreshold: number; numPerm?: number; run?: boolean }[];
  };
  /** How many clusters have each size, smallest size first. */
  clusterSizes: { size: number; count: number }[];
  /** The near-duplicate pairs closest to the threshold (from above), side by side. */
  borderline: BorderlinePair[];
  /** Exact Jaccard of character k-shingles against k, for a few sample pairs (seed 001). */
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

function presetName(o: ShingleOptions | undefined): string {
  const n = o?.normalize;
  if (!n) return 'default';
  if (n.custom) return 'custom';
  return n.preset ?? 'default';
}

const round = (x: number, d = 4): number => Math.round(x * 10 ** d) / 10 ** d;

/**
 * Computes the report data of a corpus: runs (or takes) the dedup, then the S-curve, the
 * similarity histogram, a sample of estimated against exact similarities, the bands sweep,
 * similarity against shingle size, and the largest clusters with their shared passages.
 * Deterministic for fixed inputs, options and seed (except `generatedAt` and timings).
 */
export function buildReportData(texts: readonly string[], options: ReportDataOptions = {}): ReportData {
  const o = options.dedup ?? {};
  const threshold = o.threshold ?? DEDUP_DEFAULTS.threshold;
  const result = options.result ?? dedup(texts, o);
  const tStart = performance.now();
  const n = texts.length;
  const idOf = (i: number): string => String(options.ids ? options.ids[i]! : i);
  const shingler = createShingler(o.shingle);
  const hasher = createMinHasher(o.minhash);
  const rand = splitmix32(options.seed ?? 1);
  const sets = texts.map((t) => shingler.set(t));
  const b = result.bands;

  // The S-curve, on a fine grid.
  const points: { s: number; p: number }[] = [];
  for (let i = 0; i <= 100; i++) points.push({ s: i / 100, p: round(candidateProbability(i / 100, b.bands, b.rows), 5) });

  // Histogram of verified similarities.
  const bins: HistogramBin[] = [];
  if (result.pairs.length) {
    let lo = 1;
    for (const p of result.pairs) lo = Math.min(lo, p.similarity);
    const start = Math.floor(lo * 100);
    const counts = new Array<number>(101 - start).fill(0);
    for (const p of result.pairs) counts[Math.min(99, Math.floor(p.similarity * 100 + 1e-9)) - start]!++;
    for (let i = start; i < 100; i++) bins.push({ x0: i / 100, x1: (i + 1) / 100, count: counts[i - start]! });
  }

  // The bands sweep at sweepNumPerm hashes (same shingles, method and seed).
  const sweepNumPerm = options.sweepNumPerm ?? 100;
  const sweepHasher = createMinHasher({ ...o.minhash, numPerm: sweepNumPerm });
  const sweepSigs = new SignatureMatrix(sweepNumPerm, Math.max(1, n));
  for (let i = 0; i < n; i++) {
    const r = sweepSigs.push();
    sweepSigs.present[r] = sweepHasher.signInto(sets[i]!, sweepSigs.row(r)) ? 1 : 0;
  }
  const cap = options.sweepVerifyCap ?? 2_000_000;
  const sweepRows: ReportData['bandsSweep']['rows'] = [];
  let pool: { a: Int32Array; b: Int32Array; size: number } | undefined;
  let poolBands = 0;
  for (const bands of options.sweepBands ?? [2, 5, 10, 20]) {
    const rows = Math.floor(sweepNumPerm / bands);
    if (rows < 1) throw new RangeError(`sweep: ${bands} bands need at least ${bands} hashes (sweepNumPerm is ${sweepNumPerm})`);
    const { pairs } = lshCandidates(sweepSigs, bands, rows);
    let above: number | null = null;
    if (pairs.size <= cap) {
      above = 0;
      for (let p = 0; p < pairs.size; p++) if (jaccard(sets[pairs.a[p]!]!, sets[pairs.b[p]!]!) >= threshold) above++;
    }
    sweepRows.push({
      bands,
      rows,
      candidates: pairs.size,
      atOrAbove: above,
      below: above === null ? null : pairs.size - above,
      recallAtThreshold: round(candidateProbability(threshold, bands, rows), 5),
    });
    // The most permissive banding's candidates span the widest range of similarities.
    if (bands >= poolBands) {
      pool = pairs;
      poolBands = bands;
    }
  }

  // Estimated against exact similarity, on a uniform sample of the sweep's most permissive candidates.
  const want = options.samplePairs ?? 1000;
  const sample: ReportData['estimateVsExact']['pairs'] = [];
  const sigCache = new Map<number, Uint32Array | null>();
  const sigOf = (i: number): Uint32Array | null => {
    let s = sigCache.get(i);
    if (s === undefined) sigCache.set(i, (s = hasher.sign(sets[i]!)));
    return s;
  };
  let sse = 0;
  if (pool && pool.size) {
    const m = Math.min(want, pool.size);
    // Partial Fisher–Yates over pair indices: a uniform sample without replacement.
    const idx = new Int32Array(pool.size);
    for (let i = 0; i < idx.length; i++) idx[i] = i;
    for (let i = 0; i < m; i++) {
      const j = i + (rand() % (idx.length - i));
      const t = idx[i]!;
      idx[i] = idx[j]!;
      idx[j] = t;
      const a = pool.a[idx[i]!]!;
      const bb = pool.b[idx[i]!]!;
      const sa = sigOf(a);
      const sb = sigOf(bb);
      if (!sa || !sb) continue;
      const exact = jaccard(sets[a]!, sets[bb]!);
      const est = estimateJaccard(sa, sb);
      sse += (est - exact) ** 2;
      sample.push({ a: idOf(a), b: idOf(bb), exact: round(exact), estimate: round(est) });
    }
  }

  // Similarity against shingle size for a few verified pairs below 1.
  const kValues = options.kValues ?? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 20];
  const graded = result.pairs.filter((p) => p.similarity < 1).sort((x, y) => x.similarity - y.similarity || x.a - y.a || x.b - y.b);
  const kPairs = Math.min(options.kPairs ?? 3, graded.length);
  const quantiles = kPairs === 1 ? [0.5] : Array.from({ length: kPairs }, (_, i) => 0.1 + (0.8 * i) / (kPairs - 1));
  const normalize = o.shingle?.normalize;
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

  // The largest clusters, side by side.
  const maxChars = options.maxTextChars ?? 1500;
  const perCluster = Math.max(2, options.membersPerCluster ?? 4);
  const minPassage = options.minPassage ?? 15;
  // Clusters of exact copies (after no normalization at all) have nothing to align: they are listed,
  // and the side-by-side view goes to the largest clusters with at least two distinct texts.
  const bySize = [...result.clusters].sort((x, y) => y.members.length - x.members.length || x.id - y.id);
  const distinct = (c: { members: number[] }): number => new Set(c.members.map((i) => texts[i]!)).size;
  const wantClusters = options.clusters ?? 6;
  const largest: typeof bySize = [];
  const copiesOnly: { id: string; size: number }[] = [];
  for (const c of bySize) {
    if (largest.length >= wantClusters && copiesOnly.length >= wantClusters) break;
    if (distinct(c) > 1) {
      if (largest.length < wantClusters) largest.push(c);
    } else if (copiesOnly.length < wantClusters) copiesOnly.push({ id: idOf(c.id), size: c.members.length });
  }
  const shown = largest.map((c) => {
    // Show the members that differ most from the first one: exact copies teach nothing.
    const first = c.members[0]!;
    const seenText = new Map<string, number>([[texts[first]!, 1]]);
    const others: { i: number; sim: number }[] = [];
    for (const i of c.members.slice(1)) {
      const t = texts[i]!;
      const copies = seenText.get(t);
      if (copies !== undefined) {
        seenText.set(t, copies + 1);
        continue;
      }
      seenText.set(t, 1);
      others.push({ i, sim: jaccard(sets[first]!, sets[i]!) });
    }
    others.sort((x, y) => x.sim - y.sim || x.i - y.i);
    const picked = [first, ...others.slice(0, perCluster - 1).map((x) => x.i)];
    const members: ReportMember[] = picked.map((i) => {
      const t = texts[i]!;
      return { id: idOf(i), index: i, text: t.length > maxChars ? t.slice(0, maxChars) : t, truncated: t.length > maxChars, copies: seenText.get(t)! };
    });
    const comparisons: ReportComparison[] = members.slice(1).map((m, k) => {
      const r = commonPassages(members[0]!.text, m.text, { minLength: minPassage });
      return { member: k + 1, similarity: round(jaccard(sets[first]!, sets[m.index]!)), passages: r.passages, coverage: round(r.coverageA) };
    });
    return { id: idOf(c.id), size: c.members.length, distinctTexts: seenText.size, members, comparisons };
  });

  // This run's own banding, next to the sweep: its candidates and pairs are the dedup's own counts.
  const runStats = result.stats;
  sweepRows.push({
    bands: b.bands,
    rows: b.rows,
    numPerm: hasher.numPerm,
    run: true,
    candidates: runStats.candidates,
    atOrAbove: (o.verify ?? DEDUP_DEFAULTS.verify) === 'exact' ? runStats.pairs : null,
    below: (o.verify ?? DEDUP_DEFAULTS.verify) === 'exact' ? Math.max(0, runStats.candidates - runStats.pairs) : null,
    recallAtThreshold: round(b.recallAtThreshold, 5),
  });

  // Cluster sizes.
  const sizeCount = new Map<number, number>();
  for (const c of result.clusters) sizeCount.set(c.members.length, (sizeCount.get(c.members.length) ?? 0) + 1);
  const clusterSizes = [...sizeCount].map(([size, count]) => ({ size, count })).sort((x, y) => x.size - y.size);

  // Borderline pairs: the lowest similarities at or above the threshold, one per distinct text pair.
  const wantBorder = options.borderlinePairs ?? 4;
  const borderline: BorderlinePair[] = [];
  const seenPair = new Set<string>();
  const cut = (t: string): string => (t.length > maxChars ? t.slice(0, maxChars) : t);
  for (const p of [...result.pairs].sort((x, y) => x.similarity - y.similarity || x.a - y.a || x.b - y.b)) {
    if (borderline.length >= wantBorder) break;
    const key = texts[p.a]! + '\u0000' + texts[p.b]!;
    if (texts[p.a] === texts[p.b] || seenPair.has(key)) continue;
    seenPair.add(key);
    const aText = cut(texts[p.a]!);
    const bText = cut(texts[p.b]!);
    borderline.push({ a: idOf(p.a), b: idOf(p.b), similarity: round(p.similarity), aText, bText, passages: commonPassages(aText, bText, { minLength: minPassage }).passages });
  }

  const s = result.stats;
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
      verify: o.verify ?? DEDUP_DEFAULTS.verify,
      bands: b.bands,
      rows: b.rows,
      rule: b.rule,
    },
    summary: {
      docs: n,
      emptyDocs: s.emptyDocs,
      candidates: s.candidates,
      pairs: s.pairs,
      clusters: s.clusters,
      docsInClusters: result.clusters.reduce((a, c) => a + c.members.length, 0),
      duplicates: result.clusters.reduce((a, c) => a + c.members.length - 1, 0),
      largestCluster: result.clusters.reduce((a, c) => Math.max(a, c.members.length), 0),
      timings: Object.fromEntries([...Object.entries(options.timings ?? {}), ...Object.entries(s.timings).filter(([k]) => k !== 'total'), ['report', performance.now() - tStart]].map(([k, v]) => [k, round(v as number, 1)])),
    },
    sCurve: {
      bands: b.bands,
      rows: b.rows,
      threshold,
      recallAtThreshold: round(b.recallAtThreshold, 6),
      falsePositiveArea: round(b.falsePositiveArea, 6),
      falseNegativeArea: round(b.falseNegativeArea, 6),
      points,
    },
    sCurves: reportCurves(b.bands, b.rows, hasher.numPerm, threshold),
    similarityHistogram: { measure: (o.verify ?? 'exact') === 'exact' ? 'exact Jaccard' : 'MinHash estimate', pairs: result.pairs.length, bins },
    estimateVsExact: {
      numPerm: hasher.numPerm,
      method: hasher.method,
      pool: `uniform sample of the candidate pairs of ${poolBands} bands × ${Math.floor(sweepNumPerm / Math.max(1, poolBands))} rows at ${sweepNumPerm} hashes`,
      rmse: sample.length ? round(Math.sqrt(sse / sample.length), 5) : 0,
      pairs: sample,
    },
    bandsSweep: { numPerm: sweepNumPerm, threshold, rows: sweepRows },
    clusterSizes,
    borderline,
    jaccardVsK: { normalize: presetName(o.shingle), pairs: jk },
    clusters: { total: result.clusters.length, exactCopyClusters: result.clusters.reduce((a, c) => a + (distinct(c) === 1 ? 1 : 0), 0), copiesOnly, shown },
  };
}
