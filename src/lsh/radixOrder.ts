/**
 * A stable sort order of uint32 keys by radix (two 16-bit passes): what the sharded join (band keys
 * by their hi word) and sparse clustering (document numbers) sort millions of, where a comparator
 * sort was most of their time.
 * @module
 */

/** The indices 0..n-1 of `keys` ordered by key, ties in index order. */
export function radixOrder(keys: Uint32Array): Int32Array {
  const n = keys.length;
  let src = new Int32Array(n);
  let dst = new Int32Array(n);
  for (let i = 0; i < n; i++) src[i] = i;
  const count = new Int32Array(65537);
  for (let shift = 0; shift <= 16; shift += 16) {
    count.fill(0);
    for (let i = 0; i < n; i++) count[((keys[i]! >>> shift) & 0xffff) + 1]!++;
    for (let k = 0; k < 65536; k++) count[k + 1]! += count[k]!;
    for (let i = 0; i < n; i++) {
      const x = src[i]!;
      dst[count[(keys[x]! >>> shift) & 0xffff]!++] = x;
    }
    [src, dst] = [dst, src];
  }
  return src;
}
