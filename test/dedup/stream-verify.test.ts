/**
 * Exact verification by probe tables (unsorted distinct sets) gives exactly what the merge of
 * sorted sets gives — the same pairs and the same similarity bits — and verification on worker
 * threads gives exactly what verification in one thread gives, on random sets and random corpora.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { neardup, tmpDir } from '../cliUtil.js';
import { Command } from 'commander';
import { createProgram, runProgram } from '../../src/cli/program.js';
import { ProbeTable, probeJaccardAtLeast, probeJaccardAtLeastAt, setHash } from '../../src/similarity/probeSet.js';
import { SetKernels } from '../../src/wasm/setKernels.js';
import { jaccard } from '../../src/similarity/jaccard.js';
import { toSortedSet } from '../../src/text/fingerprintSet.js';
import { dedup } from '../../src/dedup/dedup.js';
import { dedupStream } from '../../src/dedup/streamDedup.js';
import { createShingler } from '../../src/text/shingler.js';
import { CorpusGenerator } from '../../bench/gen.js';
import { splitmix32 } from '../../src/hash/mix.js';
import { ArenaFullError, SetArena, blockBytes } from '../../src/parallel/setArena.js';
import { arenaSets, scratchLayout, type ArenaJob } from '../../src/parallel/arenaSets.js';
import { arenaTextBytes } from '../../src/sketch/arenaSetWriter.js';
import { groupBySecond } from '../../src/lsh/secondGroups.js';
import { verifyExact, type SetFeed } from '../../src/dedup/streamVerify.js';
import { createTextSigner } from '../../src/sketch/textSigner.js';
import type { ScoredPair } from '../../src/similarity/bruteForce.js';

/** verifyExact's pair sink, collecting objects. */
const sink = (o: ScoredPair[]) => ({ add: (a: number, b: number, similarity: number) => void o.push({ a, b, similarity }) });

/** Two distinct sets with a chosen overlap, from a pool of values that includes 0 and 2^32−1. */
const setPair = fc
  .record({
    shared: fc.uniqueArray(fc.oneof(fc.constantFrom(0, 1, 0xffffffff, 0x80000000), fc.nat({ max: 0xffffffff })), { maxLength: 120 }),
    onlyA: fc.uniqueArray(fc.nat({ max: 0xffffffff }), { maxLength: 40 }),
    onlyB: fc.uniqueArray(fc.nat({ max: 0xffffffff }), { maxLength: 40 }),
    // Small tables collide often: values that share low bits exercise the linear probing.
    lowBits: fc.boolean(),
  })
  .map(({ shared, onlyA, onlyB, lowBits }) => {
    const fix = (v: number) => (lowBits ? (v & 0xffff0000) >>> 0 : v);
    const s = new Set(shared.map(fix));
    const a = new Set(s);
    const b = new Set(s);
    for (const v of onlyA.map(fix)) if (!s.has(v)) a.add(v);
    for (const v of onlyB.map(fix)) if (!s.has(v) && !a.has(v)) b.add(v);
    return { a: Uint32Array.from(a), b: Uint32Array.from(b) };
  });

test('probeJaccardAtLeast = jaccard of sorted sets, bit for bit, above the threshold; -1 below', () => {
  const table = new ProbeTable();
  fc.assert(
    fc.property(setPair, fc.oneof(fc.constantFrom(0.5, 0.8, 0.9, 1, 2 / 3, 0.75), fc.double({ min: 0.01, max: 1, noNaN: true })), ({ a, b }, t) => {
      const want = jaccard(toSortedSet(a.slice()), toSortedSet(b.slice()));
      table.load(a);
      assert.equal(table.size, a.length);
      const got = probeJaccardAtLeast(table, b, t);
      if (want >= t && want > 0) assert.equal(got, want);
      else assert.equal(got, -1);
      // The table is reusable and symmetric in use.
      table.load(b);
      assert.equal(probeJaccardAtLeast(table, a, t), got);
    }),
    { numRuns: 3000, seed: 14, endOnFailure: true },
  );
});

