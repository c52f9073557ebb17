/**
 * Which digests in a list are the first of their value: how the candidate generator skips a bucket
 * whose member list already appeared in an earlier band.
 * @module
 */

/**
 * `keep[i] = 1` iff no j < i has the same digest: (`hi[j]`, `lo[j]`) = (`hi[i]`, `lo[i]`).
 *
 * The digests are first split by the top bits of `hi` into partitions of a few thousand (a stable
 * counting sort, so each partition keeps list order), and each partition is checked in a small hash
 * table that stays in cache. One hash set over millions of digests missed the cache on nearly every
 * lookup: it was a third of the LSH stage on a million documents (issue #14). `hi` should be a hash
 * (its bits pick the partition and the slot).
 */
export function firstOccurrences(hi: Int32Array, lo: Int32Array, count: number): Uint8Array {
  const keep = new Uint8Array(count);
  if (count === 0) return keep;
  const bits = count >= 1 << 13 ? Math.min(12, Math.floor(Math.log2(count / 2048))) : 0;
  const parts = 1 << bits;
  const shift = 32 - bits;
  const start = new Int32Array(parts + 1);
  if (bits === 0) start[1] = count;
  else {
    for (let i = 0; i < count; i++) start[(hi[i]! >>> shift) + 1]!++;
    for (let p = 0; p < parts; p++) start[p + 1]! += start[p]!;
  }
  let largest = 0;
  for (let p = 0; p < parts; p++) largest = Math.max(largest, start[p + 1]! - start[p]!);
  // Entries in partition order, each with its digest beside it (no gather from the full arrays).
  const at = start.slice(0, parts);
  const idx = new Int32Array(count);
  const ph = new Int32Array(count);
  const pl = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const h = hi[i]!;
    const to = bits === 0 ? at[0]!++ : at[h >>> shift]!++;
    idx[to] = i;
    ph[to] = h;
    pl[to] = lo[i]!;
  }
  // Slot s: [3s] hi, [3s+1] lo, [3s+2] the partition (+1) that filled it, so that nothing is
  // cleared between partitions.
  let cap = 16;
  while (cap < largest * 2) cap *= 2;
  const mask = cap - 1;
  const slots = new Int32Array(cap * 3);
  for (let p = 0; p < parts; p++) {
    const stamp = p + 1;
    for (let x = start[p]!, end = start[p + 1]!; x < end; x++) {
      const h = ph[x]!;
      const l = pl[x]!;
      let s = (h ^ Math.imul(l, 0x9e3779b1)) & mask;
      for (;;) {
        const t = s * 3;
        if (slots[t + 2] !== stamp) {
          slots[t] = h;
          slots[t + 1] = l;
          slots[t + 2] = stamp;
          keep[idx[x]!] = 1;
          break;
        }
        if (slots[t] === h && slots[t + 1] === l) break;
        s = (s + 1) & mask;
      }
    }
  }
  return keep;
}
