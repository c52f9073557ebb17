/**
 * LSH candidate generation from band keys, timed alone: the bucketing pass (`collectSharedBuckets`,
 * which also gives the pair bound) and the pairs from its buckets (`candidatesFromBuckets`), over
 * synthetic keys shaped like a duplicate-heavy corpus (30 % of documents copy an earlier one,
 * sharing each band key with probability 0.7), so no corpus needs signing.
 * Prints the time, the bucket counters and a checksum of the pair set (order-independent).
 *
 * Usage: node dist/bench/lsh-candidates.js [--docs 1000000] [--bands 16] [--rounds 3]
 * @module
 */
import { loadavg } from 'node:os';
import { candidatesFromBuckets, collectSharedBuckets, docMajorKeys } from '../src/lsh/candidates.js';

const argv = process.argv.slice(2);
const opt = (name: string, def: string): number => {
  const i = argv.indexOf(`--${name}`);
  return Number(i >= 0 ? argv[i + 1]! : def);
};
const n = opt('docs', '1000000');
const bands = opt('bands', '16');
const rounds = opt('rounds', '3');
const hi = new Uint32Array(n * bands);
const lo = new Uint32Array(n * bands);
const present = new Uint8Array(n).fill(1);
let s = 12345;
const rnd = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0);
for (let d = 0; d < n; d++) {
  const copyOf = d > 10 && rnd() % 10 < 3 ? d - 1 - (rnd() % 50) : -1;
  for (let b = 0; b < bands; b++) {
    const i = d * bands + b;
    if (copyOf >= 0 && rnd() % 10 < 7) {
      hi[i] = hi[copyOf * bands + b]!;
      lo[i] = lo[copyOf * bands + b]!;
    } else {
      hi[i] = rnd();
      lo[i] = rnd();
    }
  }
}
console.log(`${n} docs × ${bands} bands; load average ${loadavg()[0]!.toFixed(2)}`);
for (let r = 0; r < rounds; r++) {
  const t0 = performance.now();
  const buckets = collectSharedBuckets(docMajorKeys(hi, lo, present, n, bands));
  const t1 = performance.now();
  const { pairs, stats } = candidatesFromBuckets(buckets, n);
  const t2 = performance.now();
  let sum = 0;
  for (let i = 0; i < pairs.size; i++) sum = (sum + Math.imul(pairs.a[i]! + 1, 0x9e3779b1) + pairs.b[i]!) >>> 0;
  console.log(`round ${r + 1}: bucketing ${(t1 - t0).toFixed(0)} ms, pairs ${(t2 - t1).toFixed(0)} ms; ${JSON.stringify(stats)}, bound ${buckets.bound}, pair checksum ${sum}`);
}
