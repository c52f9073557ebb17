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

const OTHER = 0;
const LOWER = 1;
const UPPER = 2;
const NUMERIC = 3;
const SP = 4;
const LF = 5;
const CR = 6;
const ATERM = 7;
const STERM = 8;
const SCONTINUE = 9;

/** The sentence-break class of each code unit below 256 that {@link sentenceEnds} handles; {@link OTHER} for the rest. */
const CLASS = (() => {
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

/** Whether every code unit of `text` is one {@link sentenceEnds} handles. */
function handled(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0xff || CLASS[c] === OTHER) return false;
  }
  return true;
}

/**
 * The ends of `text`'s sentences (UTF-16 indices, the last one `text.length`), as
 * `Intl.Segmenter`'s sentence granularity splits it, into `ends` (cleared first); false, with
 * `ends` undefined, when `text` holds a character this function does not handle (see the module comment).
 */
export function sentenceEnds(text: string, ends: number[]): boolean {
  ends.length = 0;
  if (!handled(text)) return false;
  const n = text.length;
  const cls = (i: number): number => CLASS[text.charCodeAt(i)]!;
  let i = 0;
  while (i < n) {
    const k = cls(i);
    if (k === CR || k === LF) {
      // SB3: CR × LF; SB4: a paragraph separator ends its sentence.
      i += k === CR && i + 1 < n && cls(i + 1) === LF ? 2 : 1;
      ends.push(i);
      continue;
    }
    if (k !== ATERM && k !== STERM) {
      i++;
      continue;
    }
    let j = i + 1;
    if (k === ATERM && j < n) {
      const next = cls(j);
      // SB6: ATerm × Numeric; SB7: (Upper | Lower) ATerm × Upper.
      if (next === NUMERIC || (next === UPPER && i > 0 && (cls(i - 1) === UPPER || cls(i - 1) === LOWER))) {
        i = j;
        continue;
      }
    }
    while (j < n && cls(j) === SP) j++;
    if (j >= n) break;
    const next = cls(j);
    // SB9, SB10: no break before a paragraph separator (it ends the sentence itself); SB8a: nor before SContinue or another terminator.
    if (next === LF || next === CR || next === SCONTINUE || next === ATERM || next === STERM) {
      i = j;
      continue;
    }
    if (k === ATERM) {
      // SB8: ATerm Sp* × (¬(OLetter | Upper | Lower | ParaSep | SATerm))* Lower.
      let q = j;
      while (q < n && (cls(q) === NUMERIC || cls(q) === SP || cls(q) === SCONTINUE)) q++;
      if (q < n && cls(q) === LOWER) {
        i = j;
        continue;
      }
    }
    // SB11: the sentence ends after its terminator and spaces.
    ends.push(j);
    i = j;
  }
  if (n > 0 && ends[ends.length - 1] !== n) ends.push(n);
  return true;
}
