/**
 * The per-document work of the online index, built from a manifest: shingle set, signature, band
 * and forest keys, record bytes. Shared by the index and its prepare workers, so both compute
 * exactly the same thing.
 * @module
 */
import type { Shingler } from '../text/shingler.js';
import type { MinHasher } from '../sketch/minhash.js';
import { createTextSigner, type DocSketch, type TextSigner } from '../sketch/textSigner.js';
import { encodeRecord } from './records/record.js';
import { holdsText } from './records/storedText.js';
import { KeyMaker } from './keys/keys.js';
import { screenOf } from '../similarity/setScreen.js';
import { ProbeTable } from '../similarity/probeSet.js';
import type { IndexManifest } from './types.js';

/** The manifest's shingling and signing of a stored text (src/online/scoring.ts verifies records that keep their text with it). */
export interface TextSets {
  /** The sorted set (as a record keeping it would hold it). */
  set(text: string): Uint32Array;
  /** The same set unsorted (a fresh array): enough to probe, and cheaper; with `table`, the table is left holding it. */
  distinct(text: string, table?: ProbeTable): Uint32Array;
  /** The signature (null for a text without shingles). */
  sign(text: string): Uint32Array | null;
}

/** A document's sketch ({@link DocSketch}: fingerprint set and signature) with its band and forest keys. */
export interface KeyedSketch extends DocSketch {
  /** Band keys, then forest keys; empty when the document has no signature. */
  keys: Float64Array;
  /** The screen of its set (src/similarity/setScreen.ts), when asked for and the document has a signature. */
  screen?: Uint8Array;
}

/** The configured pipeline of one index. */
export class DocPipeline {
  /** The shingler of the manifest. */
  readonly shingler: Shingler;
  /** The MinHash signer of the manifest (also signs stored fingerprint sets). */
  readonly hasher: MinHasher;
  /** True when the manifest keeps 16-bit slots: every signature is cut to them before any use. */
  private readonly narrow: boolean;
  /** True when records may leave out their set for their stored text (setSource `text`). */
  private readonly keepsTexts: boolean;
  /** The manifest's shingling, for the sets of records that keep their text instead (a fresh array each call). */
  readonly setOfText: (text: string) => Uint32Array;
  /** What verifying a record that keeps its text instead of its set computes from the text (setSource `text`). */
  readonly textSets: TextSets;
  /** Where a lazy sketch's screen is made from the set (left unmade for the sketch). */
  private readonly probe = new ProbeTable();

  /**
   * Usually built with {@link DocPipeline.fromManifest}; `signer` and `keyMaker` must be those the
   * manifest describes (src/online/manifest.ts builds them once from the options and reuses them).
   */
  constructor(
    readonly manifest: IndexManifest,
    /** Text → set and signature (the fused path; same bits as shingler.set + hasher.sign). */
    private readonly signer: TextSigner,
    readonly keyMaker: KeyMaker,
  ) {
    this.shingler = signer.shingler;
    this.hasher = signer.hasher;
    this.narrow = manifest.minhash.bits === 16;
    this.keepsTexts = manifest.setSource === 'text' && manifest.verify === 'exact';
    this.setOfText = (text) => signer.set(text);
    this.textSets = { set: this.setOfText, distinct: (text, table) => signer.distinct(text, table), sign: (text) => signer.sign(text) };
  }

  /** The pipeline a manifest describes; `custom` is the custom normalization function when the manifest says there is one. */
  static fromManifest(manifest: IndexManifest, custom?: (text: string) => string): DocPipeline {
    const s = manifest.shingle;
    const signer = createTextSigner({
      shingle: { kind: s.kind, k: s.k, seed: s.seed, multiset: s.multiset, stopwords: s.stopwords, normalize: { ...s.normalize, custom } },
      minhash: { method: manifest.minhash.method, seed: manifest.minhash.seed, numPerm: manifest.minhash.numPerm },
    });
    return new DocPipeline(
      manifest,
      signer,
      new KeyMaker({
        bands: manifest.bands,
        rows: manifest.rows,
        forest: manifest.forest,
        numPerm: manifest.minhash.numPerm,
        ensemble: manifest.ensemble ?? null,
      }),
    );
  }

  /** The same pipeline (shared signer and key maker) under `manifest`, which must describe the same computation (another threshold). */
  withManifest(manifest: IndexManifest): DocPipeline {
    return new DocPipeline(manifest, this.signer, this.keyMaker);
  }

  /** Set, signature and keys of a text; with `screened`, its set's screen too. */
  sketch(text: string, screened = false): KeyedSketch {
    const { set, sig } = this.signer.sketch(text);
    if (sig && this.narrow) { for (let i = 0; i < sig.length; i++) sig[i]! &= 0xffff; }
    const keys = sig ? this.keyMaker.keys(sig, set.length) : new Float64Array(0);
    return screened && sig ? { set, sig, keys, screen: screenOf(set) } : { set, sig, keys };
  }

  /**
   * Signature and keys of a text, its set computed only when first read: for the adds whose records
   * keep their text (setSource `text`), as most of them verify no candidate and so never need the
   * set, and the signature alone costs a fraction of the sorted set (bench/RESULTS.md). The same
   * values as {@link DocPipeline.sketch}; the containment keys need the set's size, so an index
   * with them computes the set at once.
   */
  lazySketch(text: string, screened = false): KeyedSketch {
    if (this.keyMaker.ensemble || this.narrow) return this.sketch(text, screened);
    const signer = this.signer;
    let sig: Uint32Array | null;
    let screen: Uint8Array | undefined;
    if (screened) {
      // The screen needs the distinct set, made in the same normalization as the signature (unsorted, not kept).
      sig = new Uint32Array(signer.numPerm);
      const distinct = signer.signDistinct(text, sig, this.probe);
      if (distinct) screen = screenOf(distinct);
      else sig = null;
    } else sig = signer.sign(text);
    const keys = sig ? this.keyMaker.keys(sig) : new Float64Array(0);
    let set: Uint32Array | undefined;
    return {
      sig,
      keys,
      ...(screen ? { screen } : {}),
      get set(): Uint32Array {
        return (set ??= signer.set(text));
      },
    };
  }

  /**
   * True when the record of a document with `text` and `meta` leaves out its set (setSource `text`):
   * only when `meta` stores exactly that text, so the set recomputed from it is the document's.
   */
  setFromText(text: string, meta: unknown): boolean {
    return this.keepsTexts && holdsText(meta, text);
  }

  /**
   * The stored record: the fingerprint set (verify exact) or the signature (estimate), plus metadata.
   * Given the document's `text`, the set is left out when {@link DocPipeline.setFromText} allows it,
   * checked here, right before the metadata is serialized, so a later change to `meta` cannot split them.
   */
  record(d: KeyedSketch, meta: unknown, expiresAt?: number, text?: string): Uint8Array {
    // One plain object literal (no spreads): this runs once per added document.
    const exact = this.manifest.verify === 'exact';
    const setFromText = text !== undefined && this.setFromText(text, meta);
    // d.set is not read when the text stands for it: with lazySketch that would compute it.
    return encodeRecord({
      set: exact && !setFromText ? d.set : undefined,
      signature: exact ? undefined : (d.sig ?? undefined),
      signatureBits: this.narrow ? 16 : undefined,
      meta,
      expiresAt,
      setFromText,
    });
  }
}
