/**
 * Which documents a deduplication drops, and the kept document each one duplicates.
 *
 * Near duplication is not transitive: a ~ b and b ~ c do not make a ~ c, so dropping every
 * member of a connected component but one can drop documents that nothing kept resembles. The
 * `verified` rule (the default) walks the documents in keep order and keeps each one unless a
 * document already kept is its verified near duplicate: every dropped document then names a kept
 * document at or above the threshold (by a verified pair), and no two kept documents form a verified
 * pair. The `cluster` rule keeps one member per cluster, as neardup did before; it removes more, and
 * its dropped members can be far from their survivor.
 *
 * The greedy walk runs over units: copy groups of identical documents (one process) or single
 * documents (a job's components stage). A unit is decided as a whole at its best-ranked member's
 * turn: when it is kept, that member is kept and its copies duplicate it (similarity 1); when it is
 * dropped, all its members duplicate the same kept document. This is the document-level walk's
 * answer, because every member of a unit has the same pairs as the others.
 * @module
 */
import { REMOVAL_RULE_VALUES } from '../engine/options.js';
import type { RemovalRule } from '../engine/config.js';
export type { RemovalRule } from '../engine/config.js';

/** The removal rules, for option parsers. */
export const REMOVAL_RULES: readonly RemovalRule[] = REMOVAL_RULE_VALUES;

/** Checks a removal rule; throws a RangeError naming the bad value. */
export function checkRemovalRule(rule: string | undefined): RemovalRule {
  if (rule === undefined) return 'verified';
  if (!REMOVAL_RULES.includes(rule as RemovalRule)) throw new RangeError(`unknown removal rule "${rule}" (expected ${REMOVAL_RULES.join(' or ')})`);
  return rule as RemovalRule;
}

/** What a deduplication drops, per document. */
export interface Removal {
  /** The rule that decided. */
  rule: RemovalRule;
  /**
   * `keptBy[i]`: i when document i is kept (every document in no cluster is); j ≠ i when it is
   * dropped as a near duplicate of kept document j; -1 when it is dropped and nothing of its
   * cluster is kept (`keep: 'none'`).
   */
  keptBy: Int32Array;
  /**
   * The similarity of each dropped document to `keptBy[i]`: under `verified`, the verified pair's
   * (never below the threshold); under `cluster`, computed from the texts when asked for. NaN for
   * kept documents and where it is not known.
   */
  similarity: Float64Array;
  /** Documents dropped. */
  dropped: number;
}

/** The undirected graph of verified pairs between units 0..units−1, each pair once. */
export interface UnitPairs {
  units: number;
  count: number;
  a: ArrayLike<number>;
  b: ArrayLike<number>;
  similarity: ArrayLike<number>;
}

/** A greedy walk's decision per unit. */
export interface UnitDecision {
  /** `via[u]`: u when kept, the kept unit it duplicates when dropped, -1 when in no pair. */
  via: Int32Array;
  /** The verified similarity of u to via[u] when dropped; NaN otherwise. */
  similarity: Float64Array;
}

/**
 * The verified rule over units: `order` lists every unit in some pair, best first (the keep
 * order of each unit's best member; ties: input order). A unit is kept unless an already kept unit
 * is its neighbour; a dropped unit duplicates its neighbour kept earliest in `order`.
 */
