/**
 * LSH candidate generation from band keys (src/lsh/candidates.ts) against a plain reference written
 * here with Maps: the same distinct pairs, the same bucket counters and the same limit behaviour,
 * for corpora small enough to use one table and large enough to be partitioned by key bits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  candidatesFromBandKeys,
  candidatesFromBuckets,
  collectSharedBuckets,
  docMajorKeys,
  type BandKeyTable,
  type SharedBuckets,
} from '../../src/lsh/candidates.js';
import type { PairSet } from '../../src/lsh/pairSet.js';
import { BandKeyColumns } from '../../src/lsh/bandKeyColumns.js';
import { SignPool } from '../../src/parallel/signPool.js';
import { BucketTable } from '../../src/lsh/bucketTable.js';
import { TooManyPairsError } from '../../src/lsh/tooManyPairs.js';
import { firstOccurrences } from '../../src/lsh/firstOccurrences.js';
import { groupBySecond, groupsFromBuckets, type SecondGroups } from '../../src/lsh/secondGroups.js';
import { joinRanges } from '../../src/lsh/joinRanges.js';
import { forEachRowBucket } from '../../src/lsh/rowBuckets.js';

interface Keys {
  hi: Uint32Array;
  lo: Uint32Array;
  present: Uint8Array;
  n: number;
  bands: number;
}

/** Keys with planted copies: a copy takes its source's key in each band with probability `share`. */
function plant(n: number, bands: number, seed: number, copyRate: number, share: number, absent: number): Keys {
  let s = seed >>> 0 || 1;
  const rnd = () => (s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
  const hi = new Uint32Array(n * bands);
  const lo = new Uint32Array(n * bands);
  const present = new Uint8Array(n);
  for (let d = 0; d < n; d++) {
    present[d] = rnd() < absent ? 0 : 1;
    const src = d > 0 && rnd() < copyRate ? Math.floor(rnd() * d) : -1;
    for (let b = 0; b < bands; b++) {
      const i = d * bands + b;
      if (src >= 0 && rnd() < share) {
        hi[i] = hi[src * bands + b]!;
        lo[i] = lo[src * bands + b]!;
      } else {
        // Few distinct hi values, so keys that differ only in hi are common too.
        hi[i] = Math.floor(rnd() * 4);
        lo[i] = Math.floor(rnd() * 2 ** 32);
      }
    }
  }
  return { hi, lo, present, n, bands };
}

/** The reference: buckets per band by Map, repeated member lists skipped by their text. */
function reference(k: Keys) {
  const seen = new Set<string>();
  const pairs = new Set<string>();
  let shared = 0;
  let repeated = 0;
  let largest = 0;
  let bound = 0;
  for (let b = 0; b < k.bands; b++) {
    const buckets = new Map<string, number[]>();
    for (let d = 0; d < k.n; d++) {
      if (!k.present[d]) continue;
      const key = `${k.hi[d * k.bands + b]}:${k.lo[d * k.bands + b]}`;
      const list = buckets.get(key);
      if (list) list.push(d);
      else buckets.set(key, [d]);
    }
    for (const members of buckets.values()) {
      if (members.length < 2) continue;
      shared++;
      largest = Math.max(largest, members.length);
      const id = members.join(',');
      if (seen.has(id)) {
        repeated++;
        continue;
      }
      seen.add(id);
      bound += (members.length * (members.length - 1)) / 2;
      for (let i = 0; i < members.length; i++) for (let j = i + 1; j < members.length; j++) pairs.add(`${members[i]},${members[j]}`);
    }
  }
  return { pairs, stats: { sharedBuckets: shared, repeatedBuckets: repeated, largestBucket: largest, candidates: pairs.size }, bound };
}

/** Documents [d, d + m) of document-major keys, band by band (as a worker's reply holds them). */
function batchBandMajor(keys: Uint32Array, d: number, m: number, bands: number): Uint32Array {
  const out = new Uint32Array(m * bands);
  for (let i = 0; i < m; i++) for (let b = 0; b < bands; b++) out[b * m + i] = keys[(d + i) * bands + b]!;
  return out;
}

/** `k`'s keys appended to BandKeyColumns in uneven batches (so it grows, and band b starts past n), with a reserve after the first. */
function bandMajor(k: Keys): BandKeyTable {
  const cols = new BandKeyColumns(k.bands, false, 1);
  for (let d = 0, step = 1; d < k.n; d += step, step = (step * 3 + 1) % 97) {
    const m = Math.min(step, k.n - d);
    cols.append(k.present.subarray(d, d + m), batchBandMajor(k.hi, d, m, k.bands), batchBandMajor(k.lo, d, m, k.bands), m);
    // As the streaming pipeline does after its first range: room reserved from an estimate that
    // may fall short of the corpus or overshoot it.
    if (d === 0) cols.reserve([0, k.n >> 1, 2 * k.n][k.n % 3]!);
  }
  const t = cols.table();
  assert.equal(t.n, k.n);
  assert.ok(t.bandStride >= k.n);
  return t;
}

function sameBuckets(got: SharedBuckets, want: SharedBuckets): void {
  assert.deepEqual(got.stats, want.stats);
  assert.equal(got.count, want.count);
  assert.equal(got.bound, want.bound);
  assert.deepEqual(got.start.subarray(0, got.count + 1), want.start.subarray(0, want.count + 1));
  assert.deepEqual(got.members.subarray(0, got.start[got.count]), want.members.subarray(0, want.start[want.count]));
}

function samePairs(x: { pairs: PairSet; stats: object }, y: { pairs: PairSet; stats: object }): void {
  assert.deepEqual(x.stats, y.stats);
  assert.equal(x.pairs.size, y.pairs.size);
  assert.deepEqual(x.pairs.a.subarray(0, x.pairs.size), y.pairs.a.subarray(0, y.pairs.size));
  assert.deepEqual(x.pairs.b.subarray(0, x.pairs.size), y.pairs.b.subarray(0, y.pairs.size));
}

function sameGroups(got: SecondGroups, want: SecondGroups): void {
  assert.equal(got.count, want.count);
  assert.deepEqual(got.start, want.start);
  assert.deepEqual(got.first.subarray(0, got.count), want.first.subarray(0, want.count));
}

/**
 * Streaming verification's route: the ranges joined (`joinRanges`) and the pairs listed grouped by
 * second member (`groupsFromBuckets`) give the pair set's pairs grouped by `groupBySecond`, in the
 * same order, with the one-pass counters and bound; both limits hold exactly.
 */
function checkGroups(parts: SharedBuckets[], k: Keys, got: { pairs: PairSet; stats: object }, bound: number): void {
  const joined = joinRanges(parts);
  assert.equal(joined.bound, bound);
  assert.deepEqual({ ...joined.stats, candidates: got.pairs.size }, got.stats);
  const want = groupBySecond(got.pairs.a, got.pairs.b, got.pairs.size, k.n);
  sameGroups(groupsFromBuckets(joined, k.n), want);
  const count = got.pairs.size;
  sameGroups(groupsFromBuckets(joinRanges(parts, bound), k.n, count), want);
  if (count > 0) {
    assert.throws(
      () => groupsFromBuckets(joined, k.n, count - 1, 7),
      (e: unknown) => e instanceof TooManyPairsError && e.count === count && e.limit === count - 1 && e.largestBucket === 7,
    );
    assert.throws(() => joinRanges(parts, bound - 1), (e: unknown) => e instanceof TooManyPairsError && e.count === bound && e.limit === bound - 1);
  }
}

function check(k: Keys): void {
  const want = reference(k);
  const got = candidatesFromBandKeys(k);
  assert.deepEqual(got.stats, want.stats);
  const mine = new Set<string>();
  for (let i = 0; i < got.pairs.size; i++) {
    assert.ok(got.pairs.a[i]! < got.pairs.b[i]!);
    mine.add(`${got.pairs.a[i]},${got.pairs.b[i]}`);
  }
  assert.equal(mine.size, got.pairs.size, 'a pair listed twice');
  assert.deepEqual(mine, want.pairs);
  // The pair bound of the kept bucketing pass (checked before any pair is stored).
  const whole = collectSharedBuckets(docMajorKeys(k));
  assert.equal(whole.bound, want.bound);
  // The same buckets, in the same order, from band-major keys with spare capacity between bands;
  // the same pairs in the same order, and the same counters, from consecutive band ranges joined
  // in band order.
  sameBuckets(collectSharedBuckets(bandMajor(k)), whole);
  for (const cuts of [[1], [Math.floor(k.bands / 2)], [1, k.bands - 1], [1, 2, 3]]) {
    const ends = [0, ...cuts.filter((c) => c > 0 && c < k.bands), k.bands];
    const parts = ends.slice(1).map((end, i) => collectSharedBuckets(bandMajor(k), ends[i], end));
    const joined = joinRanges(parts);
    assert.equal(joined.bound, want.bound);
    samePairs(candidatesFromBuckets(joined, k.n), got);
    checkGroups(parts, k, got, want.bound);
  }
  checkGroups([whole], k, got, want.bound);
  // The limit: exactly the count passes, one less throws.
  const count = want.pairs.size;
  assert.equal(candidatesFromBandKeys(k, count).pairs.size, count);
  if (count > 0) {
    assert.throws(
      () => candidatesFromBandKeys(k, count - 1),
      (e: unknown) => e instanceof TooManyPairsError && e.what === 'candidates' && e.count > count - 1 && e.limit === count - 1,
    );
  }
}

test('property: candidates equal the Map reference on small corpora (one table)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 300 }),
      fc.integer({ min: 1, max: 20 }),
      fc.integer(),
      fc.double({ min: 0, max: 0.9, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.constantFrom(0, 0.1),
      (n, bands, seed, copyRate, share, absent) => check(plant(n, bands, seed, copyRate, share, absent)),
    ),
    { numRuns: 300, seed: 14 },
  );
});

