/**
 * Buckets of band-key rows of mixed bands (a sharded join's partition: rows of every band, in
 * document order), found as `neardup dedup`'s LSH finds them: rows are first split by band and the
 * top bits of their key into parts of about a thousand (a stable counting sort), and each part is
 * bucketed in a small hash table that stays in cache. Sorting the rows by key instead (a radix sort
 * and a scan, the join's former way) missed the cache on nearly every row and was 4× slower.
 * @module
 */
import { BucketTable } from './bucketTable.js';

/**
 * Arrays kept between calls (a process running many join tasks): fresh ones of a few MB each per
 * call cost page faults and collections. Each is grown to the largest size asked for.
 */
export class RowBucketScratch {
  private readonly arrays = new Map<string, Int32Array | Uint32Array>();

  /** An Int32Array of `n` values (not cleared) under `name`. */
  i32(name: string, n: number): Int32Array {
    return this.get(name, n, (m) => new Int32Array(m)) as Int32Array;
  }

  /** A Uint32Array of `n` values (not cleared) under `name`. */
  u32(name: string, n: number): Uint32Array {
    return this.get(name, n, (m) => new Uint32Array(m)) as Uint32Array;
  }

  private get(name: string, n: number, make: (m: number) => Int32Array | Uint32Array): Int32Array | Uint32Array {
    let a = this.arrays.get(name);
    if (!a || a.length < n) this.arrays.set(name, a = make(Math.max(n, Math.ceil((a?.length ?? 0) * 1.25))));
    return a.subarray(0, n);
  }
}

/** Band-key rows, a column each: row i is key (hi[i], lo[i]) of band band[i], of `bands` bands. */
export interface BandKeyRows {
  band: Uint32Array;
  hi: Uint32Array;
  lo: Uint32Array;
  bands: number;
}

/**
 * Calls `fn` once per group of ≥ 2 rows with equal (band, hi, lo), with the group's row indices in
 * ascending order (`members[0 .. size)`, a view reused between calls). Groups come in no particular
 * order. `band[i]` must be below `bands`.
 */
export function forEachRowBucket(keys: BandKeyRows, fn: (members: Int32Array, size: number) => void, scratch = new RowBucketScratch()): void {
  const { band, hi, lo, bands } = keys;
  const n = lo.length;
  const perBand = n / Math.max(1, bands);
  const bits = perBand >= 2048 ? Math.min(12, Math.floor(Math.log2(perBand / 1024))) : 0;
  const shift = 32 - bits;
  const parts = bands * (1 << bits);
  // Each row's part, computed once for the count and the scatter.
  const partOf = scratch.i32('part', n);
  const start = new Int32Array(parts + 1);
  for (let i = 0; i < n; i++) {
    const q = bits === 0 ? band[i]! : band[i]! * (1 << bits) + (lo[i]! >>> shift);
    partOf[i] = q;
    start[q + 1]!++;
  }
  let largest = 0;
  for (let p = 0; p < parts; p++) {
    if (start[p + 1]! > largest) largest = start[p + 1]!;
    start[p + 1]! += start[p]!;
  }
  const fill = start.slice(0, parts);
  const rows = scratch.i32('rows', n);
  const keyHi = scratch.u32('hi', n);
  const keyLo = scratch.u32('lo', n);
  for (let i = 0; i < n; i++) {
    const at = fill[partOf[i]!]!++;
    rows[at] = i;
    keyHi[at] = hi[i]!;
    keyLo[at] = lo[i]!;
  }
  const table = new BucketTable(largest);
  let members = new Int32Array(64);
  for (let p = 0; p < parts; p++) {
    const base = start[p]!;
    if (start[p + 1]! - base < 2) continue;
    table.clear();
    for (let j = base; j < start[p + 1]!; j++) table.add(keyHi[j]!, keyLo[j]!, j - base);
    const shared = table.shared();
    for (let t = 0; t < shared.length; t++) {
      const bk = shared[t]!;
      const size = table.sizeAt(bk);
      if (members.length < size) members = new Int32Array(size * 2);
      // Rows were added in ascending order, so the members come ascending.
      fn(members, table.membersAt(bk, rows, base, members));
    }
  }
}
