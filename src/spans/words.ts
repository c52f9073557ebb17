/**
 * Substring units of `neardup spans --unit substring --min-length L`: every window of L consecutive
 * words of a document. A repeated substring of L words or more is the union of its L-word windows,
 * each of which occurred before (keep-first) or in K documents (boilerplate), so cutting every such
 * window cuts exactly the repeats of at least L words, however long, with no suffix array. Words
 * are runs of letters, digits and marks (`Intl.Segmenter`'s words in scripts written without
 * spaces, as elsewhere); each is normalized alone and hashed to 64 bits once, and a window's hash
 * is two 32-bit MurmurHash3 lanes over its words' hashes, so the text between words (spaces,
 * punctuation) is not compared. A window is cut from its first word's start to its last word's end.
 * @module
 */
import { murmur3Words, textHash2 } from '../hash/murmur3.js';
import { wordSegments } from '../text/segments.js';
import type { Units } from './units.js';

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const NO_SPACE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** Reused buffers of one document's words: start and end (UTF-16) and the two hash lanes. */
export interface WordBuffers {
  start: Int32Array;
  end: Int32Array;
  lane0: Uint32Array;
  lane1: Uint32Array;
  /** Two hashes per window, filled by {@link wordWindows}. */
  windowHash: Uint32Array;
  /** Each word normalized (the strings the hashes were computed from), for comparing windows' texts exactly. */
  norm: string[];
}

/** Empty buffers, grown as documents need. */
export function newWordBuffers(): WordBuffers {
  return {
    start: new Int32Array(64),
    end: new Int32Array(64),
    lane0: new Uint32Array(64),
    lane1: new Uint32Array(64),
    windowHash: new Uint32Array(128),
    norm: [],
  };
}

function grow(b: WordBuffers, n: number): void {
  if (n <= b.start.length) return;
  const m = Math.max(n, b.start.length * 2);
  const more = <T extends Int32Array | Uint32Array>(a: T, size: number): T => {
    const x = new (a.constructor as new(n: number) => T)(size);
    x.set(a);
    return x;
  };
  b.start = more(b.start, m);
  b.end = more(b.end, m);
  b.lane0 = more(b.lane0, m);
  b.lane1 = more(b.lane1, m);
}

/** The words of `text` (start, end) into `b`; returns how many. */
function words(text: string, b: WordBuffers): number {
  let n = 0;
  const put = (s: number, e: number) => {
    grow(b, n + 1);
    b.start[n] = s;
    b.end[n] = e;
    n++;
  };
  if (NO_SPACE_SCRIPT.test(text)) {
    for (const [s, e] of wordSegments(text)) put(s, e);
  } else {
    WORD.lastIndex = 0;
    for (let m = WORD.exec(text); m !== null; m = WORD.exec(text)) put(m.index, m.index + m[0].length);
  }
  return n;
}

const pair = new Uint32Array(2);

/**
 * The windows of L = `how.length` words of `text` into `out` (cut range: first word's start to last word's end; the
 * compared range is the same) and their hashes into `b.windowHash` (two per window). Each word is
 * normalized by `how.norm` alone; a word that normalizes to nothing still counts as a word (its hash is
 * the empty text's). A text of fewer than L words has no window.
 */
export function wordWindows(text: string, how: { length: number; norm: (t: string) => string }, out: Units, b: WordBuffers): Units {
  const { length: L, norm } = how;
  out.count = 0;
  const n = words(text, b);
  const w = n - L + 1;
  if (w <= 0) return out;
  for (let i = 0; i < n; i++) {
    const w = norm(text.slice(b.start[i], b.end[i]));
    b.norm[i] = w;
    textHash2(pair, 0, w);
    b.lane0[i] = pair[0]!;
    b.lane1[i] = pair[1]!;
  }
  if (b.windowHash.length < 2 * w) b.windowHash = new Uint32Array(Math.max(2 * w, b.windowHash.length * 2));
  for (let k = 0; k < w; k++) {
    const a = b.start[k]!;
    const e = b.end[k + L - 1]!;
    out.start[k] = a;
    out.end[k] = e;
    out.textStart[k] = a;
    out.textEnd[k] = e;
    b.windowHash[2 * k] = murmur3Words(b.lane0, 0x5ba7, k, k + L);
    b.windowHash[2 * k + 1] = murmur3Words(b.lane1, 0x2f1c, k, k + L);
  }
  out.count = w;
  return out;
}