test('candidates equal the Map reference on corpora large enough to be partitioned by key bits', () => {
  for (
    const [n, bands, seed] of [
      [70_000, 4, 1],
      [140_000, 3, 2],
      [66_000, 9, 3],
    ] as const
  ) {
    check(plant(n, bands, seed, 0.3, 0.6, 0.05));
  }
});

test('SignPool.bucketRanges: band ranges bucketed on 2 and 3 workers from shared memory, joined by joinRanges, give the pairs of one pass here (and its groups by second member); unshared keys are not sent', async () => {
  for (
    const [n, bands, seed] of [
      [70_000, 5, 4],
      [300, 2, 5],
    ] as const
  ) {
    const k = plant(n, bands, seed, 0.3, 0.6, 0.05);
    const want = candidatesFromBandKeys(k);
    const cols = new BandKeyColumns(bands, true);
    cols.append(k.present, batchBandMajor(k.hi, 0, n, bands), batchBandMajor(k.lo, 0, n, bands), n);
    for (const workers of [2, 3]) {
      const pool = new SignPool({ workers });
      try {
        const ranges = pool.bucketRanges(cols.table(), 0);
        assert.ok(ranges && ranges.length === Math.min(2 * workers, bands));
        const parts = await Promise.all(ranges);
        samePairs(candidatesFromBuckets(joinRanges(parts), n), want);
        checkGroups(parts, k, want, collectSharedBuckets(cols.table()).bound);
        assert.equal(pool.bucketRanges(bandMajor(k), 0), undefined);
        assert.equal(pool.bucketRanges(cols.table()), undefined, 'fewer documents than the default minimum');
      } finally {
        await pool.close();
      }
    }
  }
});

