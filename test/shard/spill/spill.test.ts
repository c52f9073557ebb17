/**
 * Decide's pairs out of core (src/shard/spill) as a class: over random graphs of planted chains,
 * stars and random pairs, with copy groups as units, random keep orders and random bucket sizes
 * (down to one row), the out-of-core walk gives the in-memory walk's answer (`decideUnits`, and
 * through `verifiedRemovalBy` the whole verified rule), and spilled pairs read back as the in-memory
 * route holds them (same clustered documents, copies and pairs in the same order), whatever the
 * chunks the raw pairs come in. Bucket files cut at any budget read back every row, by key, in the
 * order added. A group's rows of several column files read a chunk at a time are what `groupRows`
 * reads at once. The spill limits follow the task-memory budget.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { tmpDir } from '../../cliUtil.js';
import { splitmix32 } from '../../../src/hash/mix.js';
import { decideUnits, verifiedRemoval, verifiedRemovalBy, type KeepRanking } from '../../../src/cluster/removal.js';
import { walkOutOfCore, type PairChunks } from '../../../src/shard/spill/walk.js';
import { KeyBuckets } from '../../../src/shard/spill/buckets.js';
import { spillLimits, DEFAULT_SPILL_PAIRS } from '../../../src/shard/spill/limits.js';
import type { RawPairs } from '../../../src/shard/spill/sortedPairs.js';
import { positionPairs, spilledPositionPairs } from '../../../src/shard/stages/decidePairs.js';
import { forEachGroupChunk, groupRowCount, groupRows, writeColumns } from '../../../src/shard/files/columns.js';

const dir = tmpDir();
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let runs = 0;
const fresh = (): string => path.join(dir, `r${runs++}`);

/** A random graph on n nodes: chains (in shuffled and in node order), a star, random pairs; each pair once, a < b. */
function randomGraph(n: number, seed: number): { a: number[]; b: number[]; sim: number[] } {
  const rnd = splitmix32(seed);
  const seen = new Set<number>();
  const g = { a: [] as number[], b: [] as number[], sim: [] as number[] };
  const edge = (x: number, y: number): void => {
    if (x === y) return;
    const [lo, hi] = x < y ? [x, y] : [y, x];
    if (seen.has(lo * n + hi)) return;
    seen.add(lo * n + hi);
    g.a.push(lo);
    g.b.push(hi);
    // Few distinct similarities: equal values must not change an answer.
    g.sim.push(0.8 + (rnd() % 5) / 25);
  };
  const perm = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rnd() % (i + 1);
    [perm[i], perm[j]] = [perm[j]!, perm[i]!];
  }
  const third = Math.floor(n / 3);
  for (let i = 1; i < third; i++) edge(perm[i - 1]!, perm[i]!);
  for (let i = third + 1; i < 2 * third; i++) edge(i - 1, i);
  for (let i = 2 * third + 1; i < n; i++) if (rnd() % 2) edge(2 * third, i);
  for (let k = 0; k < n / 2; k++) edge(rnd() % n, rnd() % n);
  // Shuffled, so that no order is given for free.
  const order = Array.from({ length: g.a.length }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rnd() % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return { a: order.map((i) => g.a[i]!), b: order.map((i) => g.b[i]!), sim: order.map((i) => g.sim[i]!) };
}

/** The pairs as chunks of random sizes (the same split on every pass). */
function chunks(a: ArrayLike<number>, b: ArrayLike<number>, sim: ArrayLike<number>, seed: number): PairChunks {
  const rnd = splitmix32(seed);
  const sizes: number[] = [];
  for (let at = 0; at < a.length;) {
    const s = 1 + (rnd() % 17);
    sizes.push(s);
    at += s;
  }
  return {
    count: a.length,
    forEach(each) {
      let at = 0;
      for (const s of sizes) {
        const n = Math.min(s, a.length - at);
        // Views longer than n: a reader must take only n rows.
        const x = new Int32Array(n + 3).fill(-7);
        const y = new Int32Array(n + 3).fill(-7);
        const v = new Float64Array(n + 3).fill(NaN);
        for (let i = 0; i < n; i++) (x[i] = a[at + i]!, y[i] = b[at + i]!, v[i] = sim[at + i]!);
        each(x, y, v, n);
        at += n;
      }
    },
  };
}

/** Raw pairs (global numbers) as chunks of random sizes, in views longer than the chunk (the same split on every pass). */
function rawChunks(A: Float64Array, B: Float64Array, S: Float64Array, seed: number): RawPairs {
  const rnd = splitmix32(seed);
  const sizes: number[] = [];
  for (let at = 0; at < A.length; at += sizes[sizes.length - 1]!) sizes.push(1 + (rnd() % 23));
  return (each) => {
    let at = 0;
    for (const s of sizes) {
      const n = Math.min(s, A.length - at);
      const view = (x: Float64Array): Float64Array => {
        const out = new Float64Array(n + 2).fill(-1);
        out.set(x.subarray(at, at + n));
        return out;
      };
      each(view(A), view(B), view(S), n);
      at += n;
    }
  };
}

