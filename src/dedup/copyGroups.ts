/**
 * Identical documents collapsed onto one representative before LSH. A group of m documents with the
 * same fingerprint set collides in every band, so without this it costs m(m−1)/2 candidate
 * pairs — 200 million for 20,000 copies of one boilerplate page, which exhausts memory. Collapsed,
 * it costs one document; pairs, candidate counts and clusters are expanded back afterwards and equal
 * what the full run gives, because copies have similarity 1 with each other and the same similarity
 * to every other document.
 * @module
 */
import type { ScoredPair } from '../similarity/bruteForce.js';
import { UnionFind, componentsOf, type Cluster } from '../cluster/clusters.js';
import { sortPairs } from '../similarity/sortPairs.js';
import type { BandKeyTable } from '../lsh/candidates.js';

/** Documents grouped by identical content; groups are numbered in order of first appearance. */
export interface CopyGroups {
  /** Number of documents. */
  n: number;
  /** Number of groups (distinct documents). */
  groups: number;
  /** Offsets into `members`, length groups + 1: group g holds members[start[g]] .. members[start[g+1] − 1]. */
  start: Int32Array;
  /** Document indices by group, ascending within a group: the first is the group's representative. */
  members: Int32Array;
}

/**
 * Places documents into groups one at a time (a new group, or an existing one) and returns the
 * groups as {@link CopyGroups}. Deciding which documents are identical is the caller's business
 * (with a {@link HashIndex}).
 */
export class CopyFinder {
  /** Groups so far. */
  groups = 0;
  private docs = 0;
  private groupOf: Int32Array;

  constructor(expected = 1024) {
    this.groupOf = new Int32Array(Math.max(16, expected));
  }

  /** Places the next document in a new group; returns its number. */
  startGroup(): number {
    return this.place(this.groups++);
  }

  /** Places the next document in group g. */
  join(g: number): number {
    return this.place(g);
  }

  /** The groups as built so far. */
  result(): CopyGroups {
    const { groups, docs } = this;
    const start = new Int32Array(groups + 1);
    for (let d = 0; d < docs; d++) start[this.groupOf[d]! + 1]!++;
    for (let g = 0; g < groups; g++) start[g + 1]! += start[g]!;
    const fill = start.slice(0, groups);
    const members = new Int32Array(docs);
    for (let d = 0; d < docs; d++) members[fill[this.groupOf[d]!]!++] = d;
    return { n: docs, groups, start, members };
  }

  private place(g: number): number {
    if (this.docs === this.groupOf.length) {
      const a = new Int32Array(this.groupOf.length * 2);
      a.set(this.groupOf);
      this.groupOf = a;
    }
    this.groupOf[this.docs++] = g;
    return g;
  }
}

/**
 * A hash table from content to a non-negative number (a group), in typed arrays: the caller hashes
 * the content and says, for a stored value, whether its content is the same.
 */
export class HashIndex {
  private slots: Int32Array;
  private hashes: Uint32Array;
  private filled = 0;

  constructor(expected = 1024) {
    let t = 16;
    while (t < expected * 2) t *= 2;
    this.slots = new Int32Array(t).fill(-1);
    this.hashes = new Uint32Array(t);
  }

  /** The first stored value with this hash whose content `same` accepts, or −1. */
  find(hash: number, same: (value: number) => boolean): number {
    hash >>>= 0;
    const mask = this.slots.length - 1;
    for (let slot = hash & mask;; slot = (slot + 1) & mask) {
      const v = this.slots[slot]!;
      if (v === -1) return -1;
      if (this.hashes[slot] === hash && same(v)) return v;
    }
  }

  /** Stores `value` under `hash` (the caller has checked that no equal content is stored). */
  insert(hash: number, value: number): void {
    hash >>>= 0;
    if ((this.filled + 1) * 2 > this.slots.length) this.grow();
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    while (this.slots[slot] !== -1) slot = (slot + 1) & mask;
    this.slots[slot] = value;
    this.hashes[slot] = hash;
    this.filled++;
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const hashes = new Uint32Array(slots.length);
    const mask = slots.length - 1;
    for (let s = 0; s < this.slots.length; s++) {
      const v = this.slots[s]!;
      if (v === -1) continue;
      const h = this.hashes[s]!;
      let t = h & mask;
      while (slots[t] !== -1) t = (t + 1) & mask;
      slots[t] = v;
      hashes[t] = h;
    }
    this.slots = slots;
    this.hashes = hashes;
  }
}

/** Size of group g. */
function sizeOf(groups: CopyGroups, g: number): number {
  return groups.start[g + 1]! - groups.start[g]!;
}