export function decideUnits(pairs: UnitPairs, order: ArrayLike<number>): UnitDecision {
  const U = pairs.units;
  const start = new Int32Array(U + 1);
  for (let i = 0; i < pairs.count; i++) {
    start[pairs.a[i]! + 1]!++;
    start[pairs.b[i]! + 1]!++;
  }
  for (let u = 0; u < U; u++) start[u + 1]! += start[u]!;
  const fill = start.slice(0, U);
  // Each half-edge holds its neighbour and its pair (for the similarity): 8 bytes, as a decide task's
  // giant component holds 10^7 pairs.
  const nbr = new Int32Array(start[U]!);
  const pairOf = new Int32Array(start[U]!);
  for (let i = 0; i < pairs.count; i++) {
    const a = pairs.a[i]!;
    const b = pairs.b[i]!;
    let q = fill[a]!++;
    nbr[q] = b;
    pairOf[q] = i;
    q = fill[b]!++;
    nbr[q] = a;
    pairOf[q] = i;
  }
  const via = new Int32Array(U).fill(-1);
  const similarity = new Float64Array(U).fill(NaN);
  // Position in `order` of each kept unit; -1 while not kept.
  const keptAt = new Int32Array(U).fill(-1);
  for (let k = 0; k < order.length; k++) {
    const u = order[k]!;
    let best = -1;
    let bestAt = 0x7fffffff;
    let bestSim = NaN;
    for (let q = start[u]!; q < start[u + 1]!; q++) {
      const at = keptAt[nbr[q]!]!;
      if (at >= 0 && at < bestAt) {
        best = nbr[q]!;
        bestAt = at;
        bestSim = pairs.similarity[pairOf[q]!]!;
      }
    }
    if (best < 0) {
      via[u] = u;
      keptAt[u] = k;
    } else {
      via[u] = best;
      similarity[u] = bestSim;
    }
  }
  return { via, similarity };
}

/** How documents are ranked for keeping: by input order, or by a value (largest first with sign 1, smallest with -1); ties in input order. */
export interface KeepRanking {
  /** `none`: no document of a cluster is kept. */
  none?: boolean;
  /** A value per document (only clustered documents are read); absent: input order. */
  values?: ArrayLike<number>;
  /** 1: the largest value first; -1: the smallest. */
  sign?: 1 | -1;
  /** Exact remainders of integer values beyond 2^53 (compared after `values`; see keepPolicy.ts). */
  lo?: ArrayLike<number>;
}

/**
 * Orders `docs` (document numbers) best first under `ranking`; equal values go in document order.
 * Returns positions into `docs`.
 */
export function rankOrder(docs: ArrayLike<number>, ranking: KeepRanking): Int32Array {
  const order = new Int32Array(docs.length);
  for (let j = 0; j < docs.length; j++) order[j] = j;
  if (!ranking.values) {
    // Units' first members usually ascend already: no sort (a JS array of them cost decide ~12 MB at 746k units).
    let sorted = true;
    for (let j = 1; j < docs.length && sorted; j++) sorted = docs[j - 1]! < docs[j]!;
    return sorted ? order : Int32Array.from(Array.from(order).sort((x, y) => docs[x]! - docs[y]!));
  }
  const sign = ranking.sign ?? 1;
  const { values, lo } = ranking;
  const key = new Float64Array(docs.length);
  const keyLo = new Float64Array(docs.length);
  for (let j = 0; j < docs.length; j++) {
    key[j] = -sign * values[docs[j]!]!;
    keyLo[j] = lo ? -sign * lo[docs[j]!]! : 0;
  }
  // Ties go to the earlier document (units' best members need not come in document order).
  return Int32Array.from(Array.from(order).sort((x, y) => key[x]! - key[y]! || keyLo[x]! - keyLo[y]! || docs[x]! - docs[y]!));
}

/** Whether document a ranks before document b under `ranking` (values, then their exact remainders; ties: the earlier). */
function ranksBefore(ranking: KeepRanking, a: number, b: number): boolean {
  const { values, lo } = ranking;
  if (!values) return a < b;
  const sign = ranking.sign ?? 1;
  const va = sign * values[a]!;
  const vb = sign * values[b]!;
  if (va !== vb) return va > vb;
  const la = lo ? sign * lo[a]! : 0;
  const lb = lo ? sign * lo[b]! : 0;
  return la !== lb ? la > lb : a < b;
}

/** Documents grouped into units (copy groups), as `CopyGroups` has them. */
export interface UnitMembers {
  /** Offsets into members, length units + 1. */
  start: Int32Array;
  /** Document numbers by unit, ascending within a unit. */
  members: Int32Array;
}

/**
 * The verified rule over n documents whose verified pairs are between units (`units`: copy groups;
 * absent: every document is its own unit). Copies within a unit are near duplicates at similarity 1.
 */
