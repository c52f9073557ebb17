/**
 * Exact set similarity without sorting: fingerprint sets as *unique, unsorted* arrays, intersected
 * by probing an open-addressing table of one side.
 *
 * Why: fingerprints are already well-mixed 32-bit hashes, so a table slot is just the low bits of
 * the value, and one insert or probe is a load and a compare in a table that fits in L1/L2. Sorting
 * (radix, four scatter passes) and a branchy merge cost several times more per element; they were
 * most of exact verification. Intersection sizes are exact, so every similarity equals what
 * `jaccard()` computes on the sorted sets, to the bit (same integers, same division).
 *
 * The table's loops run in WebAssembly when the runtime has it (src/wasm/setKernels.ts; probing a
 * near-duplicate set measured 3.4 µs against 8.5–8.7 µs in JavaScript, bench/RESULTS.md round 4); the
 * JavaScript loops stay as the fallback and as the kernels' reference.
 * @module
 */
import { SetKernels, slotsFor } from '../wasm/setKernels.js';

/**
 * A reusable open-addressing table of 32-bit values. Not re-entrant: one per thread or per caller.
 *
 * Slots hold the values themselves, 0 meaning empty (the value 0 is kept in a flag): one load per
 * probe and 4 bytes per slot, so a 1,500-value document's table (4,096 slots) is 16 KB and stays in
 * L1. Clearing zeroes only the slots the next use needs; a table grown once for a huge document
 * does not make later small ones pay for its size.
 */
export class ProbeTable {
  private slots = new Int32Array(4096);
  private mask = 4095;
  /** The value 0 is in the table (0 marks empty slots). */
  private zero = false;
  /** Values in the table (distinct). */
  size = 0;
  /** The WebAssembly kernels holding the slots, or null for the JavaScript loops. */
  private readonly k: SetKernels | null;
  /** Slots of the kernels' table in use (zeroed by the last reset). */
  private used = 0;
  /** Output of {@link ProbeTable.distinctView} without the kernels. */
  private scratch = new Uint32Array(0);

  /**
   * @param options.wasm Use the WebAssembly kernels when available (default true; same results).
   * @param options.kernels Kernels to use (a region of shared memory: see {@link ProbeTable.distinctTo}).
   */
  constructor(options: { wasm?: boolean; kernels?: SetKernels } = {}) {
    this.k = options.kernels ?? (options.wasm === false ? null : SetKernels.create());
    if (this.k) this.slots = new Int32Array(0);
  }

  /** True when the table's loops run in WebAssembly. */
  get wasm(): boolean {
    return this.k !== null;
  }

  /** Empties the table and makes room for `n` values at load ≤ 1/2 (and `n` input values). */
  private reset(n: number): void {
    const cap = slotsFor(n);
    const k = this.k;
    if (k) {
      // The kernels probe without wrapping around (runs spill past the last home slot), and read
      // 4 slots at a time: cap + n + 4 slots are zeroed.
      this.used = cap + n + 4;
      if (!k.ensure(this.used, n)) throw new RangeError(`probe table: no room for ${n} values in its region`);
      k.i32.fill(0, k.TAB >>> 2, (k.TAB >>> 2) + this.used);
      k.i32[k.ZF >>> 2] = 0;
    } else if (cap > this.slots.length) this.slots = new Int32Array(cap);
    else this.slots.fill(0, 0, cap);
    this.mask = cap - 1;
    this.zero = false;
    this.size = 0;
  }

  /**
   * The kernels' distinct pass over `values`: fills the table and writes the distinct values at
   * byte address `out` of the kernels' memory (−1: their input buffer, k.IN).
   */
  private kernelDistinctTo(k: SetKernels, values: Uint32Array | Int32Array, out: number): number {
    this.reset(values.length);
    k.put(values);
    const d = k.fn.distinct(k.IN, values.length, k.TAB, this.mask, out < 0 ? k.IN : out, k.ZF);
    this.zero = k.i32[k.ZF >>> 2] !== 0;
    this.size = d;
    return d;
  }

  /**
   * Can this table take `n` values? Always, unless its kernels are a fixed region of shared memory
   * (see {@link SetKernels.region}) too small for them.
   */
  fits(n: number): boolean {
    return this.k === null || this.k.ensure(slotsFor(n) + n + 4, n);
  }

