/**
 * The planner's estimate of clustered documents (those with at least one verified partner) from the
 * pairs a sample of k of N units saw. Not a sum over pairs, so the pairs' Horvitz–Thompson weights do
 * not give it: scaled as the pairs, a sample's clustered documents overstated the 1M bench job's by
 * 1.9× (a sample sees clusters in pieces); scaled as the documents, they understate it as much.
 *
 * A sampled document with a partner in its own unit is seen clustered for sure. One whose partners
 * are all in other units shows each with probability q = (k − 1)/(N − 1), so its count of seen
 * partners is binomial over its true count d; the unseen ones are estimated from the counts seen
 * with a nonparametric maximum-likelihood fit of d's distribution (EM over a grid of d, with the
 * documents seen with no partner as the missing category). Checked in test/shard/plan/estimate.test.ts.
 * @module
 */

/** Counts of seen partners above this are one category (their documents are seen clustered all but surely). */
const J = 32;
/** EM steps at most, and the relative change of the total below which it stops. */
const MAX_STEPS = 5000;
const TOLERANCE = 1e-10;

/**
 * The distinct pairs seen in a sample: pair i joins document da[i] of drawn unit ua[i] and db[i] of
 * unit ub[i] (document numbers unique across the sample).
 */
export interface SeenPairs {
  da: ArrayLike<number>;
  ua: ArrayLike<number>;
  db: ArrayLike<number>;
  ub: ArrayLike<number>;
}

/**
 * Clustered documents of the whole corpus from the distinct pairs seen in a sample, with k of
 * `units` units drawn uniformly without replacement.
 */
export function estimateClustered(pairs: SeenPairs, units: number, k: number): number {
  const { da: docA, ua: unitA, db: docB, ub: unitB } = pairs;
  const same = new Map<number, number>();
  const cross = new Map<number, number>();
  for (let i = 0; i < docA.length; i++) {
    const m = unitA[i] === unitB[i] ? same : cross;
    m.set(docA[i]!, (m.get(docA[i]!) ?? 0) + 1);
    m.set(docB[i]!, (m.get(docB[i]!) ?? 0) + 1);
  }
  const sure = same.size;
  const seen = new Float64Array(J + 2);
  for (const [doc, n] of cross) if (!same.has(doc)) seen[Math.min(n, J + 1)]!++;
  if (k >= units) return sure + seen.reduce((a, b) => a + b, 0);
  const q = k > 1 ? (k - 1) / (units - 1) : 0;
  // With one unit drawn no pair across units is seen: the seen ones are all there is to scale.
  if (q === 0) return ((sure + seen.reduce((a, b) => a + b, 0)) * units) / k;
  return ((sure + unseenAndSeen(seen, q)) * units) / k;
}

/**
 * Documents with a partner, seen or not, among those whose partners all lie in other units, from
 * `seen[j]` (documents seen with j partners, j ≤ J; `seen[J + 1]`: more than J), each partner seen
 * with probability q.
 */
export function unseenAndSeen(seen: ArrayLike<number>, q: number): number {
  let observed = 0;
  for (let j = 1; j < seen.length; j++) observed += seen[j]!;
  if (observed === 0) return 0;
  // d = 1..64, then a geometric grid up to D, past which a document is seen with more than J
  // partners all but surely (d = ∞, last): the probabilities vary slowly in d there.
  const D = Math.min(4000, Math.max(J + 2, Math.ceil((3 * (J + 1)) / q)));
  const grid: number[] = [];
  for (let d = 1; d <= D; d = d < 64 ? d + 1 : Math.max(d + 1, Math.round(d * 1.05))) grid.push(d);
  const G = grid.length;
  // P[g][j]: probability of j seen partners (j ≤ J) at d = grid[g]; P[g][J + 1]: more than J.
  const P: Float64Array[] = [];
  const detected = new Float64Array(G + 1);
  for (let g = 0; g < G; g++) {
    const d = grid[g]!;
    const row = new Float64Array(J + 2);
    let p = Math.pow(1 - q, d);
    const zero = p;
    let low = p;
    for (let j = 1; j <= J; j++) {
      p = j <= d ? (p * (d - j + 1) * q) / (j * (1 - q)) : 0;
      row[j] = p;
      low += p;
    }
    row[J + 1] = Math.max(0, 1 - low);
    P.push(row);
    detected[g] = 1 - zero;
  }
  const inf = new Float64Array(J + 2);
  inf[J + 1] = 1;
  P.push(inf);
  detected[G] = 1;
  let n = new Float64Array(G + 1).fill(observed / (G + 1));
  let total = observed;
  for (let step = 0; step < MAX_STEPS; step++) {
    const next = new Float64Array(G + 1);
    for (let j = 1; j <= J + 1; j++) {
      const m = seen[j] ?? 0;
      if (m === 0) continue;
      let z = 0;
      for (let g = 0; g <= G; g++) z += n[g]! * P[g]![j]!;
      if (z === 0) continue;
      for (let g = 0; g <= G; g++) next[g]! += (m * n[g]! * P[g]![j]!) / z;
    }
    let t = 0;
    for (let g = 0; g <= G; g++) t += next[g] = next[g]! / detected[g]!;
    n = next;
    const done = Math.abs(t - total) <= TOLERANCE * t;
    total = t;
    if (done) break;
  }
  return total;
}
