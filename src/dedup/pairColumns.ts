/**
 * Verified pairs kept in typed columns instead of an object per pair: what the streaming pipeline
 * collects, sorts, clusters and writes. Half a million `ScoredPair` objects made while the workers
 * verify cost the main thread their allocation and, as they all survive, the garbage collector's
 * copying; sorting, clustering and writing then read them all over the heap. The objects are made
 * only when a caller asks for `result.pairs` ({@link withLazyPairs}).
 * @module
 */
import type { ScoredPair } from '../similarity/bruteForce.js';
import { grownInt32 } from '../lsh/grownInt32.js';
import { countingPairOrder } from '../similarity/sortPairs.js';

/** Pairs (a, b, similarity) in insertion order, in growable typed arrays. */
export class PairColumns {
  a: Int32Array;
  b: Int32Array;
  similarity: Float64Array;
  /** Number of pairs. */
  size = 0;

  constructor(capacity = 1024) {
    const cap = Math.max(16, capacity);
    this.a = new Int32Array(cap);
    this.b = new Int32Array(cap);
    this.similarity = new Float64Array(cap);
  }

  /** Appends the pair (a, b) with its similarity. */
  add(a: number, b: number, similarity: number): void {
    if (this.size === this.a.length) {
      const cap = 2 * this.size;
      this.a = grownInt32(this.a, this.size, cap);
      this.b = grownInt32(this.b, this.size, cap);
      const s = new Float64Array(cap);
      s.set(this.similarity.subarray(0, this.size));
      this.similarity = s;
    }
    this.a[this.size] = a;
    this.b[this.size] = b;
    this.similarity[this.size++] = similarity;
  }

  /**
   * Sorts the pairs by (a, b) ascending, for ids in [0, n): two stable counting passes (by b, then
   * by a) when the pairs are not far fewer than the ids, else a comparison sort of their indices.
   */
  sort(n: number): void {
    const m = this.size;
    const { a, b, similarity } = this;
    let sorted = true;
    for (let i = 1; i < m && sorted; i++) sorted = a[i - 1]! < a[i]! || (a[i - 1] === a[i] && b[i - 1]! <= b[i]!);
    if (sorted) return;
    const order = m * 4 < n ? Int32Array.from({ length: m }, (_, i) => i).sort((x, y) => a[x]! - a[y]! || b[x]! - b[y]!) : countingPairOrder(a, b, m, n);
    const sa = new Int32Array(a.length);
    const sb = new Int32Array(b.length);
    const ss = new Float64Array(similarity.length);
    for (let x = 0; x < m; x++) {
      const i = order[x]!;
      sa[x] = a[i]!;
      sb[x] = b[i]!;
      ss[x] = similarity[i]!;
    }
    this.a = sa;
    this.b = sb;
    this.similarity = ss;
  }

  /** The pairs as objects, in their order. */
  toPairs(): ScoredPair[] {
    const out = new Array<ScoredPair>(this.size);
    for (let i = 0; i < this.size; i++) out[i] = { a: this.a[i]!, b: this.b[i]!, similarity: this.similarity[i]! };
    return out;
  }
}

/**
 * Gives `result` a `pairs` property made from `columns` when first read (an ordinary property
 * afterwards: enumerable, writable), and keeps the columns where {@link pairColumnsOf} finds them.
 */
export function withLazyPairs<T extends object>(result: T, columns: PairColumns): T & { pairs: ScoredPair[] } {
  let made: ScoredPair[] | undefined;
  Object.defineProperty(result, 'pairs', {
    get: () => (made ??= columns.toPairs()),
    set: (v: ScoredPair[]) => {
      made = v;
      COLUMNS.delete(result);
    },
    enumerable: true,
    configurable: true,
  });
  COLUMNS.set(result, columns);
  return result as T & { pairs: ScoredPair[] };
}

const COLUMNS = new WeakMap<object, PairColumns>();

/** The columns behind a result's `pairs` when it has them ({@link withLazyPairs}), else undefined. */
export function pairColumnsOf(result: object): PairColumns | undefined {
  return COLUMNS.get(result);
}
