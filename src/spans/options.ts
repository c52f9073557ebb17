/**
 * The options of sub-document deduplication (`neardup spans`, {@link dedupSpans}) and their
 * defaults, defined once for the library and the CLI.
 * @module
 */
import type { NormalizeOptions } from '../text/normalize.js';
import type { UnitKind } from './units.js';

/** What a substring's minimum length counts: words, or UTF-8 bytes. */
export type LengthUnit = 'words' | 'bytes';

/** The length units, as the CLI lists them. */
export const LENGTH_UNITS: readonly LengthUnit[] = ['words', 'bytes'];

/** Options of span deduplication. Every field has a documented default ({@link SPANS_DEFAULTS}). */
export interface SpansOptions {
  /** What a unit is: `line`, `paragraph` (blank-line separated) or `sentence` (windows of `window` sentences). Default `line`. */
  unit?: UnitKind;
  /** Sentences per window (`unit: 'sentence'` only). Default 3, as C4. */
  window?: number;
  /**
   * Words a repeated substring has at least (`unit: 'substring'` only): every window of this many
   * consecutive words is a unit, so repeats of this length or longer are cut whole. Default 50.
   */
  minLength?: number;
  /**
   * What `minLength` counts (`unit: 'substring'` only): `words`, or `bytes`, the UTF-8 bytes of the
   * text with each character normalized alone and runs of whitespace as one space (./byteWindows.ts).
   * Default `words`.
   */
  lengthUnit?: LengthUnit;
  /** How units are normalized before they are compared (as documents are by `dedup`). Default: the `default` preset. */
  normalize?: NormalizeOptions;
  /**
   * Boilerplate mode: remove every occurrence of a unit found in at least this many documents.
   * Default undefined: keep-first (a repeated unit is kept at its first occurrence in input order
   * and removed from the later ones, in the same document too).
   */
  minDocs?: number;
  /** Units of fewer words (of their normalized text) are never removed. Default 0: every unit counts. */
  minUnitWords?: number;
  /**
   * A document that lost a unit and has fewer words left is dropped. Default 1: a document left
   * with no word is dropped. 0 keeps every document, empty or not.
   */
  minDocWords?: number;
  /** How many of the most repeated units the summary lists. Default 10. */
  top?: number;
}

/** The defaults of {@link SpansOptions}. */
export const SPANS_DEFAULTS = {
  unit: 'line' as UnitKind,
  window: 3,
  minLength: 50,
  lengthUnit: 'words' as LengthUnit,
  minUnitWords: 0,
  minDocWords: 1,
  top: 10,
} as const;

/** {@link SpansOptions} with their defaults filled in. */
export type ResolvedSpansOptions = Required<Omit<SpansOptions, 'minDocs' | 'normalize'>> & Pick<SpansOptions, 'minDocs' | 'normalize'>;

/** Options with their defaults filled in and checked; throws a RangeError naming a bad one. */
export function resolveSpansOptions(o: SpansOptions = {}): ResolvedSpansOptions {
  const unit = o.unit ?? SPANS_DEFAULTS.unit;
  if (unit !== 'line' && unit !== 'paragraph' && unit !== 'sentence' && unit !== 'substring') {
    throw new RangeError(`unknown unit "${String(unit)}" (expected line, paragraph, sentence or substring)`);
  }
  const int = (name: string, v: number | undefined, d: number, min: number): number => {
    const x = v ?? d;
    if (!Number.isSafeInteger(x) || x < min) throw new RangeError(`${name} must be an integer ≥ ${min}, got ${String(v)}`);
    return x;
  };
  const window = int('window', o.window, SPANS_DEFAULTS.window, 1);
  if (o.window !== undefined && unit !== 'sentence') throw new RangeError('window applies to sentence units only');
  const minLength = int('minLength', o.minLength, SPANS_DEFAULTS.minLength, 1);
  if (o.minLength !== undefined && unit !== 'substring') throw new RangeError('minLength applies to substring units only');
  const lengthUnit = o.lengthUnit ?? SPANS_DEFAULTS.lengthUnit;
  if (!LENGTH_UNITS.includes(lengthUnit)) throw new RangeError(`unknown lengthUnit "${String(lengthUnit)}" (expected words or bytes)`);
  if (o.lengthUnit !== undefined && unit !== 'substring') throw new RangeError('lengthUnit applies to substring units only');
  // A byte window's words would be counted for every window of the corpus, the ones pass 1 passes over included.
  if (lengthUnit === 'bytes' && (o.minUnitWords ?? 0) > 0) throw new RangeError('minUnitWords does not apply to substrings counted in bytes');
  return {
    unit,
    window,
    minLength,
    lengthUnit,
    minDocs: o.minDocs === undefined ? undefined : int('minDocs', o.minDocs, 2, 1),
    minUnitWords: int('minUnitWords', o.minUnitWords, SPANS_DEFAULTS.minUnitWords, 0),
    minDocWords: int('minDocWords', o.minDocWords, SPANS_DEFAULTS.minDocWords, 0),
    top: int('top', o.top, SPANS_DEFAULTS.top, 0),
    normalize: o.normalize,
  };
}

/**
 * Whether the units are substring windows that a pass before pass 1 thins out by their anchors
 * (./anchors.ts): not with `minDocs` 1, which cuts a window that occurs once too, nor when
 * `minUnitWords` exceeds the words of a word window (no window is a unit). The one rule of the
 * one-process passes (the walker's `anchored`, ./walker.ts) and of the sharded job's anchor stages.
 */
export function anchoredUnits(o: ResolvedSpansOptions): boolean {
  if (o.unit !== 'substring' || (o.minDocs !== undefined && o.minDocs <= 1)) return false;
  return o.lengthUnit === 'bytes' || o.minUnitWords <= o.minLength;
}
