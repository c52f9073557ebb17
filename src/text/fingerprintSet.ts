/**
 * Turning a fingerprint sequence into the set (or multiset) that Jaccard similarity is defined on.
 * @module
 */
import { fmix32 } from '../hash/mix.js';

/**
 * Sorts `fps` in place and returns the sorted unique values (a view of the same buffer).
 * With `multiset`, the n-th repeat (n ≥ 1) of a fingerprint becomes the distinct element
 * fmix32(fp XOR n·0x9E3779B9), so repeated shingles count as often as they occur (seed 003).
 */
export function toSortedSet(fps: Uint32Array, multiset = false): Uint32Array {
  fps.sort();
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
