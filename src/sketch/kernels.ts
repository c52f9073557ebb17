/**
 * Hot loops shared by the fast signing paths. Each one computes exactly what the reference path
 * (`charShinglesInto` → `toSortedSet` → `MinHasher.signInto`) computes, only without the
 * intermediate string, the sort, or per-slot passes over memory.
 * @module
 */
import { ROLL_BASE, rollPower } from '../text/symbols.js';
import { fmix32 } from '../hash/mix.js';

/**
 * Character k-gram fingerprints (as `charShinglesInto`) from a symbol sequence; returns their number.
 * `out` must hold max(1, n - k + 1) values.
 */
export function fingerprintsFromSymbols(syms: Int32Array, n: number, k: number, out: Uint32Array): number {
  if (n === 0) return 0;
  let h = 0;
  if (n <= k) {
    for (let i = 0; i < n; i++) h = (Math.imul(h, ROLL_BASE) + syms[i]!) | 0;
    out[0] = fmix32(h);
    return 1;
  }
  const bk = rollPower(k);
  for (let i = 0; i < k; i++) h = (Math.imul(h, ROLL_BASE) + syms[i]!) | 0;
  out[0] = fmix32(h);
  let m = 1;
  for (let i = k; i < n; i++) {
    h = (Math.imul(h, ROLL_BASE) + syms[i]! - Math.imul(syms[i - k]!, bk)) | 0;
    let f = h ^ (h >>> 16);
    f = Math.imul(f, 0x85ebca6b);
    f ^= f >>> 13;
    f = Math.imul(f, 0xc2b2ae35);
    out[m++] = f ^ (f >>> 16);
  }
  return m;
}

/**
 * One-permutation-hashing bin minima straight from a symbol sequence: for every k-gram fingerprint
 * f, z = fmix32(f XOR pre) goes to bin ⌊z·numPerm / 2^32⌋, which keeps its minimum. `bins` must be
 * filled with 0xFFFFFFFF first. Returns false when there are no symbols (an empty document).
 *
 * When numPerm is a power of two the bin is z >>> (32 − log2 numPerm), the same integer.
 * Why these parameters: the signing kernel, called once per document over typed arrays; an options object would be an allocation per document in the hottest loop.
 */
export function ophBinsFromSymbols(syms: Int32Array, n: number, k: number, pre: number, bins: Uint32Array): boolean {
  if (n === 0) return false;
  const numPerm = bins.length;
  let h = 0;
  if (n <= k) {
    for (let i = 0; i < n; i++) h = (Math.imul(h, ROLL_BASE) + syms[i]!) | 0;
    addOph(fmix32(h), pre, bins);
    return true;
  }
  for (let i = 0; i < k - 1; i++) h = (Math.imul(h, ROLL_BASE) + syms[i]!) | 0;
  const bk = rollPower(k);
  // Window k-1 is entered with the symbol that "leaves" being 0, so one loop covers every window.
  h = (Math.imul(h, ROLL_BASE) + syms[k - 1]!) | 0;
  addOph(fmix32(h), pre, bins);
  if ((numPerm & (numPerm - 1)) === 0) {
    const shift = 32 - Math.log2(numPerm);
    if (shift === 32) {
      // numPerm = 1: every z goes to bin 0.
      let best = bins[0]!;
      for (let i = k; i < n; i++) {
        h = (Math.imul(h, ROLL_BASE) + syms[i]! - Math.imul(syms[i - k]!, bk)) | 0;
        const z = mixPre(h, pre);
        if (z < best) best = z;
      }
      bins[0] = best;
      return true;
    }
    for (let i = k; i < n; i++) {
      h = (Math.imul(h, ROLL_BASE) + syms[i]! - Math.imul(syms[i - k]!, bk)) | 0;
      let f = h ^ (h >>> 16);
      f = Math.imul(f, 0x85ebca6b);
      f ^= f >>> 13;
      f = Math.imul(f, 0xc2b2ae35);
      let z = f ^ (f >>> 16) ^ pre;
      z ^= z >>> 16;
      z = Math.imul(z, 0x85ebca6b);
      z ^= z >>> 13;
      z = Math.imul(z, 0xc2b2ae35);
      z = (z ^ (z >>> 16)) >>> 0;
      const bin = z >>> shift;
      if (z < bins[bin]!) bins[bin] = z;
    }
    return true;
  }
  const scale = numPerm / 4294967296;
  for (let i = k; i < n; i++) {
    h = (Math.imul(h, ROLL_BASE) + syms[i]! - Math.imul(syms[i - k]!, bk)) | 0;
    const z = mixPre(h, pre);
    const bin = (z * scale) | 0;
    if (z < bins[bin]!) bins[bin] = z;
  }
  return true;
}