/** Pairs among the documents inside groups: Σ m(m−1)/2. */
export function pairsWithinGroups(groups: CopyGroups): number {
  let total = 0;
  for (let g = 0; g < groups.groups; g++) {
    const m = sizeOf(groups, g);
    total += (m * (m - 1)) / 2;
  }
  return total;
}

/** Document pairs that `count` group pairs stand for: Σ |a|·|b| over pairs p = (a(p), b(p)). */
export function pairsAcrossGroups(groups: CopyGroups, count: number, a: (p: number) => number, b: (p: number) => number): number {
  let total = 0;
  for (let p = 0; p < count; p++) total += sizeOf(groups, a(p)) * sizeOf(groups, b(p));
  return total;
}

/** The largest group. */
export function largestGroup(groups: CopyGroups): number {
  let max = 0;
  for (let g = 0; g < groups.groups; g++) max = Math.max(max, sizeOf(groups, g));
  return max;
}

/**
 * The document pairs that verified group pairs stand for, plus similarity-1 pairs inside each group,
 * sorted by (a, b). The caller checks their number (within + across groups) against its limit first.
 */
export function expandPairs(groups: CopyGroups, groupPairs: readonly ScoredPair[]): ScoredPair[] {
  const { start, members } = groups;
  const out: ScoredPair[] = [];
  for (let g = 0; g < groups.groups; g++) {
    for (let i = start[g]!; i < start[g + 1]!; i++) {
      const a = members[i]!;
      for (let j = i + 1; j < start[g + 1]!; j++) out.push({ a, b: members[j]!, similarity: 1 });
    }
  }
  for (const p of groupPairs) {
    for (let i = start[p.a]!; i < start[p.a + 1]!; i++) {
      const x = members[i]!;
      for (let j = start[p.b]!; j < start[p.b + 1]!; j++) {
        const y = members[j]!;
        out.push(x < y ? { a: x, b: y, similarity: p.similarity } : { a: y, b: x, similarity: p.similarity });
      }
    }
  }
  sortPairs(out);
  return out;
}

/**
 * Clusters of the documents when every group is one cluster of copies and verified group pairs join
 * groups: the same clusters as the full pair graph gives, without enumerating its pairs.
 */
export function clusterGroups(groups: CopyGroups, groupPairs: Iterable<{ a: number; b: number }>): { clusters: Cluster[]; clusterOf: Int32Array } {
  const { start, members } = groups;
  const uf = new UnionFind(groups.n);
  for (let g = 0; g < groups.groups; g++) {
    const rep = members[start[g]!]!;
    for (let i = start[g]! + 1; i < start[g + 1]!; i++) uf.union(rep, members[i]!);
  }
  for (const p of groupPairs) uf.union(members[start[p.a]!]!, members[start[p.b]!]!);
  return componentsOf(uf, groups.n);
}

/** Documents with the same text, folded: their groups, each document's group, a group's size. */
export interface FoldedCopies {
  groups: CopyGroups;
  groupOf: Int32Array;
  size: (g: number) => number;
}

/**
 * Groups documents with the same text (both text hashes and every band key equal; documents without
 * shingles stay alone), numbered in order of first appearance as dedup()'s copy groups are. Every
 * document but the first of its group is hidden from the buckets (`present` 0). Undefined when no
 * document has a copy.
 */
export function foldCopies(table: BandKeyTable, th: Uint32Array): FoldedCopies | undefined {
  const { n, hi, lo, present, bands, bandStride, docStride } = table;
  const index = new HashIndex(n);
  const finder = new CopyFinder(n);
  const firstOf: number[] = [];
  let folded = 0;
  const same = (a: number, b: number): boolean => {
    if (th[2 * a] !== th[2 * b] || th[2 * a + 1] !== th[2 * b + 1]) return false;
    for (let k = 0; k < bands; k++) {
      const x = k * bandStride + a * docStride;
      const y = k * bandStride + b * docStride;
      if (hi[x] !== hi[y] || lo[x] !== lo[y]) return false;
    }
    return true;
  };
  const hidden: number[] = [];
  for (let i = 0; i < n; i++) {
    if (!present[i]) {
      firstOf.push(i);
      finder.startGroup();
      continue;
    }
    const g = index.find(th[2 * i]!, (v) => same(firstOf[v]!, i));
    if (g >= 0) {
      finder.join(g);
      hidden.push(i);
      folded++;
    } else {
      index.insert(th[2 * i]!, finder.startGroup());
      firstOf.push(i);
    }
  }
  if (folded === 0) return undefined;
  for (const i of hidden) present[i] = 0;
  const groups = finder.result();
  const groupOf = new Int32Array(n);
  for (let g = 0; g < groups.groups; g++) for (let j = groups.start[g]!; j < groups.start[g + 1]!; j++) groupOf[groups.members[j]!] = g;
  return { groups, groupOf, size: (g) => groups.start[g + 1]! - groups.start[g]! };
}
