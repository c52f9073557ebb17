/**
 * The types of the online index: its options, manifest, matches and statistics (public API), and
 * the internal shapes its modules pass each other (a prepared document, the counters, the context).
 * In a module of their own so that the index, its pipeline, its prepare workers and its clusters
 * share them without importing one another.
 * @module
 */
import type { ShingleKind } from '../text/shingler.js';
import type { MinHashMethod } from '../sketch/minhash.js';
import type { NormalizeOptions } from '../text/normalize.js';
import type { NearDupStore, StoreManifest } from '../store/types.js';
import type { ForestOptions } from './keys/keys.js';
import type { EnsembleManifest, EnsembleOptions } from './keys/ensemble.js';
import type { MatchField } from './fields.js';
import type { EngineOptions } from '../engine/config.js';
import type { MetaFilter, RecordFilter } from './search/filters.js';

/** How matches are scored. */
export type OnlineVerify = 'exact' | 'estimate';

/**
 * Options of {@link NearDupIndex.open}: the engine's threshold and shingling ({@link EngineOptions},
 * shared with `dedup()`, jobs and the CLI; the threshold is that of `add` and `query`), its MinHash
 * and banding as flat fields, and what only an online index has. Every field has a default.
 */
export interface NearDupIndexOptions extends Pick<EngineOptions, 'threshold' | 'shingle'> {
  /** Shingle length; shorthand for `shingle.k`. */
  k?: number;
  /** Signature length. Default 128. */
  numPerm?: number;
  /** MinHash method. Default `oph`. */
  method?: MinHashMethod;
  /** MinHash seed. Default 1. */
  seed?: number;
  /** Explicit number of LSH bands (rows default to ⌊numPerm / bands⌋). */
  bands?: number;
  /** Explicit rows per band. */
  rows?: number;
  /** Required P(candidate) at the threshold when bands are chosen automatically. Default 0.99. */
  minRecall?: number;
  /**
   * `exact` (default): keep each document's fingerprint set (delta + varint) and score matches by
   * exact Jaccard. `estimate`: keep only the signature and score by the MinHash estimate (smaller
   * for long documents).
   */
  verify?: OnlineVerify;
  /**
   * Width of the signature slots an index keeps, with verify `estimate`: 32 (default), or 16 to
   * halve the signature's bytes (256 instead of 512 at 128 slots). With 16, every slot is cut to its
   * low 16 bits before the index uses it (band and forest keys, stored records, query estimates):
   * two slots of different values then agree with probability 2^-16, which raises the estimate of a
   * pair of Jaccard J by (1 − J)/65536 on average (at most 0.0000153); docs/stores.md gives its
   * measured effect. Fixed when the index is created.
   */
  signatureBits?: 16 | 32;
  /**
   * Where verify `exact` reads an indexed document's fingerprint set: `record` (default; kept in
   * each record, about 4 bytes a shingle) or `text`: recomputed, when a query verifies the document,
   * from the text its metadata keeps in `meta.text` (as `neardup index add` and the HTTP service
   * keep it). Records whose metadata is not an object holding exactly the added text keep the set,
   * so the answers are those of `record` either way. Chosen when the index is created; an existing
   * index keeps its own (this option is then ignored). Needs verify `exact`.
   */
  setSource?: 'record' | 'text';
  /** LSH-Forest prefix keys for {@link NearDupIndex.topK}; `false` disables topK. Default 8 trees, depths [3, 1]. */
  forest?: ForestOptions | false;
  /**
   * Size-partitioned containment keys (LSH Ensemble, src/online/keys/ensemble.ts) for
   * `query(text, { measure: 'containment' })`: short texts inside long documents (and the reverse)
   * are found far more often than by the bands and forest alone, at the cost of more keys per
   * document (112 by default). `true` for the defaults. Needs verify `exact`. Default off.
   */
  ensemble?: EnsembleOptions | boolean;
  /** A store instance or spec: `memory` (default), `sqlite:PATH`, `redis://HOST:PORT`. */
  store?: NearDupStore | string;
  /** Candidates examined per query at most (guards against huge buckets). Default 10,000. */
  maxCandidates?: number;
  /**
   * Worker threads that shingle, sign and encode the documents of {@link NearDupIndex.addMany}
   * batches (of 64 documents or more), so that the next batch is prepared while this thread talks to
   * the store. Default 0 (everything in the calling thread). Not available with a custom
   * normalization function (functions cannot be sent to threads).
   */
  workers?: number;
  /**
   * Default time to live of added documents: ms, or a duration such as `30d` (src/online/expiry.ts).
   * A document's own `expiresAt` or `ttl` wins. Default: documents never expire. Not stored: each
   * process that adds gives its own.
   */
  ttl?: number | string;
  /**
   * The clock, in ms since the epoch, that decides what has expired (default `Date.now`); a seam
   * for tests, which pass a fake clock.
   */
  now?: () => number;
}

