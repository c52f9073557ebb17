/**
 * Why src/common/roomArrays.ts makes plain typed arrays with room rather than arrays on resizable
 * `ArrayBuffer`s: the same loops over a plain array, a plain view over a larger buffer (what
 * `mapped` makes), and a view over a resizable buffer, each timed after a warm-up round.
 * Usage: node dist/bench/typed-arrays.js [rounds=3]
 */
const N = 1 << 24;
const ROUNDS = Number(process.argv[2] ?? 3);

type Make = () => Int32Array;
const kinds: [string, Make][] = [
  ['plain', () => new Int32Array(N)],
  ['plain view with room', () => new Int32Array(new ArrayBuffer(4 * N * 4), 0, N)],
  [
    'resizable buffer',
    () => new Int32Array(new (ArrayBuffer as unknown as new(n: number, o: { maxByteLength: number }) => ArrayBuffer)(4 * N, { maxByteLength: 16 * N }), 0, N),
  ],
];

/** Random read-modify-writes, as a hash table's inserts do. */
function random(a: Int32Array, reps: number): number {
  let s = 0;
  let x = 12345;
  for (let r = 0; r < reps; r++) {
    x = (Math.imul(x, 1103515245) + 12345) | 0;
    const i = (x >>> 8) & (N - 1);
    a[i]! += 1;
    s += a[(i + 1) & (N - 1)]!;
  }
  return s;
}

/** In-order reads and writes, as a pass over records does. */
function sequential(a: Int32Array): number {
  let s = 0;
  for (let k = 0; k < 4; k++) {
    for (let i = 0; i < a.length; i++) {
      a[i] = a[i]! + i;
      s += a[i]!;
    }
  }
  return s;
}

console.log(`Node ${process.version}, ${N} int32, best of ${ROUNDS} rounds after a warm-up`);
console.log('| array | random (2e7 updates) ms | sequential (4 passes) ms |');
console.log('|---|---:|---:|');
let sink = 0;
for (const [name, make] of kinds) {
  const a = make();
  a.fill(1);
  sink += random(a, 2e6) + sequential(a);
  let r = Infinity;
  let q = Infinity;
  for (let i = 0; i < ROUNDS; i++) {
    let t = performance.now();
    sink += random(a, 2e7);
    r = Math.min(r, performance.now() - t);
    t = performance.now();
    sink += sequential(a);
    q = Math.min(q, performance.now() - t);
  }
  console.log(`| ${name} | ${r.toFixed(0)} | ${q.toFixed(0)} |`);
}
if (sink === 0.5) console.log(sink);
