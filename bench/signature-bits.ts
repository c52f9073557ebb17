/**
 * What 16-bit signature slots (`signatureBits: 16`, docs/stores.md) cost the MinHash estimate:
 * pairs of 200-word texts with a random share of words replaced, word 2-shingles, 128 OPH slots,
 * the estimate's mean error and RMSE against exact Jaccard with 32-bit and with 16-bit slots, by
 * Jaccard decile, and the slots that agree only in their low 16 bits. Deterministic (fixed seed).
 *
 *   node dist/bench/signature-bits.js [pairs=20000]
 */
import { createShingler, createTextSigner, jaccard } from '../src/index.js';
import { splitmix32 } from '../src/hash/mix.js';

const N = Number(process.argv[2] ?? 20000);
const r = splitmix32(99);
const word = (): string => `w${r() % 2000}`;
const signer = createTextSigner({ shingle: { kind: 'word', k: 2 }, minhash: { numPerm: 128 } });
const shingler = createShingler({ kind: 'word', k: 2 });
interface Cell {
  n: number;
  err32: number;
  err16: number;
  se32: number;
  se16: number;
  extra: number;
  expected: number;
}
const cells = new Map<number, Cell>();
for (let p = 0; p < N; p++) {
  const a = Array.from({ length: 200 }, word);
  const keep = (r() % 1000) / 1000;
  const b = a.map((w) => (r() % 1000 < keep * 1000 ? w : word()));
  const [ta, tb] = [a.join(' '), b.join(' ')];
  const j = jaccard(shingler.set(ta), shingler.set(tb));
  const x = signer.sign(ta)!;
  const y = signer.sign(tb)!;
  let e32 = 0;
  let e16 = 0;
  for (let i = 0; i < 128; i++) {
    if (x[i] === y[i]) e32++;
    if ((x[i]! & 0xffff) === (y[i]! & 0xffff)) e16++;
  }
  const key = Math.min(9, Math.floor(j * 10));
  const c = cells.get(key) ?? { n: 0, err32: 0, err16: 0, se32: 0, se16: 0, extra: 0, expected: 0 };
  c.n++;
  c.err32 += e32 / 128 - j;
  c.err16 += e16 / 128 - j;
  c.se32 += (e32 / 128 - j) ** 2;
  c.se16 += (e16 / 128 - j) ** 2;
  c.extra += e16 - e32;
  c.expected += ((128 - e32) * 1) / 65536;
  cells.set(key, c);
}
console.log('| Jaccard | pairs | mean error, 32-bit | mean error, 16-bit | RMSE, 32-bit | RMSE, 16-bit | slots agreeing in 16 bits only (expected) |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const [k, c] of [...cells].sort((p, q) => p[0] - q[0])) {
  const f = (v: number): string => v.toFixed(5);
  console.log(
    `| ${(k / 10).toFixed(1)}–${((k + 1) / 10).toFixed(1)} | ${c.n} | ${f(c.err32 / c.n)} | ${f(c.err16 / c.n)} | ${f(Math.sqrt(c.se32 / c.n))} | ${
      f(Math.sqrt(c.se16 / c.n))
    } | ${c.extra} (${c.expected.toFixed(1)}) |`,
  );
}
