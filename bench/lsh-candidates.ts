/**
 * LSH candidate generation from band keys, timed alone: the bucketing pass (`collectSharedBuckets`,
 * which also gives the pair bound) and the pairs from its buckets (`candidatesFromBuckets`), on
 * band-major keys as the streaming pipeline keeps them (BandKeyColumns) and on document-major ones;
 * then the pairs grouped by second member as streaming verification takes them, two ways: a pair set
 * (`candidatesFromBuckets`) then `groupBySecond`, against `groupsFromBuckets` (the pipeline's route
 * since round 10), here and with the bands bucketed on 2 workers (`SignPool.bucketRanges`, joined
 * by `joinRanges`), over
 * synthetic keys shaped like a duplicate-heavy corpus (30 % of documents copy an earlier one,
 * sharing each band key with probability 0.7), so no corpus needs signing.
 * Prints the time, the bucket counters and a checksum of the pair set (order-independent).
 *
 * Usage: node dist/bench/lsh-candidates.js [--docs 1000000] [--bands 16] [--rounds 3]
 * @module
 */
import { loadavg } from 'node:os';
import { candidatesFromBuckets, collectSharedBuckets, docMajorKeys, type BandKeyTable } from '../src/lsh/candidates.js';
import { BandKeyColumns } from '../src/lsh/bandKeyColumns.js';
import { SignPool } from '../src/parallel/signPool.js';
import { groupBySecond, groupsFromBuckets, type SecondGroups } from '../src/lsh/secondGroups.js';
import { joinRanges } from '../src/lsh/joinRanges.js';

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
// Appended as a worker's reply holds them: band by band ([b·n + d]).
const byBand = (keys: Uint32Array): Uint32Array => {
  const out = new Uint32Array(n * bands);
  for (let d = 0; d < n; d++) for (let b = 0; b < bands; b++) out[b * n + d] = keys[d * bands + b]!;
  return out;
};
const shared = new BandKeyColumns(bands, true);
shared.append(present, byBand(hi), byBand(lo), n);
const layouts: [string, BandKeyTable][] = [
  ['band-major', shared.table()],
  ['doc-major', docMajorKeys({ hi, lo, present, n, bands })],
];
let sum = 0;
const checksum = (pairs: { a: Int32Array; b: Int32Array; size: number }): number => {
  let c = 0;
  for (let i = 0; i < pairs.size; i++) c = (c + Math.imul(pairs.a[i]! + 1, 0x9e3779b1) + pairs.b[i]!) >>> 0;
  return c;
};
const sameGroups = (x: SecondGroups, y: SecondGroups): boolean =>
  x.count === y.count && x.start.every((v, i) => v === y.start[i]) && x.first.subarray(0, x.count).every((v, i) => v === y.first[i]);
let want: SecondGroups | undefined;
for (let r = 0; r < rounds; r++) {
  for (const [name, keys] of layouts) {
    const t0 = performance.now();
    const buckets = collectSharedBuckets(keys);
    const t1 = performance.now();
    const { pairs, stats } = candidatesFromBuckets(buckets, n);
    const t2 = performance.now();
    const grouped = groupBySecond(pairs.a, pairs.b, pairs.size, n);
    const t3 = performance.now();
    const joined = joinRanges([buckets]);
    const listed = groupsFromBuckets(joined, n);
    const t4 = performance.now();
    sum = checksum(pairs);
    want ??= grouped;
    const same = sameGroups(grouped, listed) && sameGroups(listed, want) ? 'same groups' : 'GROUPS DIFFER';
    console.log(
      `round ${r + 1}, ${name}: bucketing ${(t1 - t0).toFixed(0)} ms; pair set ${(t2 - t1).toFixed(0)} ms + grouping ${(t3 - t2).toFixed(0)} ms, `
        + `or groupsFromBuckets ${(t4 - t3).toFixed(0)} ms (${same}); ${JSON.stringify(stats)}, bound ${buckets.bound}, pair checksum ${sum}`,
    );
  }
}
const pool = new SignPool({ workers: 2 });
try {
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const parts = await Promise.all(pool.bucketRanges(shared.table(), 0)!);
    const t1 = performance.now();
    const joined = joinRanges(parts);
    const t2 = performance.now();
    const { pairs, stats } = candidatesFromBuckets(joined, n);
    const grouped = groupBySecond(pairs.a, pairs.b, pairs.size, n);
    const t3 = performance.now();
    const listed = groupsFromBuckets(joined, n);
    const t4 = performance.now();
    const same = checksum(pairs) === sum && sameGroups(grouped, want!) && sameGroups(listed, want!) ? 'same pairs and groups' : 'PAIRS DIFFER';
    console.log(
      `round ${r + 1}, 2 workers: band ranges ${(t1 - t0).toFixed(0)} ms + joinRanges ${(t2 - t1).toFixed(0)} ms, then pair set + groupBySecond `
        + `${(t3 - t2).toFixed(0)} ms or groupsFromBuckets ${(t4 - t3).toFixed(0)} ms; ${JSON.stringify(stats)}, ${same}`,
    );
  }
} finally {
  await pool.close();
}