test('probeJaccardAtLeast keeps pairs exactly at the threshold (integer ratios)', () => {
  const table = new ProbeTable();
  // |A ∩ B| / |A ∪ B| = t exactly: 4/5, 8/10, 1/2, 2/3, 3/4, 9/10, 1.
  for (const [inter, union] of [[4, 5], [8, 10], [1, 2], [2, 3], [3, 4], [9, 10], [7, 7], [800, 1000], [1434, 1792]] as const) {
    for (const extraA of [0, Math.floor((union - inter) / 2), union - inter]) {
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < inter; i++) a.push(i * 7919), b.push(i * 7919);
      for (let i = 0; i < union - inter; i++) (i < extraA ? a : b).push(1e6 + i);
      table.load(Uint32Array.from(a));
      const t = inter / union;
      assert.equal(probeJaccardAtLeast(table, Uint32Array.from(b), t), t, `${inter}/${union}, |A| ${a.length}`);
      // A hair above the exact value must reject it.
      assert.equal(probeJaccardAtLeast(table, Uint32Array.from(b), t + 1e-9), -1);
    }
  }
});

test('ProbeTable.distinct: each value once, in first-occurrence order; setHash ignores order', () => {
  const table = new ProbeTable();
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.nat({ max: 0xffffffff }), fc.constantFrom(0, 5, 0xffffffff)), { maxLength: 9000 }), fc.nat(), (xs, salt) => {
      const values = Uint32Array.from(xs);
      const out = new Uint32Array(values.length);
      const d = table.distinct(values, values.length, out);
      assert.deepEqual(Array.from(out.subarray(0, d)), [...new Set(xs)]);
      // In place, as TextSigner.distinct uses it.
      const copy = values.slice();
      assert.equal(table.distinct(copy, copy.length, copy), d);
      assert.deepEqual(copy.subarray(0, d), out.subarray(0, d));
      const set = out.slice(0, d);
      const shuffled = set.slice();
      const rnd = splitmix32(salt);
      for (let i = shuffled.length - 1; i > 0; i--) {
        const j = rnd() % (i + 1);
        [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
      }
      assert.equal(setHash(shuffled, 99), setHash(set, 99));
    }),
    { numRuns: 300, seed: 15, endOnFailure: true },
  );
});

test('ProbeTable: the WebAssembly kernels give what the JavaScript loops give (distinct, load, countIn at every bound, reuse at any size)', () => {
  const wasm = new ProbeTable();
  const js = new ProbeTable({ wasm: false });
  const other = new ProbeTable({ wasm: false });
  assert.equal(js.wasm, false);
  // NEARDUP_NO_WASM turns the kernels off on purpose; otherwise this test must exercise them.
  if (!process.env['NEARDUP_NO_WASM']) assert.equal(wasm.wasm, true, 'WebAssembly kernels not in use');
  /** Values from a few low-bit patterns collide into long runs, including runs that spill past the last home slot. */
  const value = fc.oneof(
    fc.nat({ max: 0xffffffff }),
    fc.constantFrom(0, 1, 0xffffffff, 0x80000000, 0xfffffff0),
    fc.nat({ max: 0xffff }).map((h) => ((h << 16) | 0xfff) >>> 0),
    fc.nat({ max: 0xffff }).map((h) => (h << 16) >>> 0),
  );
  fc.assert(
    fc.property(fc.array(value, { maxLength: 5000 }), fc.array(value, { maxLength: 5000 }), fc.nat({ max: 6000 }), (xs, ys, needRaw) => {
      const values = Uint32Array.from(xs);
      const a = wasm.distinctOf(values);
      const outJs = new Uint32Array(values.length);
      const d = js.distinct(values, values.length, outJs);
      assert.deepEqual(a, outJs.slice(0, d));
      assert.equal(wasm.size, js.size);
      // In place into an Int32Array, as the other callers may.
      const inPlace = Int32Array.from(values);
      assert.equal(wasm.distinct(inPlace, inPlace.length, inPlace), d);
      assert.deepEqual(new Uint32Array(inPlace.buffer, 0, d), a);
      const b = other.distinctOf(Uint32Array.from(ys));
      for (const need of [0, 1, needRaw, Math.min(b.length, needRaw), b.length, b.length + 1]) {
        assert.equal(wasm.countIn(b, need), js.countIn(b, need), `countIn need ${need}`);
      }
      // load (no duplicate check) then count the other way.
      wasm.load(b);
      js.load(b);
      assert.equal(wasm.size, js.size);
      for (const need of [0, needRaw, a.length]) assert.equal(wasm.countIn(a, need), js.countIn(a, need));
    }),
    { numRuns: 400, seed: 18, endOnFailure: true },
  );
});

