/**
 * The report's side-by-side views, steps of {@link buildReportData}: the largest clusters (their
 * first member beside the members that differ most from it, with shared passages) and the pairs
 * just above the threshold.
 * @module
 */
import type { DedupResult } from '../dedup/dedup.js';
import { jaccard } from '../similarity/jaccard.js';
import { commonPassages } from '../similarity/passages.js';
import { round, roundDown } from './charts.js';
import type { BorderlinePair, ReportComparison, ReportData, ReportMember } from './types.js';

/** What the views show and how much of it. */
export interface ViewOptions {
  /** Texts are cut to this many characters. */
  maxTextChars: number;
  /** Shortest highlighted shared passage, in characters. */
  minPassage: number;
}

/** What both views read. */
export interface ViewInput {
  texts: readonly string[];
  sets: readonly Uint32Array[];
  idOf: (i: number) => string;
}

/** Options of {@link clusterView}. */
export interface ClusterViewOptions extends ViewOptions {
  /** Clusters with at least two distinct texts shown (and exact-copy clusters listed). */
  clusters: number;
  /** Members shown per cluster (at least 2). */
  membersPerCluster: number;
  /** The run's threshold: a compared pair below it says which member links it. */
  threshold: number;
}

/**
 * For a compared pair (a, b) below the threshold (in one cluster only through other members): the member
 * x of the cluster with both (a, x) and (x, b) at or above the threshold and the highest lower
 * similarity of the two, or undefined when no single member links them (the path is longer).
 */
function linkOf(
  pair: readonly [number, number],
  members: readonly number[],
  sets: readonly Uint32Array[],
  threshold: number,
): { via: number; similarities: [number, number] } | undefined {
  const [a, b] = pair;
  let best: { via: number; similarities: [number, number] } | undefined;
  for (const x of members) {
    if (x === a || x === b) continue;
    const s1 = jaccard(sets[a]!, sets[x]!);
    if (s1 < threshold) continue;
    const s2 = jaccard(sets[x]!, sets[b]!);
    if (s2 < threshold) continue;
    if (!best || Math.min(s1, s2) > Math.min(...best.similarities)) best = { via: x, similarities: [s1, s2] };
  }
  return best;
}

/**
 * The largest clusters with at least two distinct texts, side by side, and the largest clusters of
 * exact copies (nothing to align: listed by id and size only).
 */
export function clusterView(input: ViewInput, clusters: DedupResult['clusters'], o: ClusterViewOptions): ReportData['clusters'] {
  const { texts, sets, idOf } = input;
  const maxChars = o.maxTextChars;
  const perCluster = o.membersPerCluster;
  const bySize = [...clusters].sort((x, y) => y.members.length - x.members.length || x.id - y.id);
  const distinct = (c: { members: number[] }): number => new Set(c.members.map((i) => texts[i]!)).size;
  const wantClusters = o.clusters;
  const largest: typeof bySize = [];
  const copiesOnly: { id: string; size: number }[] = [];
  for (const c of bySize) {
    if (largest.length >= wantClusters && copiesOnly.length >= wantClusters) break;
    if (distinct(c) > 1) {
      if (largest.length < wantClusters) largest.push(c);
    } else if (copiesOnly.length < wantClusters) copiesOnly.push({ id: idOf(c.id), size: c.members.length });
  }
  const shown = largest.map((c) => {
    // Show the members that differ most from the first one: exact copies teach nothing.
    const first = c.members[0]!;
    const seenText = new Map<string, number>([[texts[first]!, 1]]);
    const others: { i: number; sim: number }[] = [];
    for (const i of c.members.slice(1)) {
      const t = texts[i]!;
      const copies = seenText.get(t);
      if (copies !== undefined) {
        seenText.set(t, copies + 1);
        continue;
      }
      seenText.set(t, 1);
      others.push({ i, sim: jaccard(sets[first]!, sets[i]!) });
    }
    others.sort((x, y) => x.sim - y.sim || x.i - y.i);
    const picked = [first, ...others.slice(0, perCluster - 1).map((x) => x.i)];
    const members: ReportMember[] = picked.map((i) => {
      const t = texts[i]!;
      return { id: idOf(i), index: i, text: t.length > maxChars ? t.slice(0, maxChars) : t, truncated: t.length > maxChars, copies: seenText.get(t)! };
    });
    const comparisons: ReportComparison[] = members.slice(1).map((m, k) => {
      const r = commonPassages(members[0]!.text, m.text, { minLength: o.minPassage });
      const similarity = jaccard(sets[first]!, sets[m.index]!);
      const cmp: ReportComparison = { member: k + 1, similarity: round(similarity), passages: r.passages, coverage: roundDown(r.coverageA) };
      if (similarity < o.threshold) {
        const link = linkOf([first, m.index], c.members, sets, o.threshold);
        cmp.belowThreshold = true;
        if (link) cmp.linkedThrough = { id: idOf(link.via), similarities: [round(link.similarities[0]), round(link.similarities[1])] };
      }
      return cmp;
    });
    return { id: idOf(c.id), size: c.members.length, distinctTexts: seenText.size, members, comparisons };
  });
  return { total: clusters.length, exactCopyClusters: clusters.reduce((a, c) => a + (distinct(c) === 1 ? 1 : 0), 0), copiesOnly, shown };
}

/** The lowest similarities at or above the threshold, one per distinct text pair, with their shared passages. */
export function borderlinePairs(input: ViewInput, pairs: DedupResult['pairs'], want: number, o: ViewOptions): BorderlinePair[] {
  const { texts, idOf } = input;
  const borderline: BorderlinePair[] = [];
  const seenPair = new Set<string>();
  const cut = (t: string): string => (t.length > o.maxTextChars ? t.slice(0, o.maxTextChars) : t);
  for (const p of [...pairs].sort((x, y) => x.similarity - y.similarity || x.a - y.a || x.b - y.b)) {
    if (borderline.length >= want) break;
    const key = texts[p.a]! + '\u0000' + texts[p.b]!;
    if (texts[p.a] === texts[p.b] || seenPair.has(key)) continue;
    seenPair.add(key);
    const aText = cut(texts[p.a]!);
    const bText = cut(texts[p.b]!);
    borderline.push({
      a: idOf(p.a),
      b: idOf(p.b),
      similarity: round(p.similarity),
      aText,
      bText,
      passages: commonPassages(aText, bText, { minLength: o.minPassage }).passages,
    });
  }
  return borderline;
}
