/**
 * Recall against the generator's planted pairs: found planted pairs over planted pairs whose exact
 * Jaccard is ≥ threshold (reported pairs are verified ≥ threshold; missed ones are checked exactly).
 * @module
 */
import { readFileSync } from 'node:fs';
import { readLineBatches } from '../src/dedup/lineSource.js';
import { createTextSigner } from '../src/sketch/textSigner.js';
import { jaccard } from '../src/similarity/jaccard.js';

/** Recall of the planted pairs in `${file}.truth.tsv` given the pairs found (a < b). */
export async function plantedRecall(file: string, found: Iterable<{ a: number; b: number }>, threshold: number) {
  const key = (a: number, b: number): number => a * 2 ** 21 + b;
  const got = new Set<number>();
  for (const p of found) got.add(key(p.a, p.b));
  const planted = readFileSync(`${file}.truth.tsv`, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => l.split('\t').map(Number) as [number, number, number]);
  const missed = planted.filter(([a, b]) => !got.has(key(a, b)));
  const need = new Set<number>();
  for (const [a, b] of missed) need.add(a).add(b);
  const textOf = new Map<number, string>();
  let d = 0;
  // Copy each needed text: a slice would pin its whole read chunk.
  if (need.size > 0) {
    for await (const batch of readLineBatches(file))
      for (const l of batch)
        if (need.has(d++))
          textOf.set(d - 1, Buffer.from(l.slice(l.indexOf('\t') + 1)).toString());
  }
  const signer = createTextSigner();
  let missedAbove = 0;
  for (const [a, b] of missed) if (jaccard(signer.set(textOf.get(a)!), signer.set(textOf.get(b)!)) >= threshold) missedAbove++;
  const foundPlanted = planted.length - missed.length;
  return { planted, missed: missed.length, missedAbove, foundPlanted, found: got, recall: foundPlanted / (foundPlanted + missedAbove) };
}
