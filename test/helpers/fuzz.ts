/**
 * The random inputs of the fuzz tests (test/io/read/fuzz.test.ts, test/text/fuzz.test.ts,
 * test/dedup/fuzz.test.ts): strings of characters that break naive text code, and the run count.
 * Importing this fixes fast-check's seed for the importing test file (its process), so CI is
 * deterministic; NEARDUP_FUZZ_SEED=<n> (or =random) explores other inputs.
 */
import fc from 'fast-check';

export const RUNS = Number(process.env.NEARDUP_FUZZ_RUNS ?? 150);
const SEED = process.env.NEARDUP_FUZZ_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.NEARDUP_FUZZ_SEED ?? 20261122);
fc.configureGlobal({ seed: SEED });
if (process.env.NEARDUP_FUZZ_SEED) console.log(`# fuzz seed ${SEED}`);

/** Characters that break naive text code. */
const NASTY = [
  '\u0000',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u202e',
  '\u202d',
  '\u200f',
  '\u061c',
  '\u0301',
  '\u0308',
  '\u20dd',
  '\ud800',
  '\udc00',
  '\udbff',
  '\udfff',
  '\ud83d\ude00',
  'İ',
  'ß',
  'ﬁ',
  'Å',
  'שלום',
  'مرحبا',
  '𝔘',
  '\u00a0',
  '\u3000',
  '\t',
  '"',
  ',',
  ';',
  "'",
  '\\',
  '\r',
  '\n',
  ' ',
  'a',
  'Z',
  '0',
  '{',
  '}',
];
const nastyChar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom('a', 'b', 'c', ' ', 'x', 'y') },
);
/** A random string of nasty characters (may hold line breaks, quotes, tabs). */
export const nasty = (maxLength = 40) => fc.string({ unit: nastyChar, maxLength });
/** The same without line breaks. */
export const nastyLine = (maxLength = 40) => nasty(maxLength).map((s) => s.replace(/[\r\n]/g, ' '));
