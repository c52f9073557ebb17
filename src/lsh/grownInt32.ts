/**
 * Growing typed arrays.
 * @module
 */

/** A copy of `a[0..keep)` at the start of a new zeroed array of `length` (≥ keep). */
export function grownInt32(a: Int32Array, keep: number, length: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(length);
  grown.set(a.subarray(0, keep));
  return grown;
}
