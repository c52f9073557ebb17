/**
 * Exact set similarity over sorted unique Uint32Array sets.
 * @module
 */

/** |a ∩ b| of two sorted unique sets, by merge. */
export function intersectionSize(a: Uint32Array, b: Uint32Array): number {
  let i = 0;
  let j = 0;
  let n = 0;
  const la = a.length;
  const lb = b.length;
  while (i < la && j < lb) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      n++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return n;
}

/** |a ∩ b| of two sorted unique 64-bit sets (`--fingerprint-bits 64`), by merge: kept apart from the 32-bit one, whose callers are hot. */
export function intersectionSize64(a: BigUint64Array, b: BigUint64Array): number {
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      n++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return n;
}

/**
 * Jaccard similarity |a ∩ b| / |a ∪ b| of two sorted unique sets. Two empty sets have similarity 0:
 * an empty document is never a near duplicate of anything.
 */
export function jaccard(a: Uint32Array, b: Uint32Array): number {
  if (a.length === 0 || b.length === 0) return 0;
  const inter = intersectionSize(a, b);
  return inter / (a.length + b.length - inter);
}

/**
 * Jaccard similarity if it is at least `threshold`, else -1; stops the merge as soon as the
 * threshold is out of reach. The returned value is computed exactly as {@link jaccard} does.
 */
export function jaccardAtLeast(a: Uint32Array, b: Uint32Array, threshold: number): number {
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return -1;
  if (Math.min(la, lb) < threshold * Math.max(la, lb) - 1e-9) return -1;
  // J ≥ t  ⇔  |a∩b| ≥ t(|a|+|b|)/(1+t); a hair of slack keeps float rounding on the safe side.
  const need = (threshold * (la + lb)) / (1 + threshold) - 1e-9;
  const n = intersectionAtLeast(a, b, need);
  if (n < 0) return -1;
  const s = n / (la + lb - n);
  return s >= threshold ? s : -1;
}

/**
 * |a ∩ b| of two sorted sets by merge, or -1 as soon as fewer than `need` common elements are still
 * possible (the early exit of {@link jaccardAtLeast} and of containment verification).
 */
export function intersectionAtLeast(a: Uint32Array, b: Uint32Array, need: number): number {
  const la = a.length;
  const lb = b.length;
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < la && j < lb) {
    if (n + Math.min(la - i, lb - j) < need) return -1;
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      n++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return n;
}
