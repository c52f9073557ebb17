/**
 * Text normalization applied before shingling.
 * @module
 */

/**
 * Named normalization presets. `lowercase-collapse` was first called `seed000` (after the experiment
 * it reproduces); that name is kept as an alias and means exactly the same.
 */
export type NormalizePreset = 'default' | 'lowercase-collapse' | 'seed000' | 'none';

/** The presets under their descriptive names (the aliases of {@link PRESET_ALIASES} are accepted too). */
export const NORMALIZE_PRESETS = ['default', 'lowercase-collapse', 'none'] as const;

/** Old preset names and the preset each stands for. */
export const PRESET_ALIASES: Readonly<Record<string, (typeof NORMALIZE_PRESETS)[number]>> = { seed000: 'lowercase-collapse' };

/**
 * The preset a name stands for, aliases resolved (`seed000` → `lowercase-collapse`); undefined for
 * an unknown name. An absent preset is `default`.
 */
export function resolvePreset(preset: string | undefined): (typeof NORMALIZE_PRESETS)[number] | undefined {
  const p = preset ?? 'default';
  if (Object.hasOwn(PRESET_ALIASES, p)) return PRESET_ALIASES[p];
  return (NORMALIZE_PRESETS as readonly string[]).includes(p) ? (p as (typeof NORMALIZE_PRESETS)[number]) : undefined;
}

/**
 * The spelling of a preset in files that record it (index manifests, job plans): `seed000` for
 * `lowercase-collapse`, as earlier versions wrote it, so files written before and after the rename
 * compare equal and stay readable by either version. Other names are returned as given.
 */
export function storedPresetName(preset: NormalizePreset | undefined): NormalizePreset {
  const p = preset ?? 'default';
  return resolvePreset(p) === 'lowercase-collapse' ? 'seed000' : p;
}

/** Options for {@link normalize}. */
export interface NormalizeOptions {
  /**
   * `default`: Unicode NFKC, lowercase, every run of whitespace to one space, trimmed.
   * `lowercase-collapse` (alias `seed000`, the experiment it reproduces exactly): runs of spaces or
   * of newlines become one space, then lowercase; nothing else (no NFKC, no trim, tabs kept).
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
/** Runs of spaces, or runs of newlines (`lowercase-collapse`): each becomes one space. */
const SPACE_OR_NEWLINE_RUNS = /( )+|(\n)+/g;
const PUNCT = /[\p{P}\p{S}]+/gu;
const MARKS = /\p{M}+/gu;
const ASCII = /^[\x00-\x7f]*$/;

/** Builds a normalizer function once, so per-document calls do no option parsing. */
export function makeNormalizer(options: NormalizeOptions = {}): (text: string) => string {
  // A preset's name given as the options (`normalize: 'none'`) would read as no options: the default preset.
  if (typeof options !== 'object' || options === null) {
    throw new RangeError(`normalization options must be an object such as { preset: 'none' }, got ${JSON.stringify(options)}`);
  }
  const preset = resolvePreset(options.preset);
  if (preset === undefined) {
    throw new RangeError(`unknown normalization preset "${String(options.preset)}" (expected default, lowercase-collapse (alias seed000) or none)`);
  }
  const { keepCase = false, stripPunctuation = false, stripDiacritics = false, custom } = options;
  return (text: string): string => {
    let t = text;
    if (preset === 'lowercase-collapse') {
      t = t.replace(SPACE_OR_NEWLINE_RUNS, ' ').toLowerCase();
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
