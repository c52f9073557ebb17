/**
 * Unicode sentence boundaries without `Intl.Segmenter`, for the texts where that is easy to do
 * exactly: texts of Latin letters (ASCII and U+00C0–U+00FF but × and ÷), digits, spaces, tabs,
 * CR, LF and `.` `!` `?` `,` alone. There the classes of UAX #29's sentence rules are Lower,
 * Upper, Numeric, Sp, LF, CR, ATerm (`.`), STerm (`!` `?`) and SContinue (`,`), with no Close, no
 * OLetter and no Extend, and the rules SB3–SB11 come down to the few cases {@link sentenceEnds}
 * tests. Any other character, and the caller asks `Intl.Segmenter`. test/spans/sentences.test.ts
 * checks the boundaries against `Intl.Segmenter`'s on random texts of these characters and on texts
 * with others.
 * @module
 */

/** The classes; those above {@link SCONTINUE} are the ones a sentence can end at. */
const OTHER = 0;
const LOWER = 1;
const UPPER = 2;
const NUMERIC = 3;
const SP = 4;
const SCONTINUE = 5;
const LF = 6;
const CR = 7;
const ATERM = 8;
const STERM = 9;

/** The sentence-break class of each code unit below 256 that {@link sentenceEnds} handles; {@link OTHER} for the rest (the `sentenceUnits` kernel reads it too). */
export const SENTENCE_CLASSES = (() => {
  const t = new Uint8Array(256);
  for (let c = 0x61; c <= 0x7a; c++) t[c] = LOWER;
  for (let c = 0x41; c <= 0x5a; c++) t[c] = UPPER;
  for (let c = 0x30; c <= 0x39; c++) t[c] = NUMERIC;
  for (let c = 0xc0; c <= 0xde; c++) t[c] = UPPER;
  for (let c = 0xdf; c <= 0xff; c++) t[c] = LOWER;
  t[0xd7] = OTHER;
  t[0xf7] = OTHER;
  t[0x20] = SP;
  t[0x09] = SP;
  t[0x0a] = LF;
  t[0x0d] = CR;
  t[0x2e] = ATERM;
  t[0x21] = STERM;
  t[0x3f] = STERM;
  t[0x2c] = SCONTINUE;
  return t;
})();

/** A code unit of a class {@link SENTENCE_CLASSES} leaves {@link OTHER}: the same set, spelled as a character class. */
const UNHANDLED = /[^a-zA-Z0-9\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff \t\r\n.!?,]/;
/** Where a sentence may end: terminators and paragraph separators. */
const STOPS = /[.!?\r\n]/g;

/**
 * The ends of `text`'s sentences (UTF-16 indices, the last one `text.length`), as
 * `Intl.Segmenter`'s sentence granularity splits it, into `ends` (cleared first); false (and
 * `ends` means nothing) when `text` holds a character this function does not handle (see the module comment).
 */
export function sentenceEnds(text: string, ends: number[]): boolean {
  ends.length = 0;
  if (UNHANDLED.test(text)) return false;
  const n = text.length;
  const cls = (i: number): number => SENTENCE_CLASSES[text.charCodeAt(i)]!;
  // From one code unit a sentence may end at to the next (a regular expression finds them faster than a loop per character).
  STOPS.lastIndex = 0;
  while (STOPS.test(text)) {
    const i = STOPS.lastIndex - 1;
    const k = cls(i);
    if (k === CR || k === LF) {
      // SB3: CR × LF; SB4: a paragraph separator ends its sentence.
      const e = i + (k === CR && i + 1 < n && cls(i + 1) === LF ? 2 : 1);
      ends.push(e);
      STOPS.lastIndex = e;
      continue;
    }
    let j = i + 1;
    STOPS.lastIndex = j;
    if (k === ATERM && j < n) {
      const next = cls(j);
      // SB6: ATerm × Numeric; SB7: (Upper | Lower) ATerm × Upper.
      if (next === NUMERIC || (next === UPPER && i > 0 && (cls(i - 1) === UPPER || cls(i - 1) === LOWER))) continue;
    }
    while (j < n && cls(j) === SP) j++;
    if (j >= n) break;
    STOPS.lastIndex = j;
    const next = cls(j);
    // SB9, SB10: no break before a paragraph separator (it ends the sentence itself); SB8a: nor before SContinue or another terminator.
    if (next === LF || next === CR || next === SCONTINUE || next === ATERM || next === STERM) continue;
    if (k === ATERM) {
      // SB8: ATerm Sp* × (¬(OLetter | Upper | Lower | ParaSep | SATerm))* Lower.
      let q = j;
      while (q < n && (cls(q) === NUMERIC || cls(q) === SP || cls(q) === SCONTINUE)) q++;
      if (q < n && cls(q) === LOWER) continue;
    }
    // SB11: the sentence ends after its terminator and spaces.
    ends.push(j);
  }
  if (n > 0 && ends[ends.length - 1] !== n) ends.push(n);
  return true;
}
