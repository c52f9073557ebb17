/**
 * Containment |A ∩ B| / |A|: how much of A lies inside B (Broder). Not symmetric: a short quote
 * inside a long page has containment near 1 in the page, while their Jaccard similarity is small.
 * @module
 */
import { intersectionAtLeast, intersectionSize } from './jaccard.js';
import type { ScoredPair } from './bruteForce.js';

/** |a ∩ b| / |a| of two sorted unique sets; 0 when a is empty. */
export function containment(a: Uint32Array, b: Uint32Array): number {
  if (a.length === 0 || b.length === 0) return 0;
  return intersectionSize(a, b) / a.length;
}

/**
 * The larger of the two containments, |a ∩ b| / min(|a|, |b|) (the smaller set inside the larger),
 * and which side is contained: `aInside` is true when a has no more tokens than b.
 */
export function maxContainment(a: Uint32Array, b: Uint32Array): { score: number; aInside: boolean } {
  if (a.length === 0 || b.length === 0) return { score: 0, aInside: a.length <= b.length };
  return { score: intersectionSize(a, b) / Math.min(a.length, b.length), aInside: a.length <= b.length };
}

/**
 * Every pair whose larger containment is ≥ `threshold`, comparing all pairs: the O(n²) reference
 * the containment candidates are tested against. `a` is the contained set (fewer tokens; the lower
 * index on a tie), `similarity` = |a ∩ b| / |a|; sorted by (a, b).
 */
export function bruteForceContainment(sets: readonly Uint32Array[], threshold: number): ScoredPair[] {
  const pairs: ScoredPair[] = [];
  for (let i = 0; i < sets.length; i++) {
    const si = sets[i]!;
    if (si.length === 0) continue;
    for (let j = i + 1; j < sets.length; j++) {
      const sj = sets[j]!;
      if (sj.length === 0) continue;
      const s = intersectionAtLeast(si, sj, threshold * Math.min(si.length, sj.length) - 1e-9) / Math.min(si.length, sj.length);
      if (s < threshold) continue;
      pairs.push(sj.length < si.length ? { a: j, b: i, similarity: s } : { a: i, b: j, similarity: s });
    }
  }
  pairs.sort((u, v) => u.a - v.a || u.b - v.b);
  return pairs;
}