export function verifiedRemoval(n: number, pairs: UnitPairs, ranking: KeepRanking, units?: UnitMembers): Removal {
  const inPair = (mark: (u: number) => void): void => {
    for (let i = 0; i < pairs.count; i++) (mark(pairs.a[i]!), mark(pairs.b[i]!));
  };
  return verifiedRemovalBy(n, { units: pairs.units, inPair, walk: (order) => decideUnits(pairs, order) }, ranking, units);
}

/** The verified rule's graph as {@link verifiedRemovalBy} asks it: its units, which are in a pair, and the greedy walk over them. */
export interface UnitWalk {
  /** Units 0..units−1. */
  units: number;
  /** Calls `mark` with each end of each pair (a unit may come more than once). */
  inPair: (mark: (u: number) => void) => void;
  /** {@link decideUnits} over the pairs in `order`, or what gives its answer (an out-of-core walk). */
  walk: (order: Int32Array) => UnitDecision;
}

/** {@link verifiedRemoval} over a graph given by its walk (see {@link UnitWalk}): the pairs need not be in memory. */
export function verifiedRemovalBy(n: number, graph: UnitWalk, ranking: KeepRanking, units?: UnitMembers): Removal {
  const keptBy = new Int32Array(n);
  for (let i = 0; i < n; i++) keptBy[i] = i;
  const similarity = new Float64Array(n).fill(NaN);
  const U = graph.units;
  const size = (u: number): number => (units ? units.start[u + 1]! - units.start[u]! : 1);
  const member = (u: number, j: number): number => (units ? units.members[units.start[u]! + j]! : u);
  // Clustered units: in a pair, or a group of copies.
  const degree = new Uint8Array(U);
  graph.inPair((u) => (degree[u] = 1));
  // Typed arrays, not JS arrays: a giant component's units are most of a decide task's memory.
  let C = 0;
  for (let u = 0; u < U; u++) if (degree[u] || size(u) > 1) C++;
  const clustered = new Int32Array(C);
  for (let u = 0, j = 0; u < U; u++) if (degree[u] || size(u) > 1) clustered[j++] = u;
  let dropped = 0;
  if (ranking.none) {
    for (const u of clustered) for (let j = 0; j < size(u); j++) keptBy[member(u, j)] = -1;
    for (const u of clustered) dropped += size(u);
    return { rule: 'verified', keptBy, similarity, dropped };
  }
  // Each unit's best member: its first in input order, or its best value (ties: the earliest).
  const best = new Int32Array(U);
  for (const u of clustered) {
    let b = member(u, 0);
    for (let j = 1; j < size(u); j++) {
      const d = member(u, j);
      if (ranksBefore(ranking, d, b)) b = d;
    }
    best[u] = b;
  }
  const bests = clustered.map((u) => best[u]!);
  const rank = rankOrder(bests, ranking);
  const order = rank.map((j) => clustered[j]!);
  const { via, similarity: viaSim } = graph.walk(order);
  for (const u of clustered) {
    const v = via[u]!;
    // A unit of copies in no pair is kept (via -1: it was not walked, having no neighbour).
    const keptDoc = v === u || v < 0 ? best[u]! : best[v]!;
    for (let j = 0; j < size(u); j++) {
      const d = member(u, j);
      if (d === keptDoc) continue;
      keptBy[d] = keptDoc;
      similarity[d] = v === u || v < 0 ? 1 : viaSim[u]!;
      dropped++;
    }
  }
  return { rule: 'verified', keptBy, similarity, dropped };
}

/**
 * The cluster rule: every member of a cluster but its kept member is dropped as its duplicate
 * (`keptOf(k)` the kept member of cluster k, -1 for none); similarities are left NaN.
 */
export function clusterRemoval(n: number, clusters: readonly { members: readonly number[] }[], keptOf: (k: number) => number): Removal {
  const keptBy = new Int32Array(n);
  for (let i = 0; i < n; i++) keptBy[i] = i;
  let dropped = 0;
  clusters.forEach((c, k) => {
    const kept = keptOf(k);
    for (const m of c.members) {
      if (m === kept) continue;
      keptBy[m] = kept;
      dropped++;
    }
  });
  return { rule: 'cluster', keptBy, similarity: new Float64Array(n).fill(NaN), dropped };
}
