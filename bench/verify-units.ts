/**
 * Per-unit costs of exact verification, in one thread, CPU time: building a candidate document's
 * set (sorted for the merge, or distinct for the probe), and scoring a pair by merging sorted sets
 * (`jaccard`) or by probing (`ProbeTable` + `probeJaccardAtLeast`, the table loaded per pair).
 * Also the streaming workers' route: each set written by the distinct kernel straight into its block
 * of a shared set arena (`distinctTo`), and pairs counted against sets where they lie (`countAt`).
 * Pairs: the verified pairs `dedup()` finds among the first `--docs` lines, plus as many random pairs.
 *
 * Usage: node dist/bench/verify-units.js [--file bench/data/d100k.txt] [--docs 20000] [--rounds 2]
 * @module
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createTextSigner } from '../src/sketch/textSigner.js';
import { jaccard } from '../src/similarity/jaccard.js';
import { ProbeTable, probeJaccardAtLeast, probeJaccardAtLeastAt } from '../src/similarity/probeSet.js';
import { SetArena } from '../src/parallel/setArena.js';
import { SetKernels } from '../src/wasm/setKernels.js';
import { scratchLayout } from '../src/parallel/arenaSets.js';
import { dedup } from '../src/dedup/dedup.js';

const argv = process.argv.slice(2);
const opt = (name: string, def: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : def;
};
const docs = readFileSync(opt('file', 'bench/data/d100k.txt'), 'utf8').split('\n').slice(0, Number(opt('docs', '20000')));
const found = dedup(docs, { threshold: 0.8 }).pairs.map((p) => [p.a, p.b] as const);
const random = Array.from({ length: docs.length }, (_, i) => [i, (i * 7919 + 1) % docs.length] as const);
const signer = createTextSigner();
const cpuMs = (f: () => void): number => {
  const c = process.cpuUsage();
  f();
  const u = process.cpuUsage(c);
  return (u.user + u.system) / 1000;
};
const us = (ms: number, n: number): string => ((ms * 1000) / n).toFixed(2);
console.log(`${docs.length} docs, ${found.length} verified pairs, ${random.length} random pairs; load average ${loadavg()[0]!.toFixed(2)}`);
for (let r = 0; r < Number(opt('rounds', '2')); r++) {
  let sorted: Uint32Array[] = [];
  let distinct: Uint32Array[] = [];
  const tSorted = cpuMs(() => (sorted = docs.map((t) => signer.set(t))));
  const tDistinct = cpuMs(() => (distinct = docs.map((t) => signer.distinct(t))));
  const table = new ProbeTable();
  const score = (pairs: readonly (readonly [number, number])[]) => {
    let kept = 0;
    let keptProbe = 0;
    const merge = cpuMs(() => {
      for (const [a, b] of pairs) if (jaccard(sorted[a]!, sorted[b]!) >= 0.8) kept++;
    });
    const probe = cpuMs(() => {
      for (const [a, b] of pairs) {
        table.load(distinct[a]!);
        if (probeJaccardAtLeast(table, distinct[b]!, 0.8) >= 0) keptProbe++;
      }
    });
    const load = cpuMs(() => {
      for (const [a] of pairs) table.load(distinct[a]!);
    });
    if (kept !== keptProbe) throw new Error(`merge kept ${kept}, probe ${keptProbe}`);
    return `merge ${us(merge, pairs.length)} µs, probe ${us(probe, pairs.length)} µs (table load ${us(load, pairs.length)})`;
  };
  console.log(
    `round ${r + 1}: set sorted ${us(tSorted, docs.length)} µs/doc, distinct ${us(tDistinct, docs.length)} µs/doc | verified pairs: ${
      score(found)
    } | random pairs: ${score(random)}`,
  );
  // The workers' route (src/parallel/arenaSets.ts): blocks sized by text length, one scratch region.
  const arena = new SetArena();
  const kernels = SetKernels.shared(arena.memory);
  if (!kernels) continue;
  const shared = new ProbeTable({ kernels });
  const most = docs.reduce((m, t) => Math.max(m, t.length), 0);
  const layout = scratchLayout(most, true);
  const scratch = arena.alloc(layout.bytes / 4);
  kernels.region(arena.offset(scratch) * 4, layout.tableBytes);
  const writer = signer.arenaWriter(kernels)!;
  writer.place(arena.offset(scratch) * 4 + layout.tableBytes, arena.bytes(scratch) - layout.tableBytes);
  const blocks = docs.map((t) => arena.alloc(t.length));
  const lens = new Int32Array(docs.length);
  // The signer's own kernels (fingerprints in their memory, copied into the arena), then the
  // route the workers take: symbols, fingerprints and table all in the arena (arenaSetWriter).
  const tCopied = cpuMs(() => {
    for (let i = 0; i < docs.length; i++) lens[i] = signer.distinctTo(docs[i]!, shared, arena.offset(blocks[i]!) * 4, arena.capacity(blocks[i]!));
  });
  let declined = 0;
  const tArena = cpuMs(() => {
    for (let i = 0; i < docs.length; i++) {
      const at = arena.offset(blocks[i]!) * 4;
      const room = arena.capacity(blocks[i]!);
      lens[i] = writer.distinctTo(docs[i]!, shared, at, room);
      if (lens[i]! < 0) {
        declined++;
        lens[i] = signer.distinctTo(docs[i]!, shared, at, room);
      }
    }
  });
  const inPlace = (pairs: readonly (readonly [number, number])[]): string => {
    let kept = 0;
    const all = cpuMs(() => {
      for (const [a, b] of pairs) {
        shared.loadAt(arena.offset(blocks[b]!) * 4, lens[b]!);
        if (probeJaccardAtLeastAt(shared, arena.offset(blocks[a]!) * 4, lens[a]!, 0.8) >= 0) kept++;
      }
    });
    const load = cpuMs(() => {
      for (const [, b] of pairs) shared.loadAt(arena.offset(blocks[b]!) * 4, lens[b]!);
    });
    return `${us(all - load, pairs.length)} µs in place (+ table load ${us(load, pairs.length)}), ${kept} kept`;
  };
  // The yardstick of issue #14's "as fast per byte as signing": the same documents signed.
  const row = new Uint32Array(signer.numPerm);
  const tSign = cpuMs(() => {
    for (const t of docs) signer.signInto(t, row);
  });
  console.log(
    `round ${r + 1}, signing the same documents (signInto): ${us(tSign, docs.length)} µs/doc; the set into its block costs ${
      (tArena / tSign).toFixed(2)
    } signings`,
  );
  console.log(
    `round ${r + 1}, arena: set into its block ${us(tArena, docs.length)} µs/doc (${declined} declined; through the signer's kernels and a copy ${
      us(tCopied, docs.length)
    }) | verified pairs: ${inPlace(found)} | random pairs: ${inPlace(random)}`,
  );
}