/** fmix32(fmix32(h) XOR pre), unsigned. */
function mixPre(h: number, pre: number): number {
  let f = h ^ (h >>> 16);
  f = Math.imul(f, 0x85ebca6b);
  f ^= f >>> 13;
  f = Math.imul(f, 0xc2b2ae35);
  let z = f ^ (f >>> 16) ^ pre;
  z ^= z >>> 16;
  z = Math.imul(z, 0x85ebca6b);
  z ^= z >>> 13;
  z = Math.imul(z, 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

function addOph(fp: number, pre: number, bins: Uint32Array): void {
  let z = (fp ^ pre) | 0;
  z ^= z >>> 16;
  z = Math.imul(z, 0x85ebca6b);
  z ^= z >>> 13;
  z = Math.imul(z, 0xc2b2ae35);
  z = (z ^ (z >>> 16)) >>> 0;
  const bin = (z * (bins.length / 4294967296)) | 0;
  if (z < bins[bin]!) bins[bin] = z;
}

/**
 * Classic k-permutation MinHash over premixed values `zs[0..n)` (zs[j] = fmix32(fp_j XOR pre), as
 * int32): out[i] = min_j xorshift16(imul(zs[j] XOR b[i], a[i])), unsigned. Slot-major with four slots
 * per sweep, so the running minima live in registers and each z is loaded once per four slots.
 * Unsigned order is compared as signed order of values with the top bit flipped.
 * Why these parameters: the classic MinHash kernel, called once per document over typed arrays; an options object would be an allocation per document.
 */
export function classicFromPremixed(zs: Int32Array, n: number, a: Int32Array, b: Int32Array, out: Uint32Array): void {
  const k = out.length;
  let i = 0;
  for (; i + 4 <= k; i += 4) {
    const a0 = a[i]!, a1 = a[i + 1]!, a2 = a[i + 2]!, a3 = a[i + 3]!;
    const b0 = b[i]!, b1 = b[i + 1]!, b2 = b[i + 2]!, b3 = b[i + 3]!;
    let m0 = 0x7fffffff, m1 = 0x7fffffff, m2 = 0x7fffffff, m3 = 0x7fffffff;
    for (let j = 0; j < n; j++) {
      const z = zs[j]!;
      let h0 = Math.imul(z ^ b0, a0);
      h0 = h0 ^ ((h0 >>> 16) | 0x80000000);
      if (h0 < m0) m0 = h0;
      let h1 = Math.imul(z ^ b1, a1);
      h1 = h1 ^ ((h1 >>> 16) | 0x80000000);
      if (h1 < m1) m1 = h1;
      let h2 = Math.imul(z ^ b2, a2);
      h2 = h2 ^ ((h2 >>> 16) | 0x80000000);
      if (h2 < m2) m2 = h2;
      let h3 = Math.imul(z ^ b3, a3);
      h3 = h3 ^ ((h3 >>> 16) | 0x80000000);
      if (h3 < m3) m3 = h3;
    }
    out[i] = (m0 ^ 0x80000000) >>> 0;
    out[i + 1] = (m1 ^ 0x80000000) >>> 0;
    out[i + 2] = (m2 ^ 0x80000000) >>> 0;
    out[i + 3] = (m3 ^ 0x80000000) >>> 0;
  }
  for (; i < k; i++) {
    const ai = a[i]!, bi = b[i]!;
    let m = 0x7fffffff;
    for (let j = 0; j < n; j++) {
      let h = Math.imul(zs[j]! ^ bi, ai);
      h = h ^ ((h >>> 16) | 0x80000000);
      if (h < m) m = h;
    }
    out[i] = (m ^ 0x80000000) >>> 0;
  }
}

/**
 * Classic MinHash in JS over the first m values of `getFps()`: each distinct fingerprint is premixed
 * once (an open-addressing table whose slots carry a generation number, so clearing it between
 * documents costs nothing), then the slot-major kernel runs.
 */
export function classicJs(a: Int32Array, b: Int32Array, pre: number, getFps: () => Uint32Array): (m: number, out: Uint32Array) => boolean {
  let keys = new Int32Array(8192);
  let stamp = new Uint32Array(8192);
  let gen = 0;
  let zs = new Int32Array(4096);
  return (m, out) => {
    const fps = getFps();
    if (keys.length < m * 2) {
      let cap = keys.length;
      while (cap < m * 2) cap *= 2;
      keys = new Int32Array(cap);
      stamp = new Uint32Array(cap);
      gen = 0;
    }
    if (zs.length < m) zs = new Int32Array(Math.max(m, zs.length * 2));
    if (++gen === 0xffffffff) {
      stamp.fill(0);
      gen = 1;
    }
    const mask = keys.length - 1;
    let d = 0;
    for (let j = 0; j < m; j++) {
      const z = fmix32((fps[j]! ^ pre) >>> 0) | 0;
      let s = z & mask;
      for (;;) {
        if (stamp[s] !== gen) {
          stamp[s] = gen;
          keys[s] = z;
          zs[d++] = z;
          break;
        }
        if (keys[s] === z) break;
        s = (s + 1) & mask;
      }
    }
    classicFromPremixed(zs, d, a, b, out);
    return true;
  };
}
