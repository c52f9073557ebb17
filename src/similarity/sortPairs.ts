/**
 * Sorting pair lists into output order.
 * @module
 */

/** Anything with two document numbers. */
export interface DocPair {
  a: number;
  b: number;
}

/**
 * Sorts `pairs` in place by (a, b) ascending (ids: non-negative integers). With many pairs for the
 * largest id n, two stable counting-sort passes over typed copies of the ids (by b, then by a) replace the
 * comparison sort, which called its comparator ~20 times per pair: 190 ms of a million-document
 * run's half a million pairs, on one thread after the workers were done (issue #14).
 */
export function sortPairs<T extends DocPair>(pairs: T[]): void {
  const m = pairs.length;
  let sorted = true;
  for (let i = 1; i < m && sorted; i++) {
    const x = pairs[i - 1]!;
    const y = pairs[i]!;
    sorted = x.a < y.a || (x.a === y.a && x.b <= y.b);
  }
  if (sorted) return;
  let n = 0;
  let ints = true;
  for (let i = 0; i < m && ints; i++) {
    const { a, b } = pairs[i]!;
    ints = a >= 0 && b >= 0 && a < 2 ** 31 - 1 && b < 2 ** 31 - 1 && Number.isInteger(a) && Number.isInteger(b);
    n = Math.max(n, a + 1, b + 1);
  }
  // Counting arrays of n + 1 entries pay off once the pairs are not far fewer than the ids.
  if (!ints || m * 4 < n) {
    pairs.sort((x, y) => x.a - y.a || x.b - y.b);
    return;
  }
  const a = new Int32Array(m);
  const b = new Int32Array(m);
  for (let i = 0; i < m; i++) {
    a[i] = pairs[i]!.a;
    b[i] = pairs[i]!.b;
  }
  const order = countingPairOrder(a, b, m, n);
  const copy = pairs.slice();
  for (let x = 0; x < m; x++) pairs[x] = copy[order[x]!]!;
}

/**
 * The order of the first `m` pairs (`a[i]`, `b[i]`), ids in [0, n), sorted by (a, b) ascending and
 * stable: two counting passes, by b then by a (O(m + n)).
 */
export function countingPairOrder(a: Int32Array, b: Int32Array, m: number, n: number): Int32Array {
  const count = new Int32Array(n + 1);
  const byB = new Int32Array(m);
  for (let i = 0; i < m; i++) count[b[i]! + 1]!++;
  for (let v = 0; v < n; v++) count[v + 1]! += count[v]!;
  for (let i = 0; i < m; i++) byB[count[b[i]!]!++] = i;
  count.fill(0);
  const order = new Int32Array(m);
  for (let i = 0; i < m; i++) count[a[i]! + 1]!++;
  for (let v = 0; v < n; v++) count[v + 1]! += count[v]!;
  for (let x = 0; x < m; x++) {
    const i = byB[x]!;
    order[count[a[i]!]!++] = i;
  }
  return order;
}
