/**
 * Text normalization applied before shingling.
 * @module
 */

/** Named normalization presets. */
export type NormalizePreset = 'default' | 'seed000' | 'none';

/** Options for {@link normalize}. */
export interface NormalizeOptions {
  /**
   * `default`: Unicode NFKC, lowercase, every run of whitespace to one space, trimmed.
   * `seed000`: reproduces seed 000 exactly: runs of spaces or of newlines become one space, then
   * lowercase; nothing else (no NFKC, no trim, tabs kept).
   * `none`: the text as given (then only the explicit options below apply).
   * Default `default`.
   */
  preset?: NormalizePreset;
  /** Keep letter case (default preset only). Default false. */
  keepCase?: boolean;
  /** Replace Unicode punctuation (\p{P}) and symbols (\p{S}) by spaces. Default false. */
  stripPunctuation?: boolean;
  /** Remove combining marks after canonical decomposition ("é" → "e"). Default false. */
  stripDiacritics?: boolean;
  /** A function applied last, to the normalized text. */
  custom?: (text: string) => string;
}

const WS = /\s+/g;
const SEED000 = /( )+|(\n)+/g;
const PUNCT = /[\p{P}\p{S}]+/gu;
const MARKS = /\p{M}+/gu;
const ASCII = /^[\x00-\x7f]*$/;

/** Builds a normalizer function once, so per-document calls do no option parsing. */
export function makeNormalizer(options: NormalizeOptions = {}): (text: string) => string {
  const preset = options.preset ?? 'default';
  if (preset !== 'default' && preset !== 'seed000' && preset !== 'none') {
    throw new RangeError(`unknown normalization preset "${String(preset)}" (expected default, seed000 or none)`);
  }
  const { keepCase = false, stripPunctuation = false, stripDiacritics = false, custom } = options;
  return (text: string): string => {
    let t = text;
    if (preset === 'seed000') {
      t = t.replace(SEED000, ' ').toLowerCase();
    } else if (preset === 'default') {
      // NFKC is a no-op on ASCII; skipping it there saves a full ICU pass on most corpora.
      if (!ASCII.test(t)) t = t.normalize('NFKC');
      if (!keepCase) t = t.toLowerCase();
    }
    if (stripDiacritics) t = t.normalize('NFD').replace(MARKS, '').normalize('NFC');
    if (stripPunctuation) t = t.replace(PUNCT, ' ');
    if (preset === 'default' || stripPunctuation) t = t.replace(WS, ' ').trim();
    if (custom) t = custom(t);
    return t;
  };
}

/** Normalizes one text. For many texts, build the function once with {@link makeNormalizer}. */
export function normalize(text: string, options: NormalizeOptions = {}): string {
  return makeNormalizer(options)(text);
}