test('ProbeTable on a region of shared memory: distinctTo writes what distinct gives, countAt reads in place what countIn counts, fits tells the region size', () => {
  const js = new ProbeTable({ wasm: false });
  const arena = new SetArena();
  const kernels = SetKernels.shared(arena.memory);
  if (!process.env['NEARDUP_NO_WASM']) assert.ok(kernels, 'shared set kernels not available');
  if (!kernels) return;
  const shared = new ProbeTable({ kernels });
  const u32 = () => new Uint32Array(arena.memory.buffer);
  const value = fc.oneof(
    fc.nat({ max: 0xffffffff }),
    fc.constantFrom(0, 1, 0xffffffff, 0x80000000),
    fc.nat({ max: 0xffff }).map((h) => ((h << 16) | 0xfff) >>> 0),
  );
  fc.assert(
    fc.property(
      fc.array(value, { maxLength: 3000 }),
      fc.array(value, { maxLength: 3000 }),
      fc.nat({ max: 4000 }),
      fc.integer({ min: -50, max: 50 }),
      (xs, ys, needRaw, slack) => {
        const values = Uint32Array.from(xs);
        const room = SetKernels.regionBytes(values.length) + slack * 4;
        const scratch = arena.alloc(room / 4);
        kernels.region(arena.offset(scratch) * 4, room);
        // The region holds a table for n values exactly when it has SetKernels.regionBytes(n) bytes.
        assert.equal(shared.fits(values.length), slack >= 0 || values.length === 0 && SetKernels.regionBytes(0) <= room);
        const outJs = new Uint32Array(Math.max(1, values.length));
        const d = js.distinct(values, values.length, outJs);
        if (shared.fits(values.length)) {
          const target = arena.alloc(values.length);
          const got = shared.distinctTo(values, arena.offset(target) * 4);
          assert.equal(got, d);
          assert.deepEqual(u32().subarray(arena.offset(target), arena.offset(target) + d), outJs.subarray(0, d));
          // The other side, distinct, placed elsewhere in the memory and counted where it lies.
          const b = new ProbeTable({ wasm: false }).distinctOf(Uint32Array.from(ys));
          const where = arena.alloc(b.length);
          u32().set(b, arena.offset(where));
          for (const need of [0, needRaw, b.length, b.length + 1]) {
            assert.equal(shared.countAt(arena.offset(where) * 4, b.length, need), js.countIn(b, need), `countAt need ${need}`);
            assert.equal(probeJaccardAtLeastAt(shared, arena.offset(where) * 4, b.length, 0.5), probeJaccardAtLeast(js, b, 0.5));
          }
          arena.release(target);
          arena.release(where);
        }
        arena.release(scratch);
      },
    ),
    { numRuns: 300, seed: 31, endOnFailure: true },
  );
});

/** A random corpus with chains of near copies (copies of copies), exact copies and empty documents. */
function randomCorpus(seed: number, n: number): string[] {
  const gen = new CorpusGenerator(seed);
  const rnd = splitmix32(seed * 7 + 1);
  const words: Int32Array[] = [];
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = rnd() % 100;
    let w: Int32Array;
    if (i > 0 && r < 35) w = gen.edit(words[rnd() % i]!, [0, 0.02, 0.05, 0.1, 0.2][rnd() % 5]!, i);
    else w = gen.original(i).subarray(0, 20 + (rnd() % 80));
    words.push(w);
    texts.push(r === 99 ? '' : gen.render(w, seed + (r < 35 ? 0 : i)));
  }
  return texts;
}

