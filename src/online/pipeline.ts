/**
 * The per-document work of the online index, built from a manifest: shingle set, signature, band
 * and forest keys, record bytes. Shared by the index and its prepare workers, so both compute
 * exactly the same thing.
 * @module
 */
import type { Shingler } from '../text/shingler.js';
import type { MinHasher } from '../sketch/minhash.js';
import { createDocSketcher, type DocSketcher } from '../sketch/docSketcher.js';
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
  /** Text → set and signature on the fused path (same bits as shingler.set + hasher.sign). */
  private readonly sketcher: DocSketcher;

  /** `custom` is the custom normalization function when the manifest says there is one. */
  constructor(
    readonly manifest: IndexManifest,
    custom?: (text: string) => string,
  ) {
    const s = manifest.shingle;
    this.sketcher = createDocSketcher({
      shingle: { kind: s.kind, k: s.k, seed: s.seed, multiset: s.multiset, stopwords: s.stopwords, normalize: { ...s.normalize, custom } },
      minhash: manifest.minhash,
    });
    this.shingler = this.sketcher.shingler;
    this.hasher = this.sketcher.hasher;
    this.keyMaker = new KeyMaker(manifest.bands, manifest.rows, manifest.forest, manifest.minhash.numPerm);
  }

  /** Set, signature and keys of a text. */
  sketch(text: string): DocSketch {
    const { set, sig } = this.sketcher.sketch(text);
    const keys = sig ? this.keyMaker.keys(sig) : new Float64Array(0);
    return { set, sig, keys };
  }

  /** The stored record: the fingerprint set (verify exact) or the signature (estimate), plus metadata. */
  record(d: DocSketch, meta: unknown): Uint8Array {
    // One plain object literal (no spreads): this runs once per added document.
    const exact = this.manifest.verify === 'exact';
    return encodeRecord({ set: exact ? d.set : undefined, signature: exact ? undefined : (d.sig ?? undefined), meta });
  }
}
