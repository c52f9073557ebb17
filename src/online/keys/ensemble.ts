/**
 * Size-partitioned containment keys (LSH Ensemble, Zhu et al., VLDB 2016) for the online index's
 * containment queries. A short text inside a long one has a small Jaccard similarity (|A| / |B| at
 * best), which the threshold bands cannot find. Documents are therefore partitioned by the size of
 * their shingle set (partition p holds sizes in [ratio^p, ratio^(p+1))), and each document gets, in
 * its own partition only, the band keys of a few "levels" of r rows × b bands, salted by level and
 * partition. A query of q shingles at containment t works out, per partition, the smallest Jaccard
 * similarity s_p a pair with containment ≥ t can have there (|A ∩ B| ≥ t·min(q, |X|) with |X| in
 * the partition's range), and probes that partition at the level with the most rows whose
 * P(s_p) = 1 − (1 − s_p^r)^b reaches {@link TARGET_P} (few false candidates), else at the level with
 * the highest P (one-row bands). Partitions where even that P is below {@link MIN_P} are not probed.
 * The keys are plain 53-bit band keys, so every store keeps them without knowing what they are.
 * @module
 */
import { candidateProbability } from '../../lsh/params.js';
import { fmix32 } from '../../hash/mix.js';
import { rangeKey } from './rangeKey.js';

/** One level of the ensemble: `bands` bands of `rows` signature slots. */
export interface EnsembleLevel {
  rows: number;
  bands: number;
}

/** Options of the containment keys (index option `ensemble`). */
export interface EnsembleOptions {
  /** Ratio of the size bounds of consecutive partitions (> 1). Default 2. */
  ratio?: number;
  /** Levels, each with rows · bands ≤ numPerm. Default 64 × 1 row, 32 × 2, 16 × 4 (112 keys per document). */
  levels?: EnsembleLevel[];
}

/** The resolved settings, as kept in the index manifest. */
export interface EnsembleManifest {
  ratio: number;
  levels: EnsembleLevel[];
}

/** Default levels (for numPerm ≥ 64; fewer bands where numPerm is smaller). */
export const DEFAULT_ENSEMBLE_LEVELS: readonly EnsembleLevel[] = [
  { rows: 1, bands: 64 },
  { rows: 2, bands: 32 },
  { rows: 4, bands: 16 },
];

/** A partition is probed at the level with the most rows whose candidate probability at s_p reaches this. */
export const TARGET_P = 0.95;
/** Partitions whose best candidate probability at s_p is below this are not probed (too costly for what they return). */
export const MIN_P = 0.5;

/** Validates options and fills in the defaults. Throws a RangeError naming the bad field. */
export function resolveEnsemble(o: EnsembleOptions | true, numPerm: number): EnsembleManifest {
  const opts = o === true ? {} : o;
  const ratio = opts.ratio ?? 2;
  if (!(Number.isFinite(ratio) && ratio > 1)) throw new RangeError(`ensemble.ratio must be a number > 1, got ${ratio}`);
  const levels = opts.levels
    ?? DEFAULT_ENSEMBLE_LEVELS.map((l) => ({ rows: l.rows, bands: Math.min(l.bands, Math.floor(numPerm / l.rows)) })).filter((l) => l.bands > 0);
  if (!Array.isArray(levels) || levels.length === 0) throw new RangeError('ensemble.levels must be a non-empty array');
  for (const l of levels) {
    if (!(Number.isInteger(l.rows) && l.rows > 0 && Number.isInteger(l.bands) && l.bands > 0 && l.rows * l.bands <= numPerm)) {
      throw new RangeError(`ensemble.levels: rows and bands must be positive integers with rows·bands ≤ numPerm (${numPerm}), got ${l.rows} × ${l.bands}`);
    }
  }
  return { ratio, levels: levels.map((l) => ({ rows: l.rows, bands: l.bands })) };
}

/** One partition to probe: which, at which level, and the candidate probability promised at s_p. */
export interface EnsembleProbe {
  partition: number;
  level: number;
  /** The smallest Jaccard similarity of a pair with containment ≥ t in this partition. */
  minJaccard: number;
  /** P(minJaccard) at the chosen level: a lower bound on the chance that such a pair is a candidate. */
  p: number;
}