describe('the out-of-core walk', () => {
  it("gives decideUnits' answer over units, any keep order, any bucket size", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 300 }), fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 1, max: 40 }), (n, seed, rows) => {
        const { a, b, sim } = randomGraph(n, seed);
        const rnd = splitmix32(seed ^ 0x5bd1e995);
        const order = Array.from({ length: n }, (_, i) => i);
        for (let i = n - 1; i > 0; i--) {
          const j = rnd() % (i + 1);
          [order[i], order[j]] = [order[j]!, order[i]!];
        }
        const want = decideUnits({ units: n, count: a.length, a, b, similarity: sim }, order);
        const got = walkOutOfCore({ units: n, pairs: chunks(a, b, sim, seed), order, dir: fresh(), rows });
        assert.deepEqual(got.via, want.via);
        assert.deepEqual(got.similarity, want.similarity);
      }),
      { numRuns: 150 },
    );
  });

  it("through verifiedRemovalBy, with copy groups as units and a keep value, gives verifiedRemoval's", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 200 }), fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 1, max: 30 }), (U, seed, rows) => {
        const rnd = splitmix32(seed);
        // Documents: each unit has 1–3 members; unit u's members are consecutive documents.
        const start = [0];
        for (let u = 0; u < U; u++) start.push(start[u]! + (rnd() % 4 === 0 ? 2 + (rnd() % 2) : 1));
        const n = start[U]!;
        const members = Int32Array.from({ length: n }, (_, i) => i);
        const unitOf = new Int32Array(n);
        for (let u = 0; u < U; u++) for (let d = start[u]!; d < start[u + 1]!; d++) unitOf[d] = u;
        const units = { start: Int32Array.from(start), members };
        const { a, b, sim } = randomGraph(U, seed);
        const ranking: KeepRanking = rnd() % 2 ? { values: Float64Array.from({ length: n }, () => rnd() % 5), sign: rnd() % 2 ? 1 : -1 } : {};
        const want = verifiedRemoval(n, { units: U, count: a.length, a, b, similarity: sim }, ranking, units);
        // The pairs' ends as documents (a unit's first member), mapped back to units by unitOf, as decide does with copies.
        const da = a.map((u) => start[u]!);
        const db = b.map((u) => start[u]!);
        const pairs = chunks(da, db, sim, seed + 1);
        const inPair = (mark: (u: number) => void): void =>
          pairs.forEach((x, y, _s, m) => {
            for (let i = 0; i < m; i++) (mark(unitOf[x[i]!]!), mark(unitOf[y[i]!]!));
          });
        const got = verifiedRemovalBy(
          n,
          { units: U, inPair, walk: (order) => walkOutOfCore({ units: U, pairs, unitOf, order, dir: fresh(), rows }) },
          ranking,
          units,
        );
        assert.deepEqual(got, want);
      }),
      { numRuns: 120 },
    );
  });
});

describe('spilled pairs', () => {
  it('read back as positionPairs holds them: members, copies, pairs in (a, b) order, from any chunking', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 300 }), fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 1, max: 50 }), (n, seed, rows) => {
        const rnd = splitmix32(seed);
        // Global numbers with gaps, some beyond 2^32.
        const big = rnd() % 3 === 0;
        const doc = Array.from({ length: n }, (_, i) => (big ? 2 ** 33 : 0) + i * 3 + (rnd() % 3));
        const { a, b, sim } = randomGraph(n, seed);
        const A = Float64Array.from(a, (x) => doc[x]!);
        const B = Float64Array.from(b, (x) => doc[x]!);
        const S = Float64Array.from(sim);
        // Copies: documents beyond the pairs' numbers, each a copy of some pair end.
        const copies = { rep: new Float64Array(0), member: new Float64Array(0) };
        if (A.length > 0 && rnd() % 2) {
          const k = 1 + (rnd() % 5);
          copies.rep = Float64Array.from({ length: k }, () => A[rnd() % A.length]!);
          copies.member = Float64Array.from({ length: k }, (_, i) => doc[n - 1]! + 10 + i);
        }
        const want = positionPairs(A, B, S, copies);
        const got = spilledPositionPairs({ raw: rawChunks(A, B, S, seed + 7), copies, dir: fresh(), rows });
        assert.deepEqual(got.members, want.members);
        assert.deepEqual(got.copyRep, want.copyRep);
        assert.deepEqual(got.copyMember, want.copyMember);
        assert.equal(got.count, want.count);
        const ga: number[] = [];
        const gb: number[] = [];
        const gs: number[] = [];
        got.forEach((x, y, s, m) => {
          for (let i = 0; i < m; i++) (ga.push(x[i]!), gb.push(y[i]!), gs.push(s[i]!));
        });
        assert.deepEqual(ga, Array.from(want.a));
        assert.deepEqual(gb, Array.from(want.b));
        assert.deepEqual(gs, Array.from(want.sims));
        got.spilled!.pairs.remove();
      }),
      { numRuns: 120 },
    );
  });
});

