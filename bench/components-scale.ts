/**
 * The components stage's clustering at scale (#36 item 4), ids and pairs only, no texts: N synthetic
 * document numbers, a share of them in clusters of 2–8 members at random places (each member joined
 * to an earlier one, so chains too), clustered by `clustersOfPairs` (union-find over the clustered
 * documents only). Prints the time, the process's peak RSS and the bytes per clustered document
 * beyond the pairs themselves; with `--dense`, also the former method (union-find and cluster arrays
 * over all N documents) for comparison.
 *
 * Usage: node --max-old-space-size=16000 dist/bench/components-scale.js [--docs 100000000] [--clustered 0.3] [--dense]
 * @module
 */
import { clustersOfPairs, UnionFind, componentsOf } from '../src/cluster/clusters.js';
import { splitmix32 } from '../src/hash/mix.js';
import { opt } from './util.js';

const N = Number(opt('docs', '100000000'));
const share = Number(opt('clustered', '0.3'));
const rnd = splitmix32(36);
const target = Math.round(N * share);
// Pairs: clusters of 2–8 members at random document numbers, each member after the first joined to a random earlier one.
let cap = Math.ceil(target * 0.9) + 16;
let A = new Float64Array(cap);
let B = new Float64Array(cap);
let n = 0;
let members = 0;
const t0 = performance.now();
while (members < target) {
  const size = 2 + (rnd() % 7);
  const m: number[] = [];
  for (let j = 0; j < size; j++) {
    const x = Math.floor((rnd() / 4294967296) * N);
    if (j > 0) {
      if (n === cap) {
        cap *= 2;
        const a2 = new Float64Array(cap);
        a2.set(A);
        A = a2;
        const b2 = new Float64Array(cap);
        b2.set(B);
        B = b2;
      }
      const y = m[rnd() % m.length]!;
      A[n] = Math.min(x, y);
      B[n] = Math.max(x, y);
      n++;
    }
    m.push(x);
  }
  members += size;
}
const gen = performance.now() - t0;
global.gc?.();
const rss0 = process.memoryUsage().rss;
const t1 = performance.now();
const c = clustersOfPairs(A, B, n);
const t = performance.now() - t1;
const rss1 = process.resourceUsage().maxRSS * 1024;
const P = c.docs.length;
const K = c.start.length - 1;
console.log(
  `# ${N.toExponential(1)} documents, ${n.toLocaleString('en')} pairs (generated in ${(gen / 1000).toFixed(1)} s): ${
    P.toLocaleString('en')
  } clustered documents in ${K.toLocaleString('en')} clusters`,
);
console.log(
  `clustersOfPairs: ${(t / 1000).toFixed(1)} s; peak RSS ${(rss1 / 2 ** 20).toFixed(0)} MB, of which the pairs ${((16 * n) / 2 ** 20).toFixed(0)} MB; `
    + `${((rss1 - rss0) / P).toFixed(1)} B per clustered document beyond what was resident before (the pairs, the heap)`,
);
if (opt('dense', 'no') !== 'no' || process.argv.includes('--dense')) {
  const t2 = performance.now();
  const uf = new UnionFind(N);
  for (let i = 0; i < n; i++) uf.union(A[i]!, B[i]!);
  const d = componentsOf(uf, N);
  console.log(
    `former (dense over all ${N.toExponential(1)} documents): ${((performance.now() - t2) / 1000).toFixed(1)} s, ${
      d.clusters.length.toLocaleString('en')
    } clusters, peak RSS ${((process.resourceUsage().maxRSS * 1024) / 2 ** 20).toFixed(0)} MB`,
  );
  if (d.clusters.length !== K) throw new Error('the two methods disagree');
}