  /**
   * Fills the table with the distinct values of `values` and writes them, in first-occurrence
   * order, at byte address `out` of the kernels' (shared) memory, room for values.length values;
   * returns how many there are. Kernels only (see {@link ProbeTable.fits}).
   */
  distinctTo(values: Uint32Array, out: number): number {
    return this.kernelDistinctTo(this.k!, values, out);
  }

  /**
   * |table ∩ set| for the distinct set of `m` values at byte address `at` of the kernels' (shared)
   * memory, read in place; −1 as soon as it cannot reach `need`, as {@link ProbeTable.countIn}.
   */
  countAt(at: number, m: number, need: number): number {
    return this.k!.fn.count(at, m, this.k!.TAB, this.mask, this.zero ? 1 : 0, need);
  }

  /**
   * Fills the table with the distinct values of `values` and returns them, in first-occurrence
   * order, as a fresh array.
   */
  distinctOf(values: Uint32Array): Uint32Array {
    const k = this.k;
    if (!k) {
      const out = new Uint32Array(values.length);
      return out.slice(0, this.distinct(values, values.length, out));
    }
    const d = this.kernelDistinctTo(k, values, -1);
    return k.u32.slice(k.IN >>> 2, (k.IN >>> 2) + d);
  }

  /**
   * Fills the table with the distinct values of `values` and returns them, in first-occurrence
   * order, as a view valid until the table's next use (no copy: for callers that copy them once
   * to where they belong).
   */
  distinctView(values: Uint32Array): Uint32Array {
    const k = this.k;
    if (!k) {
      if (this.scratch.length < values.length) this.scratch = new Uint32Array(Math.max(values.length, this.scratch.length * 2));
      return this.scratch.subarray(0, this.distinct(values, values.length, this.scratch));
    }
    const d = this.kernelDistinctTo(k, values, -1);
    return k.u32.subarray(k.IN >>> 2, (k.IN >>> 2) + d);
  }

  /**
   * Fills the table with the distinct values of `values[0..m)` and writes them, in first-occurrence
   * order, to `out` (which may be `values` itself); returns how many there are.
   */
  distinct(values: Uint32Array | Int32Array, m: number, out: Uint32Array | Int32Array): number {
    const k = this.k;
    if (k) {
      const d = this.kernelDistinctTo(k, values.subarray(0, m), -1);
      out.set((out instanceof Int32Array ? k.i32 : k.u32).subarray(k.IN >>> 2, (k.IN >>> 2) + d));
      return d;
    }
    this.reset(m);
    const slots = this.slots;
    const mask = this.mask;
    let d = 0;
    for (let j = 0; j < m; j++) {
      const v = values[j]! | 0;
      if (v === 0) {
        if (!this.zero) {
          this.zero = true;
          out[d++] = 0;
        }
        continue;
      }
      let s = v & mask;
      for (;;) {
        const x = slots[s]!;
        if (x === 0) {
          slots[s] = v;
          out[d++] = v;
          break;
        }
        if (x === v) break;
        s = (s + 1) & mask;
      }
    }
    this.size = d;
    return d;
  }

  /**
   * Fills the table with the distinct character k-gram fingerprints of the `n` > `k` symbols at byte
   * address `syms` of the kernels' (shared) memory (`bk` = rollPower(k)) and writes them, in
   * first-occurrence order, at byte address `out`, room for n − k + 1 values; returns how many
   * there are. The same set as {@link ProbeTable.distinctTo} of those fingerprints, without them
   * ever going to memory. Kernels only, for a table that {@link ProbeTable.fits} n − k + 1 values.
   * Why these parameters: a kernel entry called once per document with WebAssembly addresses; an options object would be an allocation per document.
   */
  distinctGramsTo(syms: number, n: number, k: number, bk: number, out: number): number {
    const kk = this.k!;
    this.reset(n - k + 1);
    const d = kk.fn.distinctGrams(syms, n, k, bk, kk.TAB, this.mask, out, kk.ZF);
    this.zero = kk.i32[kk.ZF >>> 2] !== 0;
    this.size = d;
    return d;
  }

  /**
   * Fills the table with the `m` distinct values at byte address `at` of the kernels' (shared)
   * memory, read in place. Kernels only (see {@link ProbeTable.fits}).
   */
  loadAt(at: number, m: number): void {
    const k = this.k!;
    this.reset(m);
    k.fn.load(at, m, k.TAB, this.mask, k.ZF);
    this.zero = k.i32[k.ZF >>> 2] !== 0;
    this.size = m;
  }

