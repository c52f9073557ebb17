/**
 * The band keys of a signature in the online index: the LSH bands used for threshold queries, then
 * the LSH-Forest prefix keys used by topK. Each key is a 53-bit integer (docs/formats.md).
 * @module
 */
import { fmix32 } from '../../hash/mix.js';
import { rangeKey } from './rangeKey.js';
import { EnsembleKeys, type EnsembleManifest } from './ensemble.js';

/** LSH-Forest settings: `trees` prefix trees over consecutive slot ranges, indexed at `depths`. */
export interface ForestOptions {
  /** Number of trees. Default 8. */
  trees: number;
  /** Prefix depths (slots) indexed per tree, deepest first. Default [3, 1]. */
  depths: number[];
}

/**
 * Default forest: 8 trees of 3 slots, indexed at depths 3 and 1 (16 keys per document). On the
 * Kijiji ads it finds the true top 5 at similarity ≥ 0.2 almost always (bench/RESULTS.md, "Online index and service").
 */
export const DEFAULT_FOREST: ForestOptions = { trees: 8, depths: [3, 1] };

/** What {@link KeyMaker} makes keys for: the index's banding, its forest and ensemble, its signature length. */
export interface KeyMakerOptions {
  /** LSH bands of `rows` hashes each. */
  bands: number;
  rows: number;
  /** The LSH-Forest keys, or null for none. */
  forest: ForestOptions | null;
  /** Hashes per signature (the forest's trees · depth must fit). */
  numPerm: number;
  /** The size-partitioned containment keys, when the index has them (default none). */
  ensemble?: EnsembleManifest | null;
}

/** Computes all keys of one signature. */
export class KeyMaker {
  /** Keys per document: bands + trees · depths (+ the containment keys of the ensemble, when on). */
  readonly keysPerDoc: number;
  /** The size-partitioned containment keys (src/online/keys/ensemble.ts), when the index has them. */
  readonly ensemble: EnsembleKeys | null;
  private readonly salts: Uint32Array;
  private readonly maxDepth: number;

  readonly bands: number;
  readonly rows: number;
  readonly forest: ForestOptions | null;

  constructor(o: KeyMakerOptions) {
    const { bands, forest, numPerm, ensemble = null } = o;
    this.bands = bands;
    this.rows = o.rows;
    this.forest = forest;
    const trees = forest?.trees ?? 0;
    const depths = forest?.depths ?? [];
    this.maxDepth = depths.length ? Math.max(...depths) : 0;
    if (forest) {
      if (!Number.isInteger(trees) || trees < 1) throw new RangeError(`forest.trees must be a positive integer, got ${trees}`);
      if (!depths.length || depths.some((d) => !Number.isInteger(d) || d < 1)) throw new RangeError('forest.depths must be positive integers');
      for (let i = 1; i < depths.length; i++) if (depths[i]! >= depths[i - 1]!) throw new RangeError('forest.depths must be strictly decreasing');
      if (trees * this.maxDepth > numPerm) throw new RangeError(`forest needs trees·depth ≤ numPerm (${trees}·${this.maxDepth} > ${numPerm})`);
    }
    this.ensemble = ensemble ? new EnsembleKeys(ensemble) : null;
    this.keysPerDoc = bands + trees * depths.length + (this.ensemble?.keysPerDoc ?? 0);
    this.salts = new Uint32Array(trees * depths.length);
    for (let l = 0; l < depths.length; l++) {
      for (let t = 0; t < trees; t++) this.salts[l * trees + t] = fmix32((0x466f7200 + t * 256 + depths[l]!) >>> 0);
    }
  }

  /** The number of forest levels. */
  get levels(): number {
    return this.forest?.depths.length ?? 0;
  }

  /**
   * Writes the keysPerDoc keys of `sig` into a new Float64Array: bands first, then level by level,
   * tree by tree, then the ensemble's keys for a set of `size` shingles (its partition).
   */
  keys(sig: Uint32Array, size = 0): Float64Array {
    const out = new Float64Array(this.keysPerDoc);
    const { bands, rows } = this;
    for (let b = 0; b < bands; b++) out[b] = rangeKey(sig, b * rows, rows, 2 * b + 1, 2 * b + 2, 0);
    const f = this.forest;
    if (f) {
      // A tree's prefix key is the one-band key (seeds 1 and 2) of its first d slots, salted per level and tree.
      let o = bands;
      for (let l = 0; l < f.depths.length; l++) {
        const d = f.depths[l]!;
        for (let t = 0; t < f.trees; t++, o++) out[o] = rangeKey(sig, t * this.maxDepth, d, 1, 2, this.salts[l * f.trees + t]!);
      }
    }
    if (this.ensemble) this.ensemble.documentKeys(sig, size, out, this.keysPerDoc - this.ensemble.keysPerDoc);
    return out;
  }

  /** The band keys part of a key list. */
  bandPart(keys: Float64Array): Float64Array {
    return keys.subarray(0, this.bands);
  }

  /** The keys of forest level `l` (0 = deepest). */
  levelPart(keys: Float64Array, l: number): Float64Array {
    const t = this.forest!.trees;
    return keys.subarray(this.bands + l * t, this.bands + (l + 1) * t);
  }
}
