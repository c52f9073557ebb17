/**
 * The `k` best of `n` items in order, without sorting all `n`: the summary's most repeated units
 * are the first 10 (`--top`) of up to millions of repeated ones.
 * @module
 */

/**
 * Indices `0..n-1` of the `k` items that `before` puts first, in that order (`before(a, b) < 0`:
 * a comes before b; a total order, so ties are decided by it). A heap of the `k` best so far,
 * O(n log k); a plain sort when `k` is a large share of `n`.
 */
export function selectTop(n: number, k: number, before: (a: number, b: number) => number): number[] {
  const m = Math.min(k, n);
  if (m <= 0) return [];
  if (4 * m >= n) return Array.from({ length: n }, (_, i) => i).sort(before).slice(0, m);
  // Max-heap by `before`: the worst of the best m at the root.
  const heap: number[] = [];
  const worse = (a: number, b: number): boolean => before(heap[a]!, heap[b]!) > 0;
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < heap.length && worse(l, w)) w = l;
      if (r < heap.length && worse(r, w)) w = r;
      if (w === i) return;
      [heap[i], heap[w]] = [heap[w]!, heap[i]!];
      i = w;
    }
  };
  for (let x = 0; x < n; x++) {
    if (heap.length < m) {
      heap.push(x);
      for (let i = heap.length - 1; i > 0;) {
        const p = (i - 1) >> 1;
        if (!worse(i, p)) break;
        [heap[i], heap[p]] = [heap[p]!, heap[i]!];
        i = p;
      }
    } else if (before(x, heap[0]!) < 0) {
      heap[0] = x;
      down(0);
    }
  }
  return heap.sort(before);
}
