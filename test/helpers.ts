/** Shared helpers for the tests. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { splitmix32 } from '../src/hash/mix.js';

/** Repository root (tests run from dist/test). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The Kijiji rental-ads TSV shared beside the repository. */
export const kijijiPath = path.resolve(repoRoot, 'data/dataset_rent_rome_kijiji.tsv');

/** Seed 000's documents: Title + " " + Short Description of every data row (plain tab split). */
export function kijijiDocs(): string[] {
  const lines = readFileSync(kijijiPath, 'utf8').split('\n').slice(1).filter((l) => l.length > 0);
  return lines.map((l) => {
    const f = l.split('\t');
    return f[0] + ' ' + f[1];
  });
}

/** Distinct random uint32 values from a seeded generator, never colliding across calls of one stream. */
export class UniqueInts {
  private rnd: () => number;
  private seen = new Set<number>();
  constructor(seed: number) {
    this.rnd = splitmix32(seed);
  }
  take(n: number): number[] {
    const out: number[] = [];
    while (out.length < n) {
      const v = this.rnd();
      if (!this.seen.has(v)) {
        this.seen.add(v);
        out.push(v);
      }
    }
    return out;
  }
}

/**
 * Two sets of equal size m whose Jaccard similarity is as close to `target` as integers allow.
 * Returns the sets (unsorted Uint32Arrays) and their exact Jaccard.
 */
export function pairWithJaccard(gen: UniqueInts, m: number, target: number): { a: Uint32Array; b: Uint32Array; j: number } {
  // |A|=|B|=m, |A∩B|=I  ⇒  J = I / (2m − I)
  const inter = Math.max(0, Math.min(m, Math.round((2 * m * target) / (1 + target))));
  const common = gen.take(inter);
  const a = Uint32Array.from([...common, ...gen.take(m - inter)]);
  const b = Uint32Array.from([...common, ...gen.take(m - inter)]);
  return { a, b, j: inter / (2 * m - inter) };
}
