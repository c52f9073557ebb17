/**
 * Test helper: the Kijiji rental ads (data/ in the repo), as Title + " " + Short Description.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The repository root (dist/test/helpers -> ../../..). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The ad texts, in file order. */
export function kijijiTexts(): string[] {
  const file = path.resolve(repoRoot, 'data/dataset_rent_rome_kijiji.tsv');
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (!lines[i]) continue;
    const f = lines[i]!.split('\t');
    out.push(`${f[0] ?? ''} ${f[1] ?? ''}`);
  }
  return out;
}