test('verification on workers = verification in one thread = sorted-set Jaccard, on random corpora', async () => {
  const shingler = createShingler();
  for (const [seed, threshold] of [[1, 0.8], [2, 0.5], [3, 0.9], [4, 0.65]] as const) {
    const texts = randomCorpus(seed, 500);
    const want = dedup(texts, { threshold });
    assert.ok(want.pairs.length > 30, `seed ${seed}: the corpus has near-duplicate pairs`);
    // Every similarity is the merge-of-sorted-sets Jaccard of the two texts, bit for bit.
    for (const p of want.pairs) assert.equal(p.similarity, jaccard(shingler.set(texts[p.a]!), shingler.set(texts[p.b]!)));
    for (const [workers, batchSize, memoryBudget] of [[0, 64, 1 << 30], [1, 16, 1 << 30], [2, 7, 1 << 30], [2, 50, 40000], [3, 33, 1]] as const) {
      const got = await dedupStream(() => texts, { threshold, workers, batchSize, memoryBudget });
      assert.deepEqual(got.pairs, want.pairs, `seed ${seed}, workers ${workers}, batch ${batchSize}, budget ${memoryBudget}`);
      assert.deepEqual(got.clusters, want.clusters);
    }
  }
});

test('SetArena: blocks fit within 1/16 waste, live blocks never overlap, released blocks come back by class, refs name the views', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1 << 26 }), (n) => {
      const bytes = n * 4;
      const b = blockBytes(bytes);
      assert.ok(b >= bytes && b % 4 === 0, `${b} for ${bytes}`);
      assert.ok(b <= Math.max(256, bytes * (1 + 1 / 16)), `${b} wastes too much for ${bytes}`);
      assert.equal(blockBytes(b), b, 'a block size is its own class');
    }),
    { numRuns: 2000, seed: 19 },
  );
  // Random alloc/release sequences, with blocks big enough to grow the memory (by 64 MB) now and then:
  // every live block keeps the pattern written into it whatever happens to the others.
  const op = fc.oneof(
    { weight: 6, arbitrary: fc.record({ alloc: fc.integer({ min: 0, max: 5000 }) }) },
    { weight: 1, arbitrary: fc.record({ alloc: fc.constantFrom(9_000_000, 17_000_000) }) },
    { weight: 5, arbitrary: fc.record({ release: fc.nat() }) },
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      const arena = new SetArena();
      const live: { h: number; len: number; tag: number }[] = [];
      const freed = new Map<number, number[]>();
      let tag = 1;
      const ref = new Int32Array(2);
      for (const o of ops) {
        if ('alloc' in o) {
          const h = arena.alloc(o.alloc);
          assert.ok(arena.capacity(h) >= o.alloc && arena.bytes(h) === blockBytes(Math.max(1, o.alloc) * 4));
          // A released block of the same class is handed out before new memory is cut.
          const same = freed.get(arena.bytes(h));
          if (same && same.length > 0) assert.equal(h, same.pop());
          const len = Math.min(o.alloc, 64);
          const v = arena.view(h, arena.capacity(h));
          v[0] = tag;
          v[v.length - 1] = tag;
          arena.ref(h, len, ref, 0);
          assert.equal(ref[1], len);
          assert.equal(ref[0], arena.offset(h));
          assert.equal(arena.view(h, len).byteOffset, ref[0]! * 4);
          live.push({ h, len, tag: tag++ });
        } else if (live.length > 0) {
          const [x] = live.splice(o.release % live.length, 1);
          const bytes = arena.bytes(x!.h);
          arena.release(x!.h);
          assert.throws(() => arena.release(x!.h), /released twice/);
          if (!freed.has(bytes)) freed.set(bytes, []);
          freed.get(bytes)!.push(x!.h);
        }
        for (const x of live) {
          const v = arena.view(x.h, arena.capacity(x.h));
          assert.equal(v[0], x.tag, 'first value of a live block');
          assert.equal(v[v.length - 1], x.tag, 'last value of a live block');
        }
      }
      assert.ok(arena.memory.buffer instanceof SharedArrayBuffer);
    }),
    { numRuns: 60, seed: 23 },
  );
});

