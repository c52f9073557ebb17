/**
 * Under the cluster removal rule, each clustered document's similarity to its cluster's kept member
 * (the decide stage's `similarity` tags and `--removed` audit): a verified pair's when the two are
 * one, else computed from the representatives' sets.
 * @module
 */
import type { SetSource } from './setMaker.js';
import type { PositionPairs } from './decidePairs.js';
import { positionIn } from '../spill/sortedPairs.js';

/** Documents whose sets one batch of similarities to kept members makes. */
const SIM_BATCH = 8192;

/**
 * Under the cluster rule, each clustered document's exact Jaccard to its kept member (NaN for the
 * kept member and under `--keep none`), as `neardup dedup` tags it: a verified pair's similarity
 * when the two are one, else computed from their sets, a batch of documents at a time (a kept
 * member's set is made in every batch that holds some of its members).
 */
export async function similaritiesToKept(pairs: PositionPairs, rep: Float64Array, sets: SetSource, repPos: Int32Array): Promise<Float64Array> {
  const { members } = pairs;
  const P = members.length;
  const sim = new Float64Array(P).fill(NaN);
  pairs.forEach((a, b, sims, n) => {
    for (let i = 0; i < n; i++) {
      const pa = a[i]!;
      const pb = b[i]!;
      if (rep[pa] === members[pb]) sim[pa] = sims[i]!;
      else if (rep[pb] === members[pa]) sim[pb] = sims[i]!;
    }
  });
  // The rest, by kept member: a copy has its representative's similarity (1 to its own copies), and
  // only representatives' texts were gathered, so the sets are theirs.
  const want: number[] = [];
  const of = (g: number): number => members[repPos[positionIn(members, g)]!]!;
  for (let p = 0; p < P; p++) {
    if (!(rep[p]! >= 0 && rep[p] !== members[p] && Number.isNaN(sim[p]!))) continue;
    if (of(rep[p]!) === of(members[p]!)) sim[p] = 1;
    else want.push(p);
  }
  want.sort((x, y) => rep[x]! - rep[y]! || x - y);
  for (let i = 0; i < want.length;) {
    const batch = new Set<number>();
    let j = i;
    while (j < want.length && batch.size < SIM_BATCH) {
      batch.add(of(rep[want[j]!]!));
      batch.add(of(members[want[j]!]!));
      j++;
    }
    await sets.load(Float64Array.from(batch).sort());
    for (let x = i; x < j; x++) sim[want[x]!] = sets.jaccard(of(rep[want[x]!]!), of(members[want[x]!]!));
    i = j;
  }
  return sim;
}
