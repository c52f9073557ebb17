/**
 * Test helper for the online clusters: texts that form chains (a sliding window over one word
 * sequence: neighbouring windows are near duplicates, windows two steps apart are not, so deleting
 * the middle one splits a cluster), and the clusters recomputed from scratch by brute force.
 */
import { createShingler, jaccard, type NearDupIndexOptions } from '../../src/index.js';
import { splitmix32 } from '../../src/hash/mix.js';

/** Index options of the cluster tests (threshold 0.5, char 5-shingles). */
export const CLUSTER_OPTS: NearDupIndexOptions = { threshold: 0.5, k: 5 };

const VOCAB = (() => {
  const r = splitmix32(7);
  const words: string[] = [];
  for (let i = 0; i < 400; i++) {
    let w = '';
    const n = 4 + (r() % 6);
    for (let j = 0; j < n; j++) w += String.fromCharCode(97 + (r() % 26));
    words.push(w);
  }
  return words;
})();

/** Word sequence of base `b`. */
function sequence(b: number): string[] {
  const r = splitmix32(100 + b);
  return Array.from({ length: 200 }, () => VOCAB[r() % VOCAB.length]!);
}
const SEQS = [sequence(0), sequence(1)];

/**
 * Window `w` (0…7) of base `b` (0 or 1): 40 words starting at 8w. Neighbours share 32 of 48
 * distinct words (Jaccard about 0.67), windows two apart 24 of 56 (about 0.43). `edit` replaces
 * one word (0: none).
 */
export function windowText(b: number, w: number, edit = 0): string {
  const words = SEQS[b]!.slice(8 * w, 8 * w + 40);
  if (edit) words[edit % 40] = 'zz' + edit;
  return words.join(' ');
}

const shingler = createShingler({ k: 5 });

/** Connected components (of two or more) of the pairs with Jaccard ≥ t, as sorted id lists, sorted. */
export function expectedClusters(docs: Map<string, string>, t = 0.5): string[][] {
  const ids = [...docs.keys()];
  const sets = ids.map((id) => shingler.set(docs.get(id)!));
  const parent = ids.map((_, i) => i);
  const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x]!)));
  for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < ids.length; j++) if (jaccard(sets[i]!, sets[j]!) >= t) parent[find(i)] = find(j);
  const groups = new Map<number, string[]>();
  ids.forEach((id, i) => {
    const r = find(i);
    if (!groups.has(r)) groups.set(r, []);
    groups.get(r)!.push(id);
  });
  return canonical([...groups.values()].filter((g) => g.length >= 2));
}

/** Sorted members, clusters sorted by first member: a partition in one canonical form. */
export function canonical(groups: string[][]): string[][] {
  return groups.map((g) => [...g].sort()).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}