/**
 * Candidate pairs (a < b) of `texts`, every pair but those `skip` drops, and the pairs at or above
 * `threshold` by sorted-set Jaccard (sorted by a, then b).
 */
function candidatesOf(texts: string[], threshold: number, skip: (a: number, b: number) => boolean = () => false) {
  const shingler = createShingler();
  const sorted = texts.map((t) => shingler.set(t));
  const pa: number[] = [];
  const pb: number[] = [];
  const want: ScoredPair[] = [];
  for (let b = 1; b < texts.length; b++) {
    for (let a = 0; a < b; a++) {
      if (skip(a, b)) continue;
      pa.push(a);
      pb.push(b);
      const j = sorted[a]!.length > 0 && sorted[b]!.length > 0 ? jaccard(sorted[a]!, sorted[b]!) : 0;
      if (j >= threshold) want.push({ a, b, similarity: j });
    }
  }
  want.sort((x, y) => x.a - y.a || x.b - y.b);
  return { sorted, pa: Int32Array.from(pa), pb: Int32Array.from(pb), want };
}

/**
 * A feed whose sets are made on this thread by the workers' own code (arenaSets), in batches of
 * `batchSize`, document j's block sized `bound(j)`; `workers` sets its read-ahead.
 */
function threadFeed(texts: string[], batchSize: number, workers: number, bound: (doc: number) => number): SetFeed {
  const signer = createTextSigner();
  const table = new ProbeTable();
  return {
    workers,
    async *pass() {
      for (let base = 0; base < texts.length; base += batchSize) {
        yield {
          len: Math.min(batchSize, texts.length - base),
          bound: (j: number) => bound(base + j),
          sets: async (need: number[], arena: ArenaJob['arena'], score: ArenaJob['score']) =>
            arenaSets(need.map((j) => texts[base + j]!), { signer, table, arena, score }),
        };
      }
    },
  };
}