test('joinRanges: a bound past maxBound throws before any pair is listed, for one range or several; candidatesFromBuckets: maxPairs counts distinct pairs', () => {
  const k = plant(3000, 6, 7, 0.4, 0.7, 0);
  const whole = candidatesFromBandKeys(k);
  const bound = collectSharedBuckets(docMajorKeys(k)).bound;
  const ranges = [0, 2, 4, 6].slice(1).map((to) => collectSharedBuckets(bandMajor(k), to - 2, to));
  assert.equal(candidatesFromBuckets(joinRanges(ranges, bound), k.n).pairs.size, whole.pairs.size);
  assert.throws(() => joinRanges(ranges, bound - 1), (e: unknown) => e instanceof TooManyPairsError && e.count === bound && e.limit === bound - 1);
  const one = ranges[0]!;
  assert.equal(joinRanges([one], one.bound).bound, one.bound);
  assert.throws(() => joinRanges([one], one.bound - 1), (e: unknown) => e instanceof TooManyPairsError && e.count === one.bound && e.limit === one.bound - 1);
  const joined = joinRanges(ranges);
  assert.equal(candidatesFromBuckets(joined, k.n, whole.pairs.size).pairs.size, whole.pairs.size);
  assert.throws(
    () => candidatesFromBuckets(joined, k.n, whole.pairs.size - 1),
    (e: unknown) => e instanceof TooManyPairsError && e.limit === whole.pairs.size - 1,
  );
});

