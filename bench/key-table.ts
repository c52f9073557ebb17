/**
 * The key table of the in-process store (src/store/memory/keyTable.ts) alone: N documents of 32
 * band keys linked, as `MemoryStore.put` links them, then 200,000 queries' keys looked up, as its
 * `lookup` finds them; each with and without {@link KeyTable.touch} first (every home entry of the
 * document's keys read before any is used), the two builds of each round alternated. Every tenth
 * document repeats the keys of one five before it bar four (an edited copy: chains grow, as in
 * bench/file-store.ts's corpus). Prints seconds and ns per key for each, so that a change to the
 * table's probing is measured without a store fill (bench/RESULTS.md, "The key table's homes read before the links").
 * Then the table as a checkpoint packs it (src/store/file/tablePack.ts `writePackedKeys`, written to
 * /dev/null), in ns per entry of the table (bench/RESULTS.md, "A checkpoint's key table packed without a branch").
 * Usage: node dist/bench/key-table.js [N=4000000] [rounds=2]
 * @module
 */
import { open } from 'node:fs/promises';
import { EMPTY, KeyTable } from '../src/store/memory/keyTable.js';
import { firstCoding, writePackedKeys } from '../src/store/file/tablePack.js';

const N = Number(process.argv[2] ?? 4_000_000);
const ROUNDS = Number(process.argv[3] ?? 2);
const K = 32;
const QUERIES = 200_000;
if (!(Number.isInteger(N) && N >= 1000) || !(Number.isInteger(ROUNDS) && ROUNDS >= 1)) {
  console.error('usage: node dist/bench/key-table.js [N>=1000] [rounds>=1]');
  process.exit(2);
}

/** xorshift32: which documents the queries are of. */
function rng(seed: number): () => number {
  let x = seed | 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

/** A 32-bit mix of `a` and `b` (murmur3's finalizer). */
function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h >>> 0;
}

/** Document d's keys into `out`: 53-bit, a mixed 32-bit top as band keys have; a copy shares all but its first 4 with its original. */
function keysOf(d: number, out: Float64Array): void {
  const copyOf = d % 10 === 9 && d >= 5 ? d - 5 : -1;
  for (let j = 0; j < K; j++) {
    const src = copyOf >= 0 && j >= 4 ? copyOf : d;
    out[j] = mix(src, j) * 2097152 + (mix(j, src) & 2097151);
  }
}

/** Links N documents; returns seconds, and the table with its links for the lookups. */
function fill(touch: boolean): { s: number; table: KeyTable; next: Int32Array } {
  const table = new KeyTable();
  const next = new Int32Array(N * K);
  const prev = new Int32Array(N * K);
  const keys = new Float64Array(K);
  const t = performance.now();
  for (let d = 0; d < N; d++) {
    keysOf(d, keys);
    if (touch) table.touch(keys);
    for (let j = 0; j < K; j++) table.link(keys[j]!, d * K + j, next, prev);
  }
  return { s: (performance.now() - t) / 1000, table, next };
}

/** Looks up the keys of QUERIES documents (each an indexed one's), walking each chain's first posting as `lookup` does. */
function queries(table: KeyTable, next: Int32Array, touch: boolean): number {
  const keys = new Float64Array(K);
  const pick = rng(99);
  let sink = 0;
  const t = performance.now();
  for (let q = 0; q < QUERIES; q++) {
    keysOf(pick() % N, keys);
    if (touch) table.touch(keys);
    for (let j = 0; j < K; j++) {
      const e = table.find(keys[j]!);
      if (e < 0) continue;
      const p = table.headAt(e);
      sink += p === EMPTY ? 0 : next[p]!;
    }
  }
  if (sink === 0.5) console.log(sink);
  return (performance.now() - t) / 1000;
}

/** Seconds to pack the table's keys as a checkpoint does, to /dev/null (the write buffer a checkpoint uses: 16 MiB). */
async function pack(table: KeyTable): Promise<number> {
  const { tKey, tHead } = table.arrays();
  let used = 0;
  for (let h = 0; h < tHead.length; h++) used += tHead[h] === EMPTY ? 0 : 1;
  const f = await open('/dev/null', 'w');
  const t = performance.now();
  const coding = firstCoding(tHead.length);
  const ok = await writePackedKeys(f, 0, { tKey, tHead, used, coding, bits: new Uint8Array(Math.ceil(tHead.length / 8)) }, new Uint8Array(16 << 20));
  const s = (performance.now() - t) / 1000;
  await f.close();
  if (!ok) throw new Error('a key sat more than 255 entries past its home: the table would be written f64');
  return s;
}

const rows: string[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  // Alternated, the first build flipped each round, so that neither always runs on a warmer machine.
  const order = round % 2 === 1 ? [false, true] : [true, false];
  for (const touch of order) {
    const f = fill(touch);
    const linkNs = (f.s * 1e9) / (N * K);
    const ql = queries(f.table, f.next, false);
    const qt = queries(f.table, f.next, true);
    const ns = (s: number) => ((s * 1e9) / (QUERIES * K)).toFixed(1);
    const ps = await pack(f.table);
    rows.push(
      `| ${round} | ${touch ? 'touch' : 'plain'} | ${f.s.toFixed(1)} | ${linkNs.toFixed(1)} | ${f.table.size.toLocaleString('en')} | ${ql.toFixed(2)} (${
        ns(ql)
      }) | ${qt.toFixed(2)} (${ns(qt)}) | ${ps.toFixed(2)} (${((ps * 1e9) / f.table.size).toFixed(1)}) |`,
    );
    console.log(rows.at(-1));
  }
}
console.log(`\nkey-table bench: ${N.toLocaleString('en')} documents × ${K} keys linked, ${QUERIES.toLocaleString('en')} queries looked up`);
console.log('| round | links | link s | ns / key | entries | lookups s (ns / key), plain | lookups s (ns / key), touch first | packed s (ns / entry) |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
