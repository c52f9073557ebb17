/**
 * Splitting a document's text into the units `neardup spans` compares: lines, paragraphs, or
 * windows of consecutive sentences. A unit is a range of the text (UTF-16 indices, as JavaScript
 * strings count): `start`/`end` is what removal cuts, `text` what is compared (after
 * normalization).
 * @module
 */
import { sentenceEnds } from './sentences.js';
import { sentenceSegments } from '../text/segments.js';

/** What a unit is: a line, a paragraph (blank-line separated), or a window of sentences. */
export type UnitKind = 'line' | 'paragraph' | 'sentence' | 'substring';

/** The unit kinds, as the CLI lists them. */
export const UNIT_KINDS: readonly UnitKind[] = ['line', 'paragraph', 'sentence', 'substring'];

/** Units of one text, as parallel arrays (one document's worth; reused per call). */
export interface Units {
  /** Number of units. */
  count: number;
  /** Where the cut starts (UTF-16 index). */
  start: number[];
  /** Where the cut ends (exclusive): the unit with its own line break(s) or trailing spaces. */
  end: number[];
  /** Where the compared text starts. */
  textStart: number[];
  /** Where the compared text ends (line breaks and surrounding blanks excluded). */
  textEnd: number[];
}

function isBlank(text: string, a: number, b: number): boolean {
  for (let i = a; i < b; i++) {
    const c = text.charCodeAt(i);
    // \s of JavaScript, which trim() also uses; the common ones first.
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) continue;
    if (!/\s/.test(text[i]!)) return false;
  }
  return true;
}

/** Appends a unit's cut range and text range. Why these parameters: once per unit in the splitters' loops, with no object per unit. */
function push(u: Units, start: number, end: number, ts: number, te: number): void {
  u.start[u.count] = start;
  u.end[u.count] = end;
  u.textStart[u.count] = ts;
  u.textEnd[u.count] = te;
  u.count++;
}

/** The text of a line without its CR before LF. */
function lineEnd(text: string, a: number, nl: number): number {
  return nl > a && text.charCodeAt(nl - 1) === 0x0d ? nl - 1 : nl;
}

/**
 * Lines: each non-blank line, cut with its own line break (`\n` or `\r\n`), so removing a line
 * leaves no blank line behind. A last line without a break is cut alone.
 */
function lines(text: string, u: Units): void {
  let a = 0;
  const n = text.length;
  while (a < n) {
    let nl = text.indexOf('\n', a);
    const cut = nl < 0 ? n : nl + 1;
    if (nl < 0) nl = n;
    const te = lineEnd(text, a, nl);
    if (!isBlank(text, a, te)) push(u, a, cut, a, te);
    a = cut;
  }
}

/**
 * Paragraphs: runs of non-blank lines, separated by one or more blank (whitespace-only) lines.
 * A paragraph is cut with the blank lines after it, up to the next paragraph (or the text's end),
 * so removing one leaves its neighbours separated as before.
 */
function paragraphs(text: string, u: Units): void {
  const n = text.length;
  let a = 0;
  let pStart = -1;
  let pTextEnd = -1;
  while (a < n) {
    let nl = text.indexOf('\n', a);
    const next = nl < 0 ? n : nl + 1;
    if (nl < 0) nl = n;
    const te = lineEnd(text, a, nl);
    if (isBlank(text, a, te)) {
      // A blank line ends the open paragraph's text; its cut runs on to the next paragraph.
    } else {
      if (pStart >= 0 && pTextEnd >= 0 && blankBetween(text, pTextEnd, a)) {
        push(u, pStart, a, pStart, pTextEnd);
        pStart = -1;
      }
      if (pStart < 0) pStart = a;
      pTextEnd = te;
    }
    a = next;
  }
  if (pStart >= 0) push(u, pStart, n, pStart, pTextEnd);
}

/** True when the lines between a paragraph's text end `e` and the next line start `a` hold a blank line. */
function blankBetween(text: string, e: number, a: number): boolean {
  // [e, a) is the line break of the last text line plus any blank lines: two breaks or more.
  let breaks = 0;
  for (let i = e; i < a; i++) if (text.charCodeAt(i) === 0x0a) breaks++;
  return breaks >= 2;
}

/** The sentence ends of the text at hand (reused). */
const ends: number[] = [];

/**
 * Sentence windows: the sentences of Unicode's sentence boundaries (`Intl.Segmenter`, or
 * ./sentences.ts for the texts it handles, with the same boundaries; so CJK
 * full stops and line breaks end sentences too), then every run of `window` consecutive
 * sentences, one unit per start (they overlap). A document with fewer sentences than `window`
 * has one unit of all of them. A window is cut with its sentences' trailing spaces.
 */
function sentences(text: string, window: number, u: Units): void {
  const s: number[] = [];
  const e: number[] = [];
  if (sentenceEnds(text, ends)) {
    // The boundaries Intl.Segmenter gives, for the texts ./sentences.ts handles (its test checks them against the segmenter).
    for (let j = 0, a = 0; j < ends.length; a = ends[j++]!) {
      if (!isBlank(text, a, ends[j]!)) (s.push(a), e.push(ends[j]!));
    }
  } else {
    for (const [a, b] of sentenceSegments(text)) {
      if (!isBlank(text, a, b)) {
        s.push(a);
        e.push(b);
      }
    }
  }
  const m = s.length;
  if (m === 0) return;
  const w = Math.min(window, m);
  for (let i = 0; i + w <= m; i++) {
    const a = s[i]!;
    const b = e[i + w - 1]!;
    let ts = a;
    let te = b;
    while (ts < te && isBlank(text, ts, ts + 1)) ts++;
    while (te > ts && isBlank(text, te - 1, te)) te--;
    push(u, a, b, ts, te);
  }
}

/** The units of `text`, into `out` (cleared first). `window` applies to sentences only; substring windows are ./words.ts's. */
export function splitUnits(text: string, kind: Exclude<UnitKind, 'substring'>, window: number, out: Units): Units {
  out.count = 0;
  if (kind === 'line') lines(text, out);
  else if (kind === 'paragraph') paragraphs(text, out);
  else sentences(text, window, out);
  return out;
}

/** An empty {@link Units} to fill. */
export function newUnits(): Units {
  return { count: 0, start: [], end: [], textStart: [], textEnd: [] };
}
