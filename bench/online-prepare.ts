/**
 * Client-side CPU per document of the online index: what `NearDupIndex.add` computes before it
 * talks to the store (fingerprint set, signature, band/forest keys, the encoded record).
 *
 * Two routes, on the same texts, each stage timed over the whole corpus:
 * - `reference`: the pieces called one by one, as the index did before the fused path
 *   (shingler.set, hasher.sign, keyMaker.keys, encodeRecord);
 * - `index`: the index's own prepare() (set + signature + keys) and recordOf() (the record).
 * Both print µs/document; the best of `reps` runs and the spread (max − min) over them.
 *
 * Usage: node dist/bench/online-prepare.js [--corpus ads|kijiji] [--n 50000] [--reps 5]
 * Defaults: char 5-shingles, `default` normalization, OPH 128 slots, 16×6 bands, forest 8×[3,1].
 * @module
 */
import { kijijiTexts } from '../test/helpers/kijiji.js';
import { parseArgs } from 'node:util';
import { NearDupIndex } from '../src/online/nearDupIndex.js';
import { createShingler } from '../src/text/shingler.js';
import { createMinHasher } from '../src/sketch/minhash.js';
import { KeyMaker } from '../src/online/keys/keys.js';
import { encodeRecord } from '../src/online/records/record.js';
import { adCorpus } from './online-corpus.js';

const { values: args } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'ads' },
    n: { type: 'string', default: '50000' },
    reps: { type: 'string', default: '5' },
  },
});
const N = Number(args.n);
const REPS = Number(args.reps);

function loadTexts(): string[] {
  if (args.corpus === 'ads') {
    const c = adCorpus(3);
    return Array.from({ length: N }, () => c.next());
  }
  if (args.corpus === 'kijiji') {
    const rows = kijijiTexts();
    // The 2,627 ads over and over, to N documents.
    return Array.from({ length: N }, (_, i) => rows[i % rows.length]!);
  }
  throw new Error(`--corpus must be ads or kijiji, got ${args.corpus}`);
}

const texts = loadTexts();
const idx = await NearDupIndex.open({});
const m = idx.manifest;
const shingler = createShingler({ kind: m.shingle.kind, k: m.shingle.k, seed: m.shingle.seed });
const hasher = createMinHasher(m.minhash);
const keyMaker = new KeyMaker({ bands: m.bands, rows: m.rows, forest: m.forest, numPerm: m.minhash.numPerm });
// The index's private per-document steps (the code under test), reached without changing its API.
interface PreparedLike {
  set: Uint32Array;
  sig: Uint32Array | null;
  keys: Float64Array;
}
// The index's preparer (private): what an add computes before the store.
const internals = (idx as unknown as { preparer: unknown }).preparer as {
  prepare(id: string, text: string, meta: unknown): PreparedLike;
  recordOf(p: PreparedLike): Uint8Array;
};

let avgSet = 0;
let avgChars = 0;
for (const t of texts) avgChars += t.length;
const sets: Uint32Array[] = new Array(N);
const sigs: (Uint32Array | null)[] = new Array(N);
const preps: PreparedLike[] = new Array(N);
let sink = 0;

/** Runs `fn` over the corpus `REPS` times (after one warm-up run); returns µs/document per run. */
function time(fn: () => void): number[] {
  fn();
  const out: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const t0 = process.hrtime.bigint();
    fn();
    out.push(Number(process.hrtime.bigint() - t0) / 1000 / N);
  }
  return out;
}

const rows: [string, number[]][] = [];
rows.push([
  'reference: shingler.set',
  time(() => {
    for (let i = 0; i < N; i++) sets[i] = shingler.set(texts[i]!);
  }),
]);
for (const s of sets) avgSet += s.length;
rows.push([
  'reference: hasher.sign',
  time(() => {
    for (let i = 0; i < N; i++) sigs[i] = hasher.sign(sets[i]!);
  }),
]);
rows.push([
  'reference: keyMaker.keys',
  time(() => {
    for (let i = 0; i < N; i++) sink += keyMaker.keys(sigs[i]!).length;
  }),
]);
rows.push([
  'reference: encodeRecord',
  time(() => {
    for (let i = 0; i < N; i++) sink += encodeRecord({ set: sets[i]! }).length;
  }),
]);
rows.push([
  'reference: all four',
  time(() => {
    for (let i = 0; i < N; i++) {
      const set = shingler.set(texts[i]!);
      const sig = hasher.sign(set)!;
      sink += keyMaker.keys(sig).length + encodeRecord({ set }).length;
    }
  }),
]);
rows.push([
  'index: prepare (set+sig+keys)',
  time(() => {
    for (let i = 0; i < N; i++) preps[i] = internals.prepare(`d${i}`, texts[i]!, undefined);
  }),
]);
rows.push([
  'index: recordOf',
  time(() => {
    for (let i = 0; i < N; i++) sink += internals.recordOf(preps[i]!).length;
  }),
]);
rows.push([
  'index: prepare + recordOf',
  time(() => {
    for (let i = 0; i < N; i++) sink += internals.recordOf(internals.prepare(`d${i}`, texts[i]!, undefined)).length;
  }),
]);

// The two routes must agree (the tests check this thoroughly; here it guards the numbers).
for (let i = 0; i < N; i += 97) {
  const p = preps[i]!;
  const same = (a: ArrayLike<number> | null, b: ArrayLike<number> | null) =>
    a === b || (!!a && !!b && a.length === b.length && Array.prototype.every.call(a, (v, j) => v === b[j]));
  const set = shingler.set(texts[i]!);
  const sig = hasher.sign(set);
  if (
    !same(p.set, set) || !same(p.sig, sig) || !same(p.keys, sig ? keyMaker.keys(sig) : new Float64Array(0))
    || !same(internals.recordOf(p), encodeRecord({ set }))
  ) {
    throw new Error(`routes differ on document ${i}`);
  }
}

console.log(
  `corpus ${args.corpus}: N = ${N}, ${(avgChars / N).toFixed(0)} chars/doc, ${(avgSet / N).toFixed(1)} shingles/doc; `
    + `${m.shingle.kind} ${m.shingle.k}-shingles, ${m.minhash.method} ${m.minhash.numPerm}, ${m.bands}×${m.rows} bands, ${m.keysPerDoc} keys/doc; best of ${REPS} runs`,
);
console.log('');
console.log('| stage | µs/doc (best) | spread (max − min) |');
console.log('|---|---|---|');
for (const [name, r] of rows) console.log(`| ${name} | ${Math.min(...r).toFixed(2)} | ${(Math.max(...r) - Math.min(...r)).toFixed(2)} |`);
if (sink < 0) console.log(sink);
await idx.close();