test('firstOccurrences: marks exactly the first of each digest, at any size (partitioned or not) and with colliding halves', () => {
  const ref = (hi: Int32Array, lo: Int32Array): Uint8Array => {
    const seen = new Set<string>();
    return Uint8Array.from(hi, (h, i) => (seen.has(`${h},${lo[i]}`) ? 0 : (seen.add(`${h},${lo[i]}`), 1)));
  };
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 7 })), { maxLength: 300 }), (xs) => {
      // Few distinct halves: equal his with different los, and the reverse, share slots.
      const hi = Int32Array.from(xs, ([h]) => h * 0x20000001);
      const lo = Int32Array.from(xs, ([, l]) => l * 0x10000);
      assert.deepEqual(firstOccurrences(hi, lo, xs.length), ref(hi, lo));
    }),
  );
  // Past 8192 digests they are partitioned by hi's top bits; repeats a few thousand places apart.
  for (const count of [8192, 50_000]) {
    let s = count;
    const rnd = (): number => (s = (Math.imul(s, 1103515245) + 12345) | 0);
    const hi = new Int32Array(count);
    const lo = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const j = i > 0 && (rnd() & 3) === 0 ? Math.max(0, i - 1 - ((rnd() >>> 1) % 5000)) : -1;
      hi[i] = j >= 0 ? hi[j]! : rnd();
      lo[i] = j >= 0 && (rnd() & 7) !== 0 ? lo[j]! : (rnd() >>> 11) & 7;
    }
    assert.deepEqual(firstOccurrences(hi, lo, count), ref(hi, lo));
  }
});

test('BucketTable: from a tiny capacity (so it grows), buckets and their members equal a Map reference, in creation order, across clears; shared() lists the buckets of ≥ 2 in that order', () => {
  fc.assert(
    fc.property(fc.array(fc.array(fc.tuple(fc.nat({ max: 40 }), fc.nat({ max: 3 })), { maxLength: 300 }), { minLength: 1, maxLength: 4 }), (rounds) => {
      const table = new BucketTable(1);
      for (const keys of rounds) {
        table.clear();
        const want = new Map<string, number[]>();
        keys.forEach(([lo, hi], doc) => {
          // Low bits collide on purpose: keys differing only in hi share a home slot.
          table.add(hi, lo * 0x10000, doc);
          const k = `${hi},${lo}`;
          if (!want.has(k)) want.set(k, []);
          want.get(k)!.push(doc);
        });
        const got: number[][] = [];
        for (let k = 0; k < table.bucketCount; k++) {
          const members: number[] = [];
          for (let d = table.headAt(k); d !== -1; d = table.next[d]!) members.unshift(d);
          assert.equal(members.length, table.sizeAt(k));
          got.push(members);
        }
        assert.deepEqual(got, [...want.values()]);
        assert.equal(table.bucketCount, want.size);
        // The shared buckets alone, in the same order.
        assert.deepEqual(
          [...table.shared()].map((k) => got[k]),
          got.filter((m) => m.length >= 2),
        );
      }
    }),
    { numRuns: 200, seed: 41 },
  );
});

// The sharded join's grouping of mixed-band rows (src/lsh/rowBuckets.ts) against a Map: the same
// groups, each in ascending row order, with small and large inputs (one part per band, and parts
// split by key bits) and keys that collide in hi or lo alone.
test('forEachRowBucket groups rows by (band, hi, lo) as a Map does, rows ascending', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 0, max: 60_000 }),
      fc.integer({ min: 1, max: 400 }),
      fc.integer(),
      (bands, n, distinct, seed) => {
        let x = seed >>> 0;
        const rnd = (): number => (x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0);
        const pool = Array.from({ length: distinct }, () => [rnd(), rnd()] as const);
        const B = new Uint32Array(n);
        const H = new Uint32Array(n);
        const L = new Uint32Array(n);
        for (let i = 0; i < n; i++) {
          B[i] = rnd() % bands;
          // Mostly unique keys, some drawn from a small pool (shared), some sharing only hi or only lo.
          const r = rnd() % 10;
          const [h, l] = r < 2 ? pool[rnd() % distinct]! : [rnd(), rnd()];
          H[i] = r === 2 ? pool[0]![0] : h;
          L[i] = r === 3 ? pool[0]![1] : l;
        }
        const want = new Map<string, number[]>();
        for (let i = 0; i < n; i++) {
          const k = `${B[i]}:${H[i]}:${L[i]}`;
          const g = want.get(k);
          if (g) g.push(i);
          else want.set(k, [i]);
        }
        const expected = [...want.values()].filter((g) => g.length > 1).map((g) => g.join(',')).sort();
        const got: string[] = [];
        forEachRowBucket({ band: B, hi: H, lo: L, bands }, (members, size) => got.push(Array.from(members.subarray(0, size)).join(',')));
        assert.deepEqual(got.sort(), expected);
      },
    ),
    { numRuns: 60, seed: 36 },
  );
});