describe('bucket files', () => {
  it('read back every row once, by key, in the order added, at any budget', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 400 }), fc.integer({ min: 1, max: 60 }), (keys, rows) => {
        const counts = new Int32Array(31);
        for (const k of keys) counts[k]!++;
        const d = fresh();
        fs.mkdirSync(d);
        const buckets = new KeyBuckets({ dir: d, counts, rows });
        keys.forEach((k, i) => buckets.add(k, i, i / 7));
        buckets.finish();
        const got: [number, number, number][] = [];
        buckets.forEach(({ from, to, start, x, y, v }) => {
          // A bucket holds at most `rows` rows, unless one key has more.
          let keysWithRows = 0;
          for (let k = from; k < to; k++) if (counts[k]! > 0) keysWithRows++;
          assert.ok(x.length <= rows || keysWithRows === 1);
          for (let k = from; k < to; k++) for (let q = start[k - from]!; q < start[k - from + 1]!; q++) (assert.equal(x[q], k), got.push([k, y[q]!, v[q]!]));
        });
        buckets.remove();
        const want = keys.map((k, i) => [k, i, i / 7] as [number, number, number]).sort((p, q) => p[0] - q[0] || p[1] - q[1]);
        assert.deepEqual(got, want);
        assert.deepEqual(fs.readdirSync(d), []);
      }),
      { numRuns: 200 },
    );
  });
});

describe("a group's rows a chunk at a time", () => {
  it("are groupRows' rows, in its order, whatever the chunk", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 700 }), async (seed, F, chunk) => {
        const rnd = splitmix32(seed);
        const G = 3;
        const files: string[] = [];
        const d = fresh();
        fs.mkdirSync(d);
        for (let f = 0; f < F; f++) {
          // Rows grouped by group; some groups empty; small blocks, so that chunks cross them.
          const sizes = Array.from({ length: G }, () => (rnd() % 3 === 0 ? 0 : rnd() % 400));
          const n = sizes.reduce((x, y) => x + y, 0);
          const pstart = new Float64Array(G + 1);
          for (let g = 0; g < G; g++) pstart[g + 1] = pstart[g]! + sizes[g]!;
          const col = (): Float64Array => Float64Array.from({ length: n }, () => rnd() % 100000);
          const file = path.join(d, `f${f}.bin`);
          await writeColumns(file, { kind: 'labelled-pairs', plan: 'plan', meta: {} }, { a: col(), b: col(), sim: col(), pstart }, { block: 256 });
          files.push(file);
        }
        for (let g = 0; g < G; g++) {
          const want = groupRows({ files, kind: 'labelled-pairs', plan: 'plan' }, g, ['a', 'b', 'sim']);
          const got = { a: [] as number[], b: [] as number[], sim: [] as number[] };
          forEachGroupChunk({ files, kind: 'labelled-pairs', plan: 'plan', g, columns: ['a', 'b', 'sim'], chunk }, (r, n) => {
            assert.ok(n >= 1 && n <= chunk);
            for (let i = 0; i < n; i++) (got.a.push(r.a[i]!), got.b.push(r.b[i]!), got.sim.push(r.sim[i]!));
          });
          assert.deepEqual(got, { a: Array.from(want.a), b: Array.from(want.b), sim: Array.from(want.sim) });
          assert.equal(groupRowCount({ files, kind: 'labelled-pairs', plan: 'plan' }, g), want.a.length);
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('spill limits', () => {
  it("follow the task-memory budget, and a test's forced rows override it", () => {
    assert.deepEqual(spillLimits(undefined, undefined), { pairs: DEFAULT_SPILL_PAIRS, rows: DEFAULT_SPILL_PAIRS });
    assert.equal(spillLimits(2 ** 30, undefined).pairs, Math.floor(2 ** 30 / 2 / 72));
    assert.equal(spillLimits(1, undefined).pairs, 65536);
    assert.deepEqual(spillLimits(2 ** 30, 0), { pairs: 0, rows: 1 });
    assert.deepEqual(spillLimits(undefined, 12), { pairs: 12, rows: 12 });
  });
});
