/**
 * The report's banding experiments, steps of {@link buildReportData}: candidate counts for several
 * band counts at one signature length (split by exact similarity), this run's own banding beside
 * them, and MinHash estimates against exact Jaccard on a sample of candidate pairs.
 * @module
 */
import type { DedupResult } from '../dedup/dedup.js';
import { createMinHasher, estimateJaccard, type MinHasher, type MinHashOptions } from '../sketch/minhash.js';
import { SignatureMatrix } from '../sketch/signatureMatrix.js';
import { candidateProbability } from '../lsh/params.js';
import { lshCandidates } from '../lsh/candidates.js';
import { jaccard } from '../similarity/jaccard.js';
import { round } from './charts.js';
import type { ReportData } from './types.js';

/** Candidate pairs as LSH returns them. */
export interface PairPool {
  a: Int32Array;
  b: Int32Array;
  size: number;
}

/** Options of {@link bandsSweep}. */
export interface SweepOptions {
  /** Band counts tried (rows = ⌊numPerm / bands⌋). */
  bands: number[];
  /** Signature length of the sweep. */
  numPerm: number;
  /** The run's MinHash options (method and seed; numPerm is replaced). */
  minhash: MinHashOptions | undefined;
  /** Candidates above this count are counted but not split by exact similarity. */
  verifyCap: number;
  /** The run's threshold. */
  threshold: number;
}

/** The sweep's rows, and the candidates of its most permissive banding (the widest range of similarities). */
export interface SweepResult {
  rows: ReportData['bandsSweep']['rows'];
  pool: PairPool | undefined;
  poolBands: number;
}

/** Candidate pairs for each band count of the sweep, at `numPerm` hashes, split by exact similarity. */
export function bandsSweep(sets: readonly Uint32Array[], o: SweepOptions): SweepResult {
  const n = sets.length;
  const sweepHasher = createMinHasher({ ...o.minhash, numPerm: o.numPerm });
  const sweepSigs = new SignatureMatrix(o.numPerm, Math.max(1, n));
  for (let i = 0; i < n; i++) {
    const r = sweepSigs.push();
    sweepSigs.present[r] = sweepHasher.signInto(sets[i]!, sweepSigs.row(r)) ? 1 : 0;
  }
  const rowsOut: ReportData['bandsSweep']['rows'] = [];
  let pool: PairPool | undefined;
  let poolBands = 0;
  for (const bands of o.bands) {
    const rows = Math.floor(o.numPerm / bands);
    if (rows < 1) throw new RangeError(`sweep: ${bands} bands need at least ${bands} hashes (sweepNumPerm is ${o.numPerm})`);
    const { pairs } = lshCandidates(sweepSigs, bands, rows);
    let above: number | null = null;
    if (pairs.size <= o.verifyCap) {
      above = 0;
      for (let p = 0; p < pairs.size; p++) if (jaccard(sets[pairs.a[p]!]!, sets[pairs.b[p]!]!) >= o.threshold) above++;
    }
    rowsOut.push({
      bands,
      rows,
      candidates: pairs.size,
      atOrAbove: above,
      below: above === null ? null : pairs.size - above,
      recallAtThreshold: round(candidateProbability(o.threshold, bands, rows), 5),
    });
    // The most permissive banding's candidates span the widest range of similarities.
    if (bands >= poolBands) {
      pool = pairs;
      poolBands = bands;
    }
  }
  return { rows: rowsOut, pool, poolBands };
}

/** The sweep row of this run's own banding: its candidates and pairs are the dedup's own counts. */
export function runBandingRow(result: DedupResult, numPerm: number, exactlyVerified: boolean): ReportData['bandsSweep']['rows'][number] {
  const b = result.bands;
  const s = result.stats;
  return {
    bands: b.bands,
    rows: b.rows,
    numPerm,
    run: true,
    candidates: s.candidates,
    atOrAbove: exactlyVerified ? s.pairs : null,
    below: exactlyVerified ? Math.max(0, s.candidates - s.pairs) : null,
    recallAtThreshold: round(b.recallAtThreshold, 5),
  };
}

/** How {@link estimateSample} draws and estimates its pairs. */
export interface EstimateSampleOptions {
  /** How many pairs to sample (all of the pool when it has fewer). */
  want: number;
  /** Signs the sampled documents for the estimate. */
  hasher: MinHasher;
  /** The random source of the sample (a seeded generator, for a reproducible report). */
  rand: () => number;
  /** A document's id, as the report shows it. */
  idOf: (i: number) => string;
}

/**
 * Estimated against exact Jaccard on a uniform sample (without replacement, partial Fisher–Yates
 * driven by `rand`) of `want` pairs of `pool`. Returns the sample and its sum of squared errors.
 */
export function estimateSample(
  sets: readonly Uint32Array[],
  pool: PairPool | undefined,
  options: EstimateSampleOptions,
): { pairs: ReportData['estimateVsExact']['pairs']; sse: number } {
  const { want, hasher, rand, idOf } = options;
  const sample: ReportData['estimateVsExact']['pairs'] = [];
  const sigCache = new Map<number, Uint32Array | null>();
  const sigOf = (i: number): Uint32Array | null => {
    let s = sigCache.get(i);
    if (s === undefined) sigCache.set(i, s = hasher.sign(sets[i]!));
    return s;
  };
  let sse = 0;
  if (pool && pool.size) {
    const m = Math.min(want, pool.size);
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
  return { pairs: sample, sse };
}