/** One match. */
export interface Match<Meta = unknown> {
  /** Id of the indexed document. */
  id: string;
  /** The score used for ranking and thresholds: exact Jaccard with verify `exact`, else the estimate. */
  similarity: number;
  /** The MinHash estimate (fraction of equal signature slots). */
  estimate: number;
  /** The document's metadata, when it has some. */
  meta?: Meta;
  /**
   * With `measure: 'containment'`: `query` when the query (fewer shingles) is inside the document,
   * `document` when the document is inside the query. `similarity` is then |A ∩ B| / |A| for that
   * smaller A, and `estimate` the exact Jaccard similarity.
   */
  contained?: 'query' | 'document';
}

/**
 * One hit of {@link NearDupIndex.topK}: a distinct text, as its copy with the smallest id, and its
 * other copies (documents with the same fingerprint set, or with verify `estimate` the same
 * signature), which have its scores. `copies` is sorted by id and empty when the text has none.
 */
export interface TopKMatch<Meta = unknown> extends Match<Meta> {
  /** The other indexed documents the index cannot tell apart from this one, by id (each with its own meta). */
  copies: Match<Meta>[];
}

/** Options of {@link NearDupIndex.topK}. */
export interface TopKOptions {
  /** Only documents whose metadata matches (src/online/search/filters.ts). */
  filter?: MetaFilter;
}

/** A document for {@link NearDupIndex.addMany}. */
export interface NewDocument<Meta = unknown> {
  /** Unique id. */
  id: string;
  /** Text. */
  text: string;
  /** Any JSON value, returned with matches and by get. */
  meta?: Meta;
  /** When the document expires (Date, or ms since the epoch); it is then never returned, and purged. */
  expiresAt?: number | Date;
  /** Time to live from the add instead of `expiresAt`: ms, or a duration such as `30d`. */
  ttl?: number | string;
}

/** What {@link NearDupIndex.get} returns. */
export interface IndexedDocument<Meta = unknown> {
  /** Id. */
  id: string;
  /** Metadata (undefined when none). */
  meta?: Meta;
  /** Number of distinct shingles (with verify `exact`). */
  shingles?: number;
  /** The signature, recomputed from the fingerprints when not stored; null for an empty document. */
  signature: Uint32Array | null;
  /** When it expires, in ms since the epoch (absent: never). */
  expiresAt?: number;
}