/** Computes the ensemble keys of documents and queries. */
export class EnsembleKeys {
  /** Keys per document (the sum of the levels' bands). */
  readonly keysPerDoc: number;
  private readonly logRatio: number;

  constructor(readonly settings: EnsembleManifest) {
    this.keysPerDoc = settings.levels.reduce((s, l) => s + l.bands, 0);
    this.logRatio = Math.log(settings.ratio);
  }

  /** The partition of a set of `size` shingles (size ≥ 1). */
  partition(size: number): number {
    // The small epsilon keeps exact powers of the ratio in their own partition despite rounding.
    return Math.max(0, Math.floor(Math.log(Math.max(1, size)) / this.logRatio + 1e-9));
  }

  /** Writes the keys of a document (signature `sig`, `size` shingles) into `out` from `at`. */
  documentKeys(sig: Uint32Array, size: number, out: Float64Array, at: number): void {
    const p = this.partition(size);
    const levels = this.settings.levels;
    for (let l = 0; l < levels.length; l++) at = this.levelKeys(sig, l, p, out, at);
  }

  /** The partitions and levels a query of `size` shingles at containment `t` probes. */
  plan(size: number, t: number): EnsembleProbe[] {
    const out: EnsembleProbe[] = [];
    const home = this.partition(size);
    // Outwards from the query's own partition; s_p only falls with the distance, so stop at the first too-costly one.
    for (let p = home;; p++) {
      const probe = this.probe(p, size, t);
      if (!probe) break;
      out.push(probe);
    }
    for (let p = home - 1; p >= 0; p--) {
      const probe = this.probe(p, size, t);
      if (!probe) break;
      out.push(probe);
    }
    return out;
  }

  /** The key lists of a query (one list per probed partition), for `store.lookup`. */
  queryKeys(sig: Uint32Array, size: number, t: number): Float64Array[] {
    return this.plan(size, t).map((pr) => {
      const keys = new Float64Array(this.settings.levels[pr.level]!.bands);
      this.levelKeys(sig, pr.level, pr.partition, keys, 0);
      return keys;
    });
  }

  private probe(p: number, q: number, t: number): EnsembleProbe | null {
    const r = this.settings.ratio;
    const lo = Math.pow(r, p);
    const hi = Math.pow(r, p + 1);
    if (hi < 1) return null;
    // Smallest Jaccard with containment ≥ t of the smaller set: for |X| ≥ q it is t·q / (q + |X| − t·q),
    // smallest at the top of the range; for |X| < q it is t·|X| / (q + |X| − t·|X|), smallest at the bottom.
    let s = 1;
    if (hi >= q) s = Math.min(s, (t * q) / (q + hi - t * q));
    if (lo < q) {
      const x = Math.max(1, lo);
      s = Math.min(s, (t * x) / (q + x - t * x));
    }
    const levels = this.settings.levels;
    let best = -1;
    let bestP = -1;
    let chosen = -1;
    for (let l = 0; l < levels.length; l++) {
      const pl = candidateProbability(s, levels[l]!.bands, levels[l]!.rows);
      if (pl > bestP) {
        bestP = pl;
        best = l;
      }
      if (pl >= TARGET_P && (chosen < 0 || levels[l]!.rows > levels[chosen]!.rows)) chosen = l;
    }
    if (bestP < MIN_P) return null;
    const level = chosen >= 0 ? chosen : best;
    return { partition: p, level, minJaccard: s, p: candidateProbability(s, levels[level]!.bands, levels[level]!.rows) };
  }

  /** Why these parameters: called once per level of every added or queried document, writing into the caller's key array; an options object would be an allocation per level. */
  private levelKeys(sig: Uint32Array, level: number, partition: number, out: Float64Array, at: number): number {
    const { rows, bands } = this.settings.levels[level]!;
    const salt = fmix32((0x456e0000 + level * 4096 + partition) >>> 0);
    for (let b = 0; b < bands; b++) out[at++] = rangeKey(sig, b * rows, rows, 2 * b + 1, 2 * b + 2, salt);
    return at;
  }
}
