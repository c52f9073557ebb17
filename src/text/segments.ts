/**
 * Unicode word and sentence boundaries (`Intl.Segmenter`) of long texts, found in pieces of ~2,000
 * code units cut where no word (no sentence) can span the cut, so that the segments are those of
 * the whole text. Why: Node 20's segmenter copies the whole input into every segment it returns,
 * so a text of 28,000 code units took 2 s and 900 MB to split into words, and one of 84,000 ran out
 * of memory (Node 24 does not copy).
 * @module
 */

/** Code units from which a text is given to the segmenter in pieces (at the next safe cut). */
const PIECE = 2048;
/** A word piece may end after whitespace or after 、。！？ (word break class Other: never inside a word)… */
const WORD_CUT_AFTER = /[\s\u3001\u3002\uFF01\uFF1F]/u;
/** …when what follows is not whitespace (kept whole: WB3d), a mark, a format character or a joiner (attached to what precedes: WB4), or a surrogate (an emoji modifier is Extend). */
const NO_CUT_BEFORE = /[\s\p{M}\p{Cf}\u200D\uD800-\uDFFF]/u;

let words: Intl.Segmenter | undefined;
let sentences: Intl.Segmenter | undefined;

/** The first position at or after `at` where a piece of `text` may end for word boundaries, or its length. */
function wordCut(text: string, at: number): number {
  for (let i = Math.max(1, at); i < text.length; i++) if (WORD_CUT_AFTER.test(text[i - 1]!) && !NO_CUT_BEFORE.test(text[i]!)) return i;
  return text.length;
}

/** The first position at or after `at` after a paragraph separator (a sentence always ends there: UAX #29, SB4), or the text's length. */
function sentenceCut(text: string, at: number): number {
  for (let i = Math.max(1, at); i < text.length; i++) {
    const c = text.charCodeAt(i - 1);
    if (c === 0x0a || c === 0x85 || c === 0x2028 || c === 0x2029 || (c === 0x0d && text.charCodeAt(i) !== 0x0a)) return i;
  }
  return text.length;
}

/** The segments of `text` ([start, end) in code units) the segmenter finds, those it calls word-like only when `wordLike`, found piece by piece. */
function* inPieces(text: string, s: Intl.Segmenter, o: { cut: (text: string, at: number) => number; wordLike: boolean }): Generator<[number, number]> {
  for (let from = 0; from < text.length;) {
    const to = text.length - from > PIECE ? o.cut(text, from + PIECE) : text.length;
    const piece = from === 0 && to === text.length ? text : text.slice(from, to);
    for (const g of s.segment(piece)) if (!o.wordLike || g.isWordLike) yield [from + g.index, from + g.index + g.segment.length];
    from = to;
  }
}

/** The word-like segments of `text`, [start, end) in code units, as `Intl.Segmenter` finds them in the whole text. */
export function wordSegments(text: string): Generator<[number, number]> {
  words ??= new Intl.Segmenter(undefined, { granularity: 'word' });
  return inPieces(text, words, { cut: wordCut, wordLike: true });
}

/** The sentences of `text`, [start, end) in code units, as `Intl.Segmenter` finds them in the whole text. */
export function sentenceSegments(text: string): Generator<[number, number]> {
  sentences ??= new Intl.Segmenter(undefined, { granularity: 'sentence' });
  return inPieces(text, sentences, { cut: sentenceCut, wordLike: false });
}
