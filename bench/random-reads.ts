/**
 * Random positioned reads of a file, as the file store reads candidates' records (1.5 KB at random
 * offsets), one at a time and with 8 and 64 in flight: what the disk gives once a store's records
 * file outgrows the page cache (bench/RESULTS.md, "The file store past 2^28 key table entries").
 * Usage: node dist/bench/random-reads.js FILE [reads=20000] [bytes=1500] [seed=from the clock]
 * (a run again with the same seed reads what the page cache now holds).
 * @module
 */
import { open } from 'node:fs/promises';

const [file, readsArg = '20000', bytesArg = '1500', seedArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node dist/bench/random-reads.js FILE [reads] [bytes] [seed]');
  process.exit(2);
}
const reads = Number(readsArg);
const bytes = Number(bytesArg);
const f = await open(file, 'r');
const size = (await f.stat()).size;
// Offsets from a xorshift sequence; a new seed each run, so that no run reads what an earlier one left in the page cache.
let x = Number(seedArg ?? Date.now() % 2 ** 31) | 1;
console.log(`seed ${x}`);
const nextOffset = () => {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return ((x >>> 0) / 2 ** 32) * (size - bytes);
};
for (const inFlight of [1, 8, 64]) {
  const n = inFlight === 1 ? Math.ceil(reads / 10) : reads;
  let started = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      const b = Buffer.alloc(bytes);
      while (started++ < n) await f.read(b, 0, bytes, Math.floor(nextOffset()));
    }),
  );
  const s = (performance.now() - t) / 1000;
  console.log(`${inFlight} in flight: ${Math.round(n / s)} reads/s, ${((s * 1e6) / n).toFixed(1)} µs per read`);
}
await f.close();
