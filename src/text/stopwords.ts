/**
 * Stopword lists for stopword-anchored ("spot") shingles, from the maintained `stopword` package.
 * @module
 */
import { createRequire } from 'node:module';
import { murmur3Utf16 } from '../hash/murmur3.js';

/**
 * The package's lists, loaded on first use: parsing its 240 KB of word lists cost every process
 * (every `neardup dedup` start) time, though only spot shingles need them.
 */
let lists: Record<string, string[] | undefined> | undefined;
const LISTS = (): Record<string, string[] | undefined> => (lists ??= createRequire(import.meta.url)('stopword') as Record<string, string[] | undefined>);

/** Two-letter codes accepted besides the package's own ISO 639-3 codes. */
const ALIASES: Record<string, string> = {
  en: 'eng',
  it: 'ita',
  de: 'deu',
  fr: 'fra',
  es: 'spa',
  pt: 'por',
  nl: 'nld',
  ru: 'rus',
  zh: 'zho',
  ja: 'jpn',
  th: 'tha',
  pl: 'pol',
  sv: 'swe',
};

/** The stopwords of one language, by ISO 639-1 (`en`) or 639-3 (`eng`) code. Throws on an unknown code. */
export function stopwordList(lang: string): string[] {
  const code = ALIASES[lang] ?? lang;
  const list = LISTS()[code];
  if (!Array.isArray(list)) {
    const known = Object.keys(ALIASES).join(', ');
    throw new RangeError(`no stopword list for language "${lang}" (try one of: ${known})`);
  }
  return list;
}

/** The set of token hashes (as in `tokenHashes`) of the given stopwords, lowercased and NFKC-normalized. */
export function stopwordHashes(words: Iterable<string>, seed: number): Set<number> {
  const set = new Set<number>();
  for (const w of words) {
    const t = w.normalize('NFKC').toLowerCase();
    set.add(murmur3Utf16(t, seed));
  }
  return set;
}
