/**
 * The per-document work of the online index, built from a manifest: shingle set, signature, band
 * and forest keys, record bytes. Shared by the index and its prepare workers, so both compute
 * exactly the same thing.
 * @module
 */
import { createShingler, type Shingler } from '../text/shingler.js';
import { createMinHasher, type MinHasher } from '../sketch/minhash.js';
import { encodeRecord } from '../sketch/format.js';
import { KeyMaker } from './keys.js';
import type { IndexManifest } from './nearDupIndex.js';

/** A document's sketch: sorted unique fingerprint set, signature (null when it has no shingles), keys. */
export interface DocSketch {
  set: Uint32Array;
  sig: Uint32Array | null;
  keys: Float64Array;
}

/** The configured pipeline of one index. */
export class DocPipeline {
  readonly shingler: Shingler;
  readonly hasher: MinHasher;
  readonly keyMaker: KeyMaker;

  /** `custom` is the custom normalization function when the manifest says there is one. */
  constructor(
    readonly manifest: IndexManifest,
    custom?: (text: string) => string,
  ) {
    const s = manifest.shingle;
    this.shingler = createShingler({
      kind: s.kind,
      k: s.k,
      seed: s.seed,
      multiset: s.multiset,
      stopwords: s.stopwords,
      normalize: { ...s.normalize, custom },
    });
    this.hasher = createMinHasher(manifest.minhash);
    this.keyMaker = new KeyMaker(manifest.bands, manifest.rows, manifest.forest, manifest.minhash.numPerm);
  }

  /** Set, signature and keys of a text. */
  sketch(text: string): DocSketch {
    const set = this.shingler.set(text);
    const sig = this.hasher.sign(set);
    const keys = sig ? this.keyMaker.keys(sig) : new Float64Array(0);
    return { set, sig, keys };
  }

  /** The stored record: the fingerprint set (verify exact) or the signature (estimate), plus metadata. */
  record(d: DocSketch, meta: unknown): Uint8Array {
    const exact = this.manifest.verify === 'exact';
    return encodeRecord({
      ...(exact ? { set: d.set } : d.sig ? { signature: d.sig } : {}),
      ...(meta !== undefined ? { meta } : {}),
    });
  }
}