test('arenaSetWriter: the set TextSigner.distinctTo writes, in the same order, for any text, preset, k and region, or it declines', () => {
  // Texts mix ASCII, accented and CJK letters, marks, surrogate pairs, lone surrogates and every kind of space, so
  // symbol-table blocks are copied in as they are met (and again into each new region), and some
  // code units send the text back to the signer's own route; regions are placed at random sizes
  // and over memory left dirty, so texts longer than a region are declined.
  const arena = new SetArena();
  const kernels = SetKernels.shared(arena.memory);
  if (!process.env['NEARDUP_NO_WASM']) assert.ok(kernels, 'shared set kernels not available');
  if (!kernels) return;
  const shared = new ProbeTable({ kernels });
  const own = new ProbeTable();
  const unit = fc.constantFrom(
    'a',
    'b',
    'Z',
    ' ',
    '  ',
    '\n',
    '\t',
    '.',
    'é',
    'É',
    'ß',
    '\u0301',
    'д',
    'Ж',
    'ש',
    'ع',
    '\u07ff',
    '\u0800',
    '中',
    '文',
    '\u00a0',
    '\u3000',
    '\uffef',
    '😀',
    'ﬁ',
    'Σ',
    'ς',
    '1',
  );
  const plain = fc.array(unit, { maxLength: 400 }).map((xs) => xs.join(''));
  // Some texts are ASCII only; one in six has a lone surrogate somewhere.
  const lone = fc.tuple(plain, fc.constantFrom('\ud800', '\udfff'), fc.nat()).map(([t, u, at]) =>
    t.slice(0, at % (t.length + 1)) + u + t.slice(at % (t.length + 1))
  );
  const ascii = fc.array(fc.constantFrom('a', 'b', 'Z', ' ', '  ', '\n', '\t', '.', '1', 'x y'), { maxLength: 400 }).map((xs) => xs.join(''));
  const text = fc.oneof({ arbitrary: plain, weight: 3 }, { arbitrary: ascii, weight: 2 }, { arbitrary: lone, weight: 1 });
  let made = 0;
  let declined = 0;
  let bytesMade = 0;
  fc.assert(
    fc.property(
      fc.array(text, { minLength: 1, maxLength: 8 }),
      fc.constantFrom('default', 'lowercase-collapse', 'none'),
      fc.integer({ min: 1, max: 9 }),
      fc.array(fc.integer({ min: 0, max: 1200 }), { minLength: 1, maxLength: 3 }),
      (texts, preset, k, caps) => {
        const signer = createTextSigner({ shingle: { k, normalize: { preset: preset as 'default' } } });
        const writer = signer.arenaWriter(kernels);
        assert.ok(writer, 'char shingles with WebAssembly have a writer');
        const out = arena.alloc(4096);
        const mine = arena.alloc(4096);
        for (const cap of caps) {
          const bytes = arenaTextBytes(cap);
          const region = arena.alloc(bytes / 4 + 8);
          new Uint32Array(arena.memory.buffer).fill(0xdeadbeef, arena.offset(region), arena.offset(region) + bytes / 4);
          const table = arena.alloc(SetKernels.regionBytes(4096) / 4);
          kernels.region(arena.offset(table) * 4, SetKernels.regionBytes(4096));
          writer!.place(arena.offset(region) * 4, bytes);
          for (const t of texts) {
            const got: number = writer!.distinctTo(t, shared, arena.offset(out) * 4, 4096);
            const want = signer.distinct(t, own);
            if (got < 0) {
              // Declined: too long for the region, a code unit left to JavaScript, or k symbols or fewer.
              declined++;
              continue;
            }
            made++;
            // (A region holds a quarter more than asked for, and 16 units: see arenaTextBytes.)
            assert.ok(t.length <= cap + (cap >> 2) + 18, 'a text longer than the region is declined');
            assert.deepEqual(Array.from(new Uint32Array(arena.memory.buffer, arena.offset(out) * 4, got)), Array.from(want));
            // The table is left loaded with the set: probing it with the set finds all of it.
            assert.equal(shared.countIn(want, 0), want.length);
            // The text given as UTF-8 bytes (inside a larger buffer, as a batch's lines are): the
            // same set, or declined when its bytes outgrow the region.
            const utf8 = Buffer.from(t, 'utf8');
            const bytes = Buffer.concat([Buffer.from('{"text":"'), utf8, Buffer.from('"}\n')]);
            const viaBytes: number = writer!.distinctBytesTo(bytes, 9, 9 + utf8.length, shared, arena.offset(mine) * 4, 4096);
            // An ASCII text that fit as a string fits as bytes; more bytes than units may not.
            if (viaBytes < 0) assert.ok(utf8.length > t.length, 'declined only for bytes past the region');
            else {
              assert.equal(viaBytes, got);
              assert.deepEqual(Array.from(new Uint32Array(arena.memory.buffer, arena.offset(mine) * 4, got)), Array.from(want));
              bytesMade++;
            }
          }
          arena.release(region);
          arena.release(table);
        }
        arena.release(out);
        arena.release(mine);
      },
    ),
    { numRuns: 150, seed: 41 },
  );
  assert.ok(
    made > 100 && declined > 100 && bytesMade > 100,
    `every outcome is exercised (${made} made, ${bytesMade} of them from bytes too, ${declined} declined)`,
  );
  // Signers without a writer say so, and their batches' scratch blocks get no room for texts.
  assert.equal(createTextSigner().arenaText, true);
  for (const signer of [createTextSigner({ shingle: { kind: 'word', k: 2 } }), createTextSigner({ wasm: false })]) {
    assert.equal(signer.arenaText, false);
    assert.equal(signer.arenaWriter(kernels), null);
  }
  assert.equal(scratchLayout(5000, false).bytes, SetKernels.regionBytes(5000));
  assert.equal(scratchLayout(5000, true).bytes, SetKernels.regionBytes(5000) + arenaTextBytes(5000));
  assert.equal(scratchLayout(0, true).bytes, SetKernels.regionBytes(0));
});

