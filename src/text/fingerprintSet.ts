/**
 * Turning a fingerprint sequence into the set (or multiset) that Jaccard similarity is defined on.
 * @module
 */
import { fmix32 } from '../hash/mix.js';

/**
 * Sorts `fps` in place and returns the sorted unique values (a view of the same buffer).
 * With `multiset`, the n-th repeat (n ≥ 1) of a fingerprint becomes the distinct element
 * fmix32(fp XOR n·0x9E3779B9), so repeated shingles count as often as they occur (multiset shingling).
 */
export function toSortedSet(fps: Uint32Array, multiset = false): Uint32Array {
  radixSort(fps);
  const n = fps.length;
  if (n === 0) return fps;
  if (multiset) {
    let changed = false;
    let run = 0;
    let prev = fps[0]!;
    for (let i = 1; i < n; i++) {
      const v = fps[i]!;
      run = v === prev ? run + 1 : 0;
      prev = v;
      if (run > 0) {
        fps[i] = fmix32((v ^ Math.imul(run, 0x9e3779b9)) >>> 0);
        changed = true;
      }
    }
    if (changed) return toSortedSet(fps, false);
    return fps;
  }
  let m = 1;
  for (let i = 1; i < n; i++) {
    const v = fps[i]!;
    if (v !== fps[m - 1]) fps[m++] = v;
  }
  return fps.subarray(0, m);
}

let scratch = new Uint32Array(4096);
const counts = new Int32Array(4 * 256);

/**
 * Sorts uint32 values ascending in place: LSD radix sort, four 8-bit digits, all four histograms
 * from one read. Several times faster than `TypedArray.prototype.sort` on shingle sets, which are
 * uniformly distributed hashes; short arrays use insertion sort.
 */
export function radixSort(a: Uint32Array): void {
  const n = a.length;
  if (n < 48) {
    // Insertion sort: the built-in sort boxes uint32 values ≥ 2^31 and is slow on these arrays.
    for (let i = 1; i < n; i++) {
      const v = a[i]!;
      let j = i - 1;
      while (j >= 0 && a[j]! > v) {
        a[j + 1] = a[j]!;
        j--;
      }
      a[j + 1] = v;
    }
    return;
  }
  if (scratch.length < n) scratch = new Uint32Array(Math.max(n, scratch.length * 2));
  const c = counts;
  c.fill(0);
  for (let i = 0; i < n; i++) {
    const v = a[i]!;
    c[v & 255]!++;
    c[256 + ((v >>> 8) & 255)]!++;
    c[512 + ((v >>> 16) & 255)]!++;
    c[768 + (v >>> 24)]!++;
  }
  for (let d = 0; d < 4; d++) {
    let sum = 0;
    for (let j = d * 256, e = j + 256; j < e; j++) {
      const t = c[j]!;
      c[j] = sum;
      sum += t;
    }
  }
  let src: Uint32Array = a;
  let dst: Uint32Array = scratch.subarray(0, n);
  for (let d = 0; d < 4; d++) {
    const shift = d * 8;
    const base = d * 256;
    for (let i = 0; i < n; i++) {
      const v = src[i]!;
      dst[c[base + ((v >>> shift) & 255)]!++] = v;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  // After four passes the sorted data is back in `a`.
}