  /** Fills the table with the values of `set` (already distinct). */
  load(set: Uint32Array): void {
    const m = set.length;
    this.reset(m);
    const k = this.k;
    if (k) {
      k.put(set);
      k.fn.load(k.IN, m, k.TAB, this.mask, k.ZF);
      this.zero = k.i32[k.ZF >>> 2] !== 0;
      this.size = m;
      return;
    }
    const slots = this.slots;
    const mask = this.mask;
    for (let j = 0; j < m; j++) {
      const v = set[j]! | 0;
      if (v === 0) {
        this.zero = true;
        continue;
      }
      let s = v & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = v;
    }
    this.size = m;
  }

  /**
   * |table ∩ set| for a distinct `set`, or -1 as soon as it cannot reach `need` (the count so far
   * plus the values left to probe falls short). `need` 0 always counts to the end.
   */
  countIn(set: Uint32Array, need: number): number {
    const k = this.k;
    if (k) {
      if (!k.ensure(this.used, set.length)) throw new RangeError(`probe table: no room for ${set.length} values in its region`);
      k.put(set);
      return k.fn.count(k.IN, set.length, k.TAB, this.mask, this.zero ? 1 : 0, need);
    }
    const slots = this.slots;
    const mask = this.mask;
    const m = set.length;
    let n = 0;
    // Check the bound every 64 values: cheap, and stops hopeless pairs early.
    for (let j = 0; j < m; j++) {
      if ((j & 63) === 0 && n + (m - j) < need) return -1;
      const v = set[j]! | 0;
      if (v === 0) {
        if (this.zero) n++;
        continue;
      }
      let s = v & mask;
      for (;;) {
        const x = slots[s]!;
        if (x === v) {
          n++;
          break;
        }
        if (x === 0) break;
        s = (s + 1) & mask;
      }
    }
    return n < need ? -1 : n;
  }
}

/** Relative slack that keeps size and count filters on the safe side of float rounding. */
const SLACK = 1 - 1e-12;

/**
 * Jaccard similarity of the set loaded in `table` (|A| = table.size) and the distinct values `b`,
 * if it is at least `threshold`; otherwise -1, often without probing at all: J ≤ min/max, so sizes
 * alone rule out many pairs, and the probe stops once the intersection cannot reach
 * t(|A|+|B|)/(1+t). The value returned is computed exactly as `jaccard()` computes it. Two empty
 * sets, or one, give -1 (similarity 0). `threshold` 0 keeps every pair (and never stops early).
 */
export function probeJaccardAtLeast(table: ProbeTable, b: Uint32Array, threshold: number): number {
  return probeJaccardOf(table, b, -1, b.length, threshold);
}

/**
 * {@link probeJaccardAtLeast} for the distinct set of `lb` values at byte address `at` of the table's
 * (shared) memory, read in place (see {@link ProbeTable.countAt}).
 */
export function probeJaccardAtLeastAt(table: ProbeTable, at: number, lb: number, threshold: number): number {
  return probeJaccardOf(table, null, at, lb, threshold);
}

/** Why these parameters: called once per verified pair; an options object would be an allocation per pair. */
function probeJaccardOf(table: ProbeTable, b: Uint32Array | null, at: number, lb: number, threshold: number): number {
  const la = table.size;
  if (la === 0 || lb === 0) return threshold > 0 ? -1 : 0;
  if (Math.min(la, lb) < threshold * Math.max(la, lb) * SLACK) return -1;
  const need = threshold > 0 ? Math.ceil(((threshold * (la + lb)) / (1 + threshold)) * SLACK) : 0;
  const inter = b ? table.countIn(b, need) : table.countAt(at, lb, need);
  if (inter < 0) return -1;
  const s = inter / (la + lb - inter);
  return s >= threshold ? s : -1;
}

/**
 * Order-independent 32-bit hash of a distinct set (for finding identical documents without sorting
 * their sets): the wrapping sum of a mixed value per element, mixed with the size.
 */
export function setHash(set: Uint32Array, seed: number): number {
  let h = 0;
  for (let i = 0; i < set.length; i++) {
    let z = (set[i]! ^ seed) | 0;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    h = (h + (z ^ (z >>> 16))) | 0;
  }
  return (h ^ Math.imul(set.length, 0x9e3779b1)) >>> 0;
}
