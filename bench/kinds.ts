/**
 * Benchmarks of the duplicate kinds (issue #15), printed as Markdown tables for bench/RESULTS.md:
 *
 * - `join`: the exact prefix-filtering join against MinHash-LSH on the Kijiji ads, Jaccard
 *   t = 0.5…0.9 and containment: candidates, pairs, LSH recall against the join (which is exact),
 *   and CPU time of candidates + verification (sets built beforehand, same for both).
 * - `short`: issue #14 target 5: `dedup` (its default method) against the exact join on short
 *   generated documents at t = 0.5 and 0.8.
 * - `sketch`: seed 002's sketch against LSH at t = 0.8 with 4…64 buckets: candidates, recall, time.
 * - `exact`: `--exact`-style hashing against the near-duplicate pipeline on the same texts.
 * - `collisions`: distinct shingles against distinct 32-bit and 64-bit fingerprints on a large
 *   generated corpus (word 3-shingles) and on Kijiji (char 5-shingles); a third independent 32-bit
 *   hash stands in for the shingle itself (96 bits: false merges ≈ D²/2⁹⁷).
 *
 * Usage: node dist/bench/kinds.js [join|short|sketch|exact|collisions ...] [--docs 100000] [--short-docs 60000]
 * Times are CPU milliseconds of this process (process.cpuUsage), so that a machine shared with
 * other work still gives per-core figures; the load average is printed with them.
 * @module
 */
import { loadavg } from 'node:os';
import { kijijiDocs } from '../test/helpers.js';
import { createTextSigner } from '../src/sketch/textSigner.js';
import { prefixJoin } from '../src/similarity/prefixJoin.js';
import { dedup } from '../src/dedup/dedup.js';
import { sketchCandidates } from '../src/lsh/sketchCandidates.js';
import { jaccardAtLeast } from '../src/similarity/jaccard.js';
import { exactDuplicates } from '../src/dedup/exactDups.js';
import { createShingler, type ShingleOptions } from '../src/text/shingler.js';
import { CorpusGenerator, shortCorpus } from './gen.js';
import { autoCandidates } from '../src/dedup/kinds.js';

const argv = process.argv.slice(2);
const which = argv.filter((a) => !a.startsWith('--') && !/^\d+$/.test(a));
const opt = (name: string, def: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : def;
};
const run = (name: string): boolean => which.length === 0 || which.includes(name);

/** CPU milliseconds of `fn` (user + system), with its value. */
function cpu<T>(fn: () => T): { value: T; ms: number } {
  const a = process.cpuUsage();
  const value = fn();
  const d = process.cpuUsage(a);
  return { value, ms: (d.user + d.system) / 1000 };
}

/** The median CPU time of `reps` runs. */
function median<T>(reps: number, fn: () => T): { value: T; ms: number } {
  const runs = Array.from({ length: reps }, () => cpu(fn));
  runs.sort((x, y) => x.ms - y.ms);
  return runs[Math.floor(reps / 2)]!;
}

const load = (): string => loadavg().map((x) => x.toFixed(1)).join(' ');
const docs = kijijiDocs();
const signer = createTextSigner();
const sets = docs.map((d) => signer.set(d));
const pairKey = (p: { a: number; b: number }): string => `${p.a} ${p.b}`;