test('verification through the shared arena = sorted-set Jaccard, whatever bound a feed gives (sets that outgrow their blocks come back whole)', async () => {
  // Bounds are drawn per document: 0 (every set overflows), one short of the set, exact, or the
  // text's length; budgets down to 1 byte force extra passes.
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 1000 }),
      fc.integer({ min: 1, max: 40 }),
      fc.constantFrom(1, 20_000, 1 << 30),
      fc.integer({ min: 0, max: 3 }),
      fc.constantFrom(0.5, 0.8),
      async (seed, batchSize, budget, workers, threshold) => {
        const texts = randomCorpus(seed, 90);
        const { sorted, pa, pb, want } = candidatesOf(texts, threshold, (a, b) => (a * 7 + b * 3 + seed) % 4 === 0);
        const rnd = splitmix32(seed);
        const bounds = sorted.map((x, i) => [0, Math.max(0, x.length - 1), x.length, texts[i]!.length][rnd() % 4]!);
        const out: ScoredPair[] = [];
        const r = await verifyExact({
          feed: threadFeed(texts, batchSize, workers, (d) => bounds[d]!),
          n: texts.length,
          groups: groupBySecond(pa, pb, pa.length, texts.length),
          threshold,
          budget,
          out: sink(out),
        });
        out.sort((x, y) => x.a - y.a || x.b - y.b);
        assert.deepEqual(out, want);
        if (budget === 1 && want.length > 3) assert.ok(r.passes > 1, 'a 1-byte budget holds one set at a time');
      },
    ),
    { numRuns: 40, seed: 29 },
  );
});

test("verification through the shared arena: a batch's scratch block has room for texts exactly when the feed's maker places them", async () => {
  const texts = randomCorpus(6, 30);
  const { pa, pb, want } = candidatesOf(texts, 0.5);
  for (const placesText of [true, false]) {
    const inner = threadFeed(texts, 4, 2, (d) => texts[d]!.length);
    const spare: number[] = [];
    const feed: SetFeed = {
      workers: inner.workers,
      placesText,
      async *pass() {
        for await (const b of inner.pass())
          yield { ...b, sets: (need, arena, score) => (spare.push(arena.scratch[1] - arena.scratch[2]), b.sets(need, arena, score)) };
      },
    };
    const out: ScoredPair[] = [];
    await verifyExact({ feed, n: texts.length, groups: groupBySecond(pa, pb, pa.length, texts.length), threshold: 0.5, budget: 1 << 30, out: sink(out) });
    out.sort((x, y) => x.a - y.a || x.b - y.b);
    assert.deepEqual(out, want);
    assert.ok(spare.length > 0);
    for (const bytes of spare) assert.ok(placesText ? bytes >= arenaTextBytes(1) : bytes < arenaTextBytes(1), `${placesText}: ${bytes} spare bytes`);
  }
});

test('verification through the shared arena: a full arena first collects the batches in flight; one batch too big for it is a clear error', async () => {
  const texts = randomCorpus(5, 40);
  const { pa, pb, want } = candidatesOf(texts, 0.5);
  assert.ok(want.length > 5);
  // Every block is sized for a million values (4 MB), a batch's scratch for a table of that size.
  const run = (arenaBytes: number): Promise<ScoredPair[]> => {
    const out: ScoredPair[] = [];
    const feed = threadFeed(texts, 2, 3, () => 1_000_000);
    return verifyExact({
      feed,
      n: texts.length,
      groups: groupBySecond(pa, pb, pa.length, texts.length),
      threshold: 0.5,
      budget: 8 << 20,
      out: sink(out),
      arenaBytes,
    }).then(() => out.sort((x, y) => x.a - y.a || x.b - y.b));
  };
  // 64 MB: two batches of two documents (about 24 MB each) fit beside the held sets, not the four
  // the read-ahead asks for.
  assert.deepEqual(await run(64 << 20), want);
  // 16 MB: not even one batch fits.
  await assert.rejects(run(16 << 20), (e: unknown) => e instanceof ArenaFullError && /GiB of shared memory for fingerprint sets/.test(e.message));
});

