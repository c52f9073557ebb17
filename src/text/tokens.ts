/**
 * Unicode-aware word tokenization that yields token hashes, not token strings.
 * A token is a maximal run of letters, digits and combining marks. Text in scripts written without
 * spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) is split with `Intl.Segmenter` instead,
 * in pieces (src/text/segments.ts).
 * @module
 */
import { murmur3Utf16 } from '../hash/murmur3.js';
import { wordSegments } from './segments.js';

let wordTable: Uint8Array | undefined;
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const NO_SPACE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** 1 for BMP code units that belong to a word; built once (65,536 regex tests, a few ms). */
function isWordUnit(): Uint8Array {
  if (wordTable === undefined) {
    wordTable = new Uint8Array(65536);
    for (let c = 0; c < 65536; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      if (WORD_CHAR.test(String.fromCharCode(c))) wordTable[c] = 1;
    }
  }
  return wordTable;
}

/**
 * Hashes of the word tokens of `text` (murmur3 of each token's UTF-16 code units), in order.
 * Allocation is one Uint32Array, however many tokens there are.
 */
export function tokenHashes(text: string, seed: number): Uint32Array {
  if (NO_SPACE_SCRIPT.test(text)) return segmentedTokenHashes(text, seed);
  const table = isWordUnit();
  const out = new Uint32Array((text.length >>> 1) + 1);
  let m = 0;
  let start = -1;
  const n = text.length;
  for (let i = 0; i <= n; i++) {
    let word = false;
    let width = 1;
    if (i < n) {
      const c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          width = 2;
          word = WORD_CHAR.test(text.slice(i, i + 2));
        }
      } else {
        word = table[c] === 1;
      }
    }
    if (word) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out[m++] = murmur3Utf16(text, seed, start, i);
      start = -1;
    }
    i += width - 1;
  }
  return out.subarray(0, m);
}

function segmentedTokenHashes(text: string, seed: number): Uint32Array {
  const hashes: number[] = [];
  for (const [a, b] of wordSegments(text)) hashes.push(murmur3Utf16(text, seed, a, b));
  return Uint32Array.from(hashes);
}

const WORDS = /[\p{L}\p{N}\p{M}]+/gu;

/** How many word tokens `text` has, as {@link tokens} counts them, counting no further than `limit` (a threshold test stops at its first words). */
export function countTokens(text: string, limit: number): number {
  let n = 0;
  if (limit <= 0) return 0;
  if (NO_SPACE_SCRIPT.test(text)) {
    const words = wordSegments(text);
    while (n < limit && !words.next().done) n++;
    return n;
  }
  WORDS.lastIndex = 0;
  while (n < limit && WORDS.test(text)) n++;
  return n;
}

const WORD_UNIT = /[\p{L}\p{N}\p{M}]/gu;

/** Whether UTF-16 code unit `c` is a surrogate. */
const surrogate = (c: number): boolean => (c & 0xf800) === 0xd800;

/**
 * Whether the text made of `text`'s ranges `kept` (`[start, end)` pairs in order) has a word token,
 * as `countTokens(that text, 1) > 0` says, without making that text; undefined where this cannot
 * tell (a script written without spaces, whose words the segmenter finds, or a surrogate at a range's
 * edge, which joins or parts a pair): the caller makes the text and counts.
 */
export function hasTokenIn(text: string, kept: readonly number[]): boolean | undefined {
  for (let r = 0; r < kept.length; r++) {
    const x = kept[r]!;
    if ((x > 0 && surrogate(text.charCodeAt(x - 1))) || (x < text.length && surrogate(text.charCodeAt(x)))) return undefined;
  }
  if (NO_SPACE_SCRIPT.test(text)) return undefined;
  // A token is a run of word code points: the text has one exactly when some range holds one of them.
  for (let r = 0; r < kept.length;) {
    WORD_UNIT.lastIndex = kept[r]!;
    const m = WORD_UNIT.exec(text);
    if (m === null) return false;
    while (r < kept.length && kept[r + 1]! <= m.index) r += 2;
    if (r < kept.length && kept[r]! <= m.index) return true;
  }
  return false;
}

/** The word tokens themselves, as strings (for display and tests; not used on the hot path). */
export function tokens(text: string): string[] {
  if (NO_SPACE_SCRIPT.test(text)) return Array.from(wordSegments(text), ([a, b]) => text.slice(a, b));
  return text.match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];
}