if (run('join')) {
  console.log(`\n### Exact join against LSH (Kijiji, ${docs.length} ads, 128 OPH hashes, end to end from the texts; median CPU ms of 3; load ${load()})\n`);
  console.log(
    '| texts | shingles | measure | t | LSH b×r | LSH candidates | LSH pairs | LSH recall | LSH CPU ms | join candidates | join pairs | join CPU ms | faster | auto picks |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const titles = docs.map((d) => d.slice(0, 60));
  const variants: [string, string[], ShingleOptions][] = [
    ['ads (~530 chars)', docs, { kind: 'char', k: 5 }],
    ['ads (~530 chars)', docs, { kind: 'char', k: 10, normalize: { preset: 'seed000' } }],
    ['ads (~530 chars)', docs, { kind: 'word', k: 3 }],
    ['first 60 chars', titles, { kind: 'char', k: 5 }],
  ];
  for (const [name, texts, shingle] of variants) {
    for (const t of [0.5, 0.8, 0.9]) {
      const lsh = median(3, () => dedup(texts, { threshold: t, shingle, candidates: 'lsh' }));
      const join = median(3, () => dedup(texts, { threshold: t, shingle, candidates: 'exact' }));
      const auto = dedup(texts, { threshold: t, shingle, candidates: 'auto' }).stats.candidateMethod;
      const truth = new Set(join.value.pairs.map(pairKey));
      const found = lsh.value.pairs.filter((p) => truth.has(pairKey(p))).length;
      const b = lsh.value.bands;
      console.log(
        `| ${name} | ${shingle.kind} k=${shingle.k}${
          shingle.normalize ? ' seed000' : ''
        } | jaccard | ${t} | ${b.bands}×${b.rows} | ${lsh.value.stats.candidates} | ${lsh.value.pairs.length} | ${
          (found / Math.max(1, truth.size)).toFixed(4)
        } | ${lsh.ms.toFixed(0)} | ${join.value.stats.candidates} | ${join.value.pairs.length} | ${join.ms.toFixed(0)} | ${
          join.ms < lsh.ms ? 'join' : 'LSH'
        } | ${auto} |`,
      );
    }
  }
  for (const t of [0.5, 0.8, 0.9]) {
    const join = median(3, () => dedup(docs, { threshold: t, measure: 'containment', candidates: 'exact' }));
    console.log(
      `| ads (~530 chars) | char k=5 | containment | ${t} | – | – | – | – | – | ${join.value.stats.candidates} | ${join.value.pairs.length} | ${
        join.ms.toFixed(0)
      } | (join only) | exact |`,
    );
  }
}

if (run('short')) {
  // Issue #14 target 5: short documents at a low threshold, where LSH needs many short bands and
  // its candidates explode, against the exact join on the same single core.
  const n = Number(opt('short-docs', '60000'));
  const texts = shortCorpus(n);
  const avg = texts.reduce((a, t) => a + t.length, 0) / n;
  console.log(`\n### Short documents (${n} generated, ${avg.toFixed(0)} chars on average, 30% edited copies; median CPU ms of 3; load ${load()})\n`);
  console.log(
    '| shingles | t | dedup default (method) | candidates | pairs | CPU ms | exact join candidates | pairs | CPU ms | default / exact | auto picks |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  const kinds: ShingleOptions[] = [{ kind: 'char', k: 5 }, { kind: 'word', k: 3 }];
  for (const shingle of kinds)
    for (const t of [0.5, 0.8]) {
      const def = median(3, () => dedup(texts, { threshold: t, shingle, pairs: false }));
      const exact = median(3, () => dedup(texts, { threshold: t, shingle, candidates: 'exact', pairs: false }));
      const lsh = dedup(texts, { threshold: t, shingle, candidates: 'lsh', pairs: false });
      const auto = autoCandidates('jaccard', texts.reduce((a, x) => a + x.length, 0), n, shingle.kind);
      const d = def.value.stats;
      console.log(
        `| ${shingle.kind} k=${shingle.k} | ${t} | ${d.candidateMethod ?? 'lsh'} | ${d.candidates} | ${d.pairs} | ${
          def.ms.toFixed(0)
        } | ${exact.value.stats.candidates} | ${exact.value.stats.pairs} | ${exact.ms.toFixed(0)} | ${
          (def.ms / exact.ms).toFixed(2)
        } | ${auto} (LSH alone: ${lsh.stats.candidates} candidates, ${lsh.stats.pairs} pairs) |`,
      );
    }
}

if (run('sketch')) {
  const t = 0.8;
  const truth = new Set(prefixJoin(sets, t).pairs.map(pairKey));
  console.log(`\n### Seed 002's sketch against LSH (Kijiji, t = ${t}, ${truth.size} true pairs; sets built beforehand; load ${load()})\n`);
  console.log('| method | candidates | pairs found | recall | CPU ms (candidates + verify) |');
  console.log('|---|---|---|---|---|');
  const lsh = median(3, () => dedup(docs, { threshold: t, candidates: 'lsh' }));
  const lf = lsh.value.pairs.filter((p) => truth.has(pairKey(p))).length;
  console.log(
    `| LSH ${lsh.value.bands.bands}×${lsh.value.bands.rows} (from the texts, signing included) | ${lsh.value.stats.candidates} | ${lf} | ${
      (lf / truth.size).toFixed(4)
    } | ${lsh.ms.toFixed(0)} |`,
  );
  for (const buckets of [1, 2, 4, 8, 16, 25, 64]) {
    const r = median(3, () => {
      const { pairs } = sketchCandidates(sets, buckets);
      let found = 0;
      for (let p = 0; p < pairs.size; p++) if (jaccardAtLeast(sets[pairs.a[p]!]!, sets[pairs.b[p]!]!, t) >= 0) found++;
      return { candidates: pairs.size, found };
    });
    console.log(
      `| sketch, ${buckets} bucket${buckets > 1 ? 's' : ''} | ${r.value.candidates} | ${r.value.found} | ${(r.value.found / truth.size).toFixed(4)} | ${
        r.ms.toFixed(0)
      } |`,
    );
  }
}

if (run('exact')) {
  const n = Number(opt('docs', '100000'));
  const gen = new CorpusGenerator(7);
  const texts: string[] = [];
  for (let i = 0; i < n; i++) texts.push(i % 10 === 9 ? texts[i - 5]! : gen.render(gen.original(i), i));
  const mb = texts.reduce((a, t) => a + t.length, 0) / 1e6;
  console.log(`\n### Exact duplicates against near duplicates (${n} generated docs, ${mb.toFixed(0)} M chars, every 10th a copy; load ${load()})\n`);
  console.log('| mode | clusters | CPU ms | M chars/s (CPU) |');
  console.log('|---|---|---|---|');
  let exact = { value: 0, ms: 0 };
  const a = process.cpuUsage();
  const r = await exactDuplicates([texts], { pairs: false });
  const d = process.cpuUsage(a);
  exact = { value: r.stats.clusters, ms: (d.user + d.system) / 1000 };
  console.log(`| --exact (normalize + 64-bit hash) | ${exact.value} | ${exact.ms.toFixed(0)} | ${(mb / (exact.ms / 1000)).toFixed(1)} |`);
  const near = cpu(() => dedup(texts, { threshold: 0.8, pairs: false }));
  console.log(`| near duplicates (LSH, t = 0.8) | ${near.value.stats.clusters} | ${near.ms.toFixed(0)} | ${(mb / (near.ms / 1000)).toFixed(1)} |`);
}

if (run('collisions')) {
  const n = Number(opt('docs', '100000'));
  console.log(`\n### Fingerprint collisions (load ${load()})\n`);
  console.log(
    '| corpus | shingles | occurrences | distinct shingles D | 32-bit: distinct fingerprints | 32-bit shingles merged | expected D²/2³³ | 64-bit: shingles merged | expected D²/2⁶⁵ |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  const gen = new CorpusGenerator(11);
  const generated = function* (): Generator<string> {
    for (let i = 0; i < n; i++) yield gen.render(gen.original(i), i);
  };
  collisions(`Kijiji (${docs.length} ads)`, docs, { kind: 'char', k: 5 });
  collisions(`generated, ${n} docs`, generated(), { kind: 'word', k: 3 });
  collisions(`generated, ${Math.round(n / 4)} docs`, [...generated()].slice(0, Math.round(n / 4)), { kind: 'char', k: 9 });
}

/**
 * Counts distinct shingles (by a 96-bit key: three independent 32-bit hashes at the same position)
 * and how many distinct shingles share a 32-bit and a 64-bit fingerprint with another one.
 */
function collisions(name: string, texts: Iterable<string>, shingle: ShingleOptions): void {
  const s = [0, 0x9e3779b9, 0x85ebca6b].map((seed) => createShingler({ ...shingle, seed }));
  // Open addressing on (h0, h1, h2) in typed arrays, grown by doubling.
  let cap = 1 << 20;
  let k0 = new Uint32Array(cap);
  let k1 = new Uint32Array(cap);
  let k2 = new Uint32Array(cap);
  let used = new Uint8Array(cap);
  let distinct = 0;
  let occurrences = 0;
  const insert = (a: number, b: number, c: number): void => {
    let i = (Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b) >>> 0) & (cap - 1);
    while (used[i]) {
      if (k0[i] === a && k1[i] === b && k2[i] === c) return;
      i = (i + 1) & (cap - 1);
    }
    used[i] = 1;
    k0[i] = a;
    k1[i] = b;
    k2[i] = c;
    distinct++;
  };
  for (const text of texts) {
    const t = s[0]!.normalize(text);
    const f = s.map((x) => x.fingerprints(t));
    occurrences += f[0]!.length;
    for (let i = 0; i < f[0]!.length; i++) {
      if ((distinct + 1) * 2 > cap) {
        const [o0, o1, o2, ou] = [k0, k1, k2, used];
        cap *= 2;
        k0 = new Uint32Array(cap);
        k1 = new Uint32Array(cap);
        k2 = new Uint32Array(cap);
        used = new Uint8Array(cap);
        distinct = 0;
        for (let j = 0; j < ou.length; j++) if (ou[j]) insert(o0[j]!, o1[j]!, o2[j]!);
      }
      insert(f[0]![i]!, f[1]![i]!, f[2]![i]!);
    }
  }
  // Distinct 32-bit values (h0) and 64-bit values (h0, h1) among the distinct shingles.
  const h0 = new Uint32Array(distinct);
  const h01 = new Float64Array(distinct);
  const lo = new Uint32Array(distinct);
  for (let j = 0, m = 0; j < cap; j++) {
    if (!used[j]) continue;
    h0[m] = k0[j]!;
    h01[m] = k0[j]!;
    lo[m++] = k1[j]!;
  }
  h0.sort();
  let d32 = distinct ? 1 : 0;
  for (let j = 1; j < distinct; j++) if (h0[j] !== h0[j - 1]) d32++;
  // 64-bit: sort indices by (h0, h1) and count runs.
  const idx = new Int32Array(distinct);
  for (let j = 0; j < distinct; j++) idx[j] = j;
  idx.sort((x, y) => h01[x]! - h01[y]! || lo[x]! - lo[y]!);
  let d64 = distinct ? 1 : 0;
  for (let j = 1; j < distinct; j++) if (h01[idx[j]!] !== h01[idx[j - 1]!] || lo[idx[j]!] !== lo[idx[j - 1]!]) d64++;
  const D = distinct;
  console.log(
    `| ${name} | ${shingle.kind} k=${shingle.k} | ${occurrences} | ${D} | ${d32} | ${D - d32} (${((100 * (D - d32)) / D).toFixed(4)}%) | ${
      ((D * D) / 2 ** 33).toFixed(1)
    } | ${D - d64} | ${((D * D) / 2 ** 65).toExponential(1)} |`,
  );
}
