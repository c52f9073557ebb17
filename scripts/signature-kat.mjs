// Writes test/fixtures/signature-kat.json: known-answer vectors of the signature docs/formats.md
// specifies ("Signatures, exactly"), from the built library (run `npm run build` first).
//
//   node scripts/signature-kat.mjs          print the vectors
//   node scripts/signature-kat.mjs --write  write the fixture
//
// The vectors are a stored format: a change to an existing one is a break of every index and job
// that holds signatures, never a fixture to regenerate. Add cases at the end; keep the old ones.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { createShingler } = await import(path.join(root, 'dist/src/text/shingler.js'));
const { createMinHasher } = await import(path.join(root, 'dist/src/sketch/minhash.js'));

const QUICK = 'The quick brown fox jumps over the lazy dog';
const AD =
  'Bright 2 bedroom apartment near the Plateau, heat and hot water included, laundry in the building, close to metro Mont-Royal. Available July 1st. No pets. Call after 6 pm.';
const CASES = [
  { name: 'char 5, oph, 16 slots', text: QUICK, shingle: { kind: 'char', k: 5, seed: 0 }, minhash: { method: 'oph', numPerm: 16, seed: 1 } },
  { name: 'char 5, classic, 16 slots', text: QUICK, shingle: { kind: 'char', k: 5, seed: 0 }, minhash: { method: 'classic', numPerm: 16, seed: 1 } },
  {
    name: 'the defaults (char 5, oph, 128 slots, seed 1)',
    text: AD,
    shingle: { kind: 'char', k: 5, seed: 0 },
    minhash: { method: 'oph', numPerm: 128, seed: 1 },
  },
  {
    name: 'NFKC, case and whitespace under the default preset; shingle seed 7, signature seed 42',
    text: 'Ｃafé ﬁnancier — ÉTÉ 2026\n\t Crème   brûlée',
    shingle: { kind: 'char', k: 5, seed: 7 },
    minhash: { method: 'oph', numPerm: 32, seed: 42 },
  },
  {
    name: 'astral characters count as one code point; CJK',
    text: '東京都の天気 😀 晴れ時々曇り 😀😀',
    shingle: { kind: 'char', k: 3, seed: 0 },
    minhash: { method: 'oph', numPerm: 16, seed: 1 },
  },
  {
    name: 'a text shorter than k: one fingerprint, every bin filled by the fill rounds',
    text: 'Hi',
    shingle: { kind: 'char', k: 5, seed: 0 },
    minhash: { method: 'oph', numPerm: 16, seed: 1 },
  },
  {
    name: 'word 3-shingles',
    text: 'The cat sat on the mat, and the cat sat on the mat again.',
    shingle: { kind: 'word', k: 3, seed: 0 },
    minhash: { method: 'oph', numPerm: 16, seed: 1 },
  },
  {
    name: 'lowercase-collapse preset (alias seed000): tabs kept, runs of spaces or newlines to one space',
    text: 'Two  SPACES\n\nand\tTab ',
    shingle: { kind: 'char', k: 4, seed: 0, normalize: { preset: 'lowercase-collapse' } },
    minhash: { method: 'oph', numPerm: 16, seed: 1 },
  },
  {
    name: 'multiset shingles: the n-th repeat is an element of its own',
    text: 'abab abab abab',
    shingle: { kind: 'char', k: 2, seed: 0, multiset: true },
    minhash: { method: 'classic', numPerm: 8, seed: 3 },
  },
];

const cases = CASES.map((c) => {
  const shingler = createShingler(c.shingle);
  const set = shingler.set(c.text);
  const sig = createMinHasher(c.minhash).sign(set);
  return { ...c, normalized: shingler.normalize(c.text), set: Array.from(set), signature: Array.from(sig) };
});
// Number lists on one line each: a reviewer reads a vector as a row.
const out = JSON.stringify({ version: 1, spec: 'docs/formats.md, "Signatures, exactly"', cases }, null, 1).replace(
  /\[\s+([\d,\s]+?)\s+\]/g,
  (_, g) => `[${g.split(/,\s*/).join(', ')}]`,
) + '\n';
if (process.argv.includes('--write')) fs.writeFileSync(path.join(root, 'test/fixtures/signature-kat.json'), out);
else process.stdout.write(out);
