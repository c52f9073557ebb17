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
  /** Per gram of {@link gramWords} words: its 32-bit hash ({@link wordAnchors}). */
  gh: Uint32Array;
  /** Per window: its anchor gram ({@link wordAnchors}). */
  wj: Int32Array;
  /** The sliding minimum's deque. */
  deque: Int32Array;
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
    gh: new Uint32Array(64),
    wj: new Int32Array(64),
    deque: new Int32Array(64),
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
  const n = hashWords(text, how.norm, b);
  return windowsAt(n, how.length, { out, b });
}

/**
 * Windows of L words of the `n` words {@link hashWords} hashed into `at.b`, into `at.out` and
 * `at.b.windowHash` as {@link wordWindows} writes them: every window, or those whose first words
 * `at.only` lists (the first `at.count`, in order).
 */
export function windowsAt(n: number, L: number, at: { out: Units; b: WordBuffers; only?: Int32Array; count?: number }): Units {
  const { out, b, only } = at;
  const w = only ? at.count! : Math.max(0, n - L + 1);
  out.count = 0;
  if (w <= 0) return out;
  if (b.windowHash.length < 2 * w) b.windowHash = new Uint32Array(Math.max(2 * w, b.windowHash.length * 2));
  for (let k = 0; k < w; k++) {
    const x = only ? only[k]! : k;
    const a = b.start[x]!;
    const e = b.end[x + L - 1]!;
    out.start[k] = a;
    out.end[k] = e;
    out.textStart[k] = a;
    out.textEnd[k] = e;
    b.windowHash[2 * k] = murmur3Words(b.lane0, 0x5ba7, x, x + L);
    b.windowHash[2 * k + 1] = murmur3Words(b.lane1, 0x2f1c, x, x + L);
  }
  out.count = w;
  return out;
}

/** The words of `text` into `b`, each normalized by `norm` alone and hashed (two lanes); returns how many. */
export function hashWords(text: string, norm: (t: string) => string, b: WordBuffers): number {
  const n = words(text, b);
  for (let i = 0; i < n; i++) {
    const w = norm(text.slice(b.start[i], b.end[i]));
    b.norm[i] = w;
    textHash2(pair, 0, w);
    b.lane0[i] = pair[0]!;
    b.lane1[i] = pair[1]!;
  }
  return n;
}

/** Words a gram of a window of L words has (./anchors.ts): 8, or L when shorter. */
export const gramWords = (L: number): number => Math.min(L, 8);

/**
 * The anchors of the windows of L words of the `n` words {@link hashWords} hashed into `b`: each
 * gram's hash into `b.gh` and each window's anchor (its gram of least hash, the last of equal ones)
 * into `b.wj`; returns the windows.
 */
export function wordAnchors(n: number, L: number, b: WordBuffers): number {
  const G = gramWords(L);
  const w = n - L + 1;
  if (w <= 0) return 0;
  if (b.gh.length < n) {
    b.gh = new Uint32Array(Math.max(n, 2 * b.gh.length));
    b.wj = new Int32Array(b.gh.length);
    b.deque = new Int32Array(b.gh.length);
  }
  const { gh, wj, deque: dq } = b;
  let head = 0;
  let tail = 0;
  let next = 0;
  for (let k = 0; k < w; k++) {
    for (; next <= k + L - G; next++) {
      const h = murmur3Words(b.lane0, 0x3c6e, next, next + G);
      gh[next] = h;
      while (tail > head && gh[dq[tail - 1]!]! >= h) tail--;
      dq[tail++] = next;
    }
    while (dq[head]! < k) head++;
    wj[k] = dq[head]!;
  }
  return w;
}
