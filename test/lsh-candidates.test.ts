/**
 * LSH candidate generation from band keys (src/lsh/candidates.ts) against a plain reference written
 * here with Maps: the same distinct pairs, the same bucket counters and the same limit behaviour,
 * for corpora small enough to use one table and large enough to be partitioned by key bits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { candidatesFromBandKeys, collectSharedBuckets } from '../src/lsh/candidates.js';
import { BucketTable } from '../src/lsh/bucketTable.js';
import { TooManyPairsError } from '../src/lsh/tooManyPairs.js';
import { DigestSet } from '../src/lsh/digestSet.js';

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

function check(k: Keys): void {
  const want = reference(k);
  const got = candidatesFromBandKeys(k.hi, k.lo, k.present, k.n, k.bands);
  assert.deepEqual(got.stats, want.stats);
  const mine = new Set<string>();
  for (let i = 0; i < got.pairs.size; i++) {
    assert.ok(got.pairs.a[i]! < got.pairs.b[i]!);
    mine.add(`${got.pairs.a[i]},${got.pairs.b[i]}`);
  }
  assert.equal(mine.size, got.pairs.size, 'a pair listed twice');
  assert.deepEqual(mine, want.pairs);
  // The pair bound of the kept bucketing pass (checked before any pair is stored).
  assert.equal(collectSharedBuckets(k.hi, k.lo, k.present, k.n, k.bands).bound, want.bound);
  // The limit: exactly the count passes, one less throws.
  const count = want.pairs.size;
  assert.equal(candidatesFromBandKeys(k.hi, k.lo, k.present, k.n, k.bands, count).pairs.size, count);
  if (count > 0) {
    assert.throws(
      () => candidatesFromBandKeys(k.hi, k.lo, k.present, k.n, k.bands, count - 1),
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
  for (const [n, bands, seed] of [
    [70_000, 4, 1],
    [140_000, 3, 2],
    [66_000, 9, 3],
  ] as const) {
    check(plant(n, bands, seed, 0.3, 0.6, 0.05));
  }
});

test('DigestSet: a pair is new once, whatever the table size', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 7 })), { maxLength: 300 }), (xs) => {
      const set = new DigestSet(1);
      const ref = new Set<string>();
      for (const [h, l] of xs) assert.equal(set.add(h * 0x20000001, l), !ref.has(`${h},${l}`) && ref.add(`${h},${l}`) !== undefined);
      assert.equal(set.size, ref.size);
    }),
  );
});

test('BucketTable: from a tiny capacity (so it grows), buckets and their members equal a Map reference, in creation order, across clears', () => {
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
        table.forEachBucket(1, (head, size) => {
          const members: number[] = [];
          for (let d = head; d !== -1; d = table.next[d]!) members.unshift(d);
          assert.equal(members.length, size);
          got.push(members);
        });
        assert.deepEqual(got, [...want.values()]);
        assert.equal(table.bucketCount, want.size);
      }
    }),
    { numRuns: 200, seed: 41 },
  );
});