/** Options of {@link NearDupIndex.query}. */
export interface QueryOptions {
  /** Maximum number of matches. Default: all. */
  limit?: number;
  /**
   * Score threshold. Default: the index threshold. Lower values lose recall: the index's bands were
   * chosen for its own threshold (`index.recallAt(threshold)` says how much; topK looks further).
   */
  threshold?: number;
  /** Work the index does for itself (cluster upkeep): not counted in {@link IndexStats} counters. */
  internal?: boolean;
  /**
   * `jaccard` (default), or `containment`: documents the query is at least `threshold` inside, or
   * that are at least `threshold` inside the query (needs verify `exact` and the forest; see
   * `containmentQuery.ts` for the candidates and their recall).
   */
  measure?: 'jaccard' | 'containment';
  /**
   * Lean matches (src/online/fields.ts): only these fields of each match, among id, similarity,
   * estimate, meta (without the stored text), text (the stored `meta.text`) and signature (the
   * stored MinHash signature). Default: whole matches, meta as stored.
   */
  fields?: readonly MatchField[];
  /**
   * Only documents whose metadata matches: each field equal to the value given, or to one of the
   * values of a list (`{ site: 'a', lang: ['en', 'fr'] }`; src/online/search/filters.ts). Checked
   * on the candidates before they are scored.
   */
  filter?: MetaFilter;
}

/** The persistent parameters of an index (stored by every store, written in snapshots). */
export interface IndexManifest extends StoreManifest {
  format: number;
  /** The signature definition its keys and signatures follow (`SIGNATURE_SPEC`), present only when not 1. */
  signatureSpec?: number;
  threshold: number;
  verify: OnlineVerify;
  shingle: {
    kind: ShingleKind;
    k: number;
    seed: number;
    multiset: boolean;
    stopwords: string[] | { words: string[] };
    normalize: Omit<NormalizeOptions, 'custom'> & { custom: boolean };
  };
  /** `bits` is present (16) only for an index created with `signatureBits: 16`. */
  minhash: { method: MinHashMethod; seed: number; numPerm: number; bits?: 16 };
  bands: number;
  rows: number;
  forest: ForestOptions | null;
  /** The containment keys' settings; absent when the index has none. */
  ensemble?: EnsembleManifest;
  /** `text` when records may keep their set as their stored text (REC_TEXT); absent for `record`. */
  setSource?: 'text';
  keysPerDoc: number;
}

/** Statistics of {@link NearDupIndex.stats}. */
export interface IndexStats {
  /** Documents indexed. */
  documents: number;
  /** Store kind. */
  store: string;
  /** The manifest. */
  manifest: IndexManifest;
  /** Counters since this process opened the index. */
  counters: { adds: number; queries: number; removes: number; topK: number; candidates: number; verified: number; expired: number };
  /** Store-specific numbers. */
  storeStats: Record<string, number | string>;
}

/** Options of {@link NearDupIndex.add} and {@link NearDupIndex.addMany}. */
export interface AddOptions {
  /** Return at most this many near duplicates per document, best first. Default: all. */
  limit?: number;
  /** When the document (every document of an `addMany` without its own) expires: Date or ms since the epoch. */
  expiresAt?: number | Date;
  /** Time to live instead of `expiresAt`: ms or a duration (`30d`); default the index's `ttl`. */
  ttl?: number | string;
  /** Only indexed documents whose metadata matches are reported as duplicates (see `QueryOptions.filter`); the document is indexed either way. */
  filter?: MetaFilter;
}

/** The per-process counters of {@link IndexStats}. */
export type IndexCounters = IndexStats['counters'];

/** A document ready for search and insertion: its sketch and keys (src/online/pipeline.ts), and what goes with it. */
export interface Prepared {
  id: string;
  meta: unknown;
  /** Sorted unique fingerprints. */
  set: Uint32Array;
  /** The signature; null for a text without shingles. */
  sig: Uint32Array | null;
  /** Band keys, then forest keys (src/online/keys/keys.ts); empty without a signature. */
  keys: Float64Array;
  /** The encoded record, when a prepare worker made it. */
  record?: Uint8Array;
  /** The screen of its set (src/similarity/setScreen.ts), made when the store keeps screens. */
  screen?: Uint8Array;
  /** The document's text, kept only when its record may leave out the set for `meta.text` (setSource `text`). */
  text?: string;
  /** At most this many matches are returned for it (best first). */
  limit?: number;
  /** Only indexed documents this accepts are reported as its duplicates. */
  filter?: RecordFilter;
  /** When it expires, in ms since the epoch (absent: never). */
  expiresAt?: number;
}
