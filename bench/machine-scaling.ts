/**
 * How far this machine itself lets 1 → 2 threads scale, for the kinds of loop the pipeline runs:
 * the ceiling to read #14's "two workers ≥ 1.8× one" against. Each kernel is run by one worker
 * thread, then by two at once doing the same amount of work each; the speed-up is 2 × t(1) / t(2)
 * (2.00 = perfect). Kernels:
 * - `alu`: integer mixing in registers (what signing's min-updates are closest to);
 * - `l2`: random read-modify-write in a 1 MiB table per thread (a set's probe table);
 * - `l3`: the same in 12 MiB per thread (two threads share the 32 MiB L3 here);
 * - `dram`: the same in 64 MiB per thread;
 * - `scatter`: 1M keys scattered into 1,024 partitions of three arrays, as LSH bucketing does per band.
 * No project code is involved: this measures the machine, not neardup.
 *
 * Usage: node dist/bench/machine-scaling.js [--rounds 3]
 * @module
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { loadavg } from 'node:os';

type Kernel = 'alu' | 'l2' | 'l3' | 'dram' | 'scatter';
const KERNELS: Kernel[] = ['alu', 'l2', 'l3', 'dram', 'scatter'];

function alu(steps: number): number {
  let x = 1;
  for (let i = 0; i < steps; i++) x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + i) | 0;
  return x;
}

function randomRmw(a: Int32Array, steps: number): number {
  const mask = a.length - 1;
  let s = 0;
  let j = 1;
  for (let i = 0; i < steps; i++) {
    j = (Math.imul(j, 1103515245) + 12345) >>> 0;
    s += a[j & mask]!++;
  }
  return s;
}

function scatter(rounds: number): number {
  const n = 1 << 20;
  const hi = new Uint32Array(n);
  const lo = new Uint32Array(n);
  let r = 7;
  for (let i = 0; i < n; i++) {
    hi[i] = r = (Math.imul(r, 1103515245) + 12345) >>> 0;
    lo[i] = r = (Math.imul(r, 1103515245) + 12345) >>> 0;
  }
  const docs = new Int32Array(n);
  const kh = new Uint32Array(n);
  const kl = new Uint32Array(n);
  const start = new Int32Array(1025);
  let sum = 0;
  for (let round = 0; round < rounds; round++) {
    start.fill(0);
    for (let d = 0; d < n; d++) start[(lo[d]! >>> 22) + 1]!++;
    for (let p = 0; p < 1024; p++) start[p + 1]! += start[p]!;
    const fill = start.slice(0, 1024);
    for (let d = 0; d < n; d++) {
      const k = lo[d]!;
      const at = fill[k >>> 22]!++;
      docs[at] = d;
      kh[at] = hi[d]!;
      kl[at] = k;
    }
    sum += docs[round]! + kh[round]!;
  }
  return sum;
}

/** The kernel's run, its memory made and its code warmed up first (not timed). */
function prepare(kernel: Kernel): () => number {
  const table = (bytes: number): Int32Array => new Int32Array(bytes >>> 2).fill(1);
  let go: (scale: number) => number;
  if (kernel === 'alu') go = (x) => alu(9e8 * x);
  else if (kernel === 'scatter') go = (x) => scatter(Math.ceil(50 * x));
  else {
    const [bytes, steps] = kernel === 'l2' ? [1 << 20, 3e8] : kernel === 'l3' ? [12 << 20, 1.5e8] : [64 << 20, 6e7];
    const a = table(bytes);
    go = (x) => randomRmw(a, steps * x);
  }
  go(0.02);
  return () => go(1);
}

if (!isMainThread) {
  const { kernel, gate } = workerData as { kernel: Kernel; gate: SharedArrayBuffer };
  const work = prepare(kernel);
  // Every thread starts the timed run at the same moment, so two runs overlap wholly.
  const g = new Int32Array(gate);
  Atomics.sub(g, 0, 1);
  while (Atomics.load(g, 0) > 0);
  const t = performance.now();
  work();
  parentPort!.postMessage(performance.now() - t);
} else {
  const argv = process.argv.slice(2);
  const i = argv.indexOf('--rounds');
  const rounds = i >= 0 ? Number(argv[i + 1]) : 3;
  /** The slowest thread's time (ms) with `threads` threads each running `kernel` once. */
  const timed = async (kernel: Kernel, threads: number): Promise<number> => {
    const gate = new SharedArrayBuffer(4);
    new Int32Array(gate)[0] = threads;
    const times = await Promise.all(
      Array.from(
        { length: threads },
        () =>
          new Promise<number>((resolve, reject) => {
            const w = new Worker(new URL(import.meta.url), { workerData: { kernel, gate } });
            w.once('message', resolve);
            w.once('error', reject);
          }),
      ),
    );
    return Math.max(...times);
  };
  console.log(`load average ${loadavg()[0]!.toFixed(2)}; speed-up = 2 × t(1 thread) / t(2 threads)`);
  const ups = new Map<Kernel, number[]>(KERNELS.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    const row: string[] = [];
    for (const k of KERNELS) {
      const one = await timed(k, 1);
      const two = await timed(k, 2);
      ups.get(k)!.push((2 * one) / two);
      row.push(`${k} ${((2 * one) / two).toFixed(2)}× (${one.toFixed(0)} / ${two.toFixed(0)} ms)`);
    }
    console.log(`round ${r + 1}: ${row.join(', ')}`);
  }
  const median = (a: number[]): number => {
    const s = [...a].sort((x, y) => x - y);
    return (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2;
  };
  console.log(`median over ${rounds} rounds: ${KERNELS.map((k) => `${k} ${median(ups.get(k)!).toFixed(2)}×`).join(', ')}`);
}