test('verification through the shared arena: a set that outgrows its block when the arena is full is scored without a block and held in a later pass', async () => {
  // Eight groups of ten renderings of one text: every pair within a group is a candidate.
  const n = 80;
  const pa: number[] = [];
  const pb: number[] = [];
  for (let a = 0; a < n; a++) for (let b = a + 1; b < n && Math.floor(b / 10) === Math.floor(a / 10); b++) (pa.push(a), pb.push(b));
  let extraPasses = 0;
  for (const seed of [3, 8, 21]) {
    const gen = new CorpusGenerator(seed);
    const texts = Array.from({ length: n }, (_, i) => gen.render(gen.original(i - (i % 10)).subarray(0, 60 + (i % 40)), seed + (i % 3)));
    const sorted = texts.map((t) => createTextSigner().set(t));
    const want: ScoredPair[] = [];
    pa.forEach((a, k) => {
      const j = jaccard(sorted[a]!, sorted[pb[k]!]!);
      if (j >= 0.5) want.push({ a, b: pb[k]!, similarity: j });
    });
    // Blocks sized 0 make every set come back in its reply; an arena of two 64 KB pages fills with
    // held sets (the budget holds them all), so some of those sets find no block then.
    const out: ScoredPair[] = [];
    const r = await verifyExact({
      feed: threadFeed(texts, 3, 2, () => 0),
      n,
      groups: groupBySecond(Int32Array.from(pa), Int32Array.from(pb), pa.length, n),
      threshold: 0.5,
      budget: 1 << 30,
      out: sink(out),
      arenaBytes: 2 * 65536,
    });
    out.sort((x, y) => x.a - y.a || x.b - y.b);
    assert.deepEqual(out, want, `seed ${seed}`);
    extraPasses += r.passes - 1;
  }
  assert.ok(extraPasses > 0, 'some set found no block and waited for a later pass');
});

test('without WebAssembly (NEARDUP_NO_WASM), streaming dedup on workers and on one thread writes the same pairs as with it', () => {
  // The fallbacks of every kernel: JS symbolize, signing and probe tables, sets copied into the
  // arena from JS; a fresh process, since the kernels are chosen once per process.
  const dir = tmpDir();
  const file = path.join(dir, 'docs.txt');
  writeFileSync(file, randomCorpus(7, 1200).map((t) => t.replace(/\n/g, ' ')).join('\n') + '\n');
  const runs = ([
    [{}, '2'],
    [{ NEARDUP_NO_WASM: '1' }, '2'],
    [{ NEARDUP_NO_WASM: '1' }, '0'],
  ] as [Record<string, string>, string][]).map(([env, workers]) => {
    const r = neardup(['dedup', file, '--stream', '--workers', workers, '--threshold', '0.6', '-q'], { env });
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  });
  assert.ok(runs[0]!.split('\n').length > 50, 'the corpus has pairs');
  assert.equal(runs[1], runs[0]);
  assert.equal(runs[2], runs[0]);
});

test('the CLI reports a full set arena in one line with the flag that avoids it, exit 1, no stack trace', async () => {
  const program = createProgram();
  program.addCommand(new Command('boom').action(() => {
    throw new ArenaFullError(4 * 2 ** 30);
  }));
  let err = '';
  const code = await runProgram(program, ['node', 'neardup', 'boom'], { write: (s: string) => ((err += s), true) } as unknown as NodeJS.WritableStream);
  assert.equal(code, 1);
  assert.equal(
    err,
    'neardup: verification needs more than 4 GiB of shared memory for fingerprint sets (lower --memory-budget or --batch-size, or use --no-stream)\n',
  );
});
