/**
 * One configured shingling pipeline: normalize → shingle → 32-bit fingerprints → set.
 * @module
 */
import { makeNormalizer, type NormalizeOptions } from './normalize.js';
import { charShinglesInto } from './charShingles.js';
import { wordShingles } from './wordShingles.js';
import { spotShingles } from './spotShingles.js';
import { stopwordHashes, stopwordList } from './stopwords.js';
import { toSortedSet } from './fingerprintSet.js';

/** `char`: character k-grams; `word`: word k-grams; `spot`: stopword-anchored word shingles. */
export type ShingleKind = 'char' | 'word' | 'spot';

/** Options of a shingling pipeline. */
export interface ShingleOptions {
  /** Shingle kind. Default `char`. */
  kind?: ShingleKind;
  /** Shingle length: code points for `char` (default 5), words for `word` and `spot` (default 3). */
  k?: number;
  /** Hash seed of the fingerprints. Default 0. */
  seed?: number;
  /** Count the n-th repeat of a shingle as a distinct element (multiset Jaccard). Default false. */
  multiset?: boolean;
  /** Stopwords for `spot`: language codes (`en`, `it`, `de`, `fr`, `es`, …) or explicit words. Default `['en']`. */
  stopwords?: string[] | { words: string[] };
  /** Normalization applied before shingling. Default: the `default` preset. */
  normalize?: NormalizeOptions;
}

/** A shingling pipeline built once and applied to many documents. */
export interface Shingler {
  /** The resolved options (with defaults filled in). */
  readonly options: Readonly<Required<Omit<ShingleOptions, 'normalize' | 'stopwords'>>> & { stopwords: string[] | { words: string[] } };
  /** Normalizes a text. */
  normalize(text: string): string;
  /** Fingerprints of the normalized text's shingles, in order, with repeats. */
  fingerprints(normalizedText: string): Uint32Array;
  /** The sorted unique fingerprint set of a raw text (normalized here). Empty for an empty text. */
  set(text: string): Uint32Array;
}

/** Default shingle length for each kind. */
export function defaultK(kind: ShingleKind): number {
  return kind === 'char' ? 5 : 3;
}

/** Builds a {@link Shingler}. Throws a RangeError for invalid options. */
export function createShingler(options: ShingleOptions = {}): Shingler {
  const kind = options.kind ?? 'char';
  if (kind !== 'char' && kind !== 'word' && kind !== 'spot') {
    throw new RangeError(`unknown shingle kind "${String(kind)}" (expected char, word or spot)`);
  }
  const k = options.k ?? defaultK(kind);
  if (!Number.isInteger(k) || k < 1 || k > 1000) throw new RangeError(`k must be an integer from 1 to 1000, got ${k}`);
  const seed = (options.seed ?? 0) >>> 0;
  const multiset = options.multiset ?? false;
  const stopwords = options.stopwords ?? ['en'];
  const norm = makeNormalizer(options.normalize);
  let stopHashes: Set<number> | undefined;
  if (kind === 'spot') {
    const words = Array.isArray(stopwords) ? stopwords.flatMap((l) => stopwordList(l)) : stopwords.words;
    stopHashes = stopwordHashes(words, seed);
  }
  let scratch = new Uint32Array(4096);
  const fingerprints = (t: string): Uint32Array => {
    if (kind === 'char') {
      const out = new Uint32Array(Math.max(1, t.length - k + 1));
      return out.subarray(0, charShinglesInto(t, k, seed, out));
    }
    if (kind === 'word') return wordShingles(t, k, seed);
    return spotShingles(t, k, stopHashes!, seed);
  };
  return {
    options: { kind, k, seed, multiset, stopwords },
    normalize: norm,
    fingerprints,
    set(text: string): Uint32Array {
      const t = norm(text);
      if (kind === 'char') {
        // Reuse one scratch buffer for the raw sequence; copy out only the (smaller) unique set.
        const need = Math.max(1, t.length - k + 1);
        if (scratch.length < need) scratch = new Uint32Array(Math.max(need, scratch.length * 2));
        const m = charShinglesInto(t, k, seed, scratch);
        return toSortedSet(scratch.subarray(0, m), multiset).slice();
      }
      return toSortedSet(fingerprints(t), multiset);
    },
  };
}

/** The sorted unique fingerprint set of one text. For many texts, build a {@link createShingler} once. */
export function fingerprintSet(text: string, options: ShingleOptions = {}): Uint32Array {
  return createShingler(options).set(text);
}
