/**
 * {@link UnitTable} (src/spans/table.ts) against a `Map` over drawn hashes: ids in the order
 * units were first met, first occurrences, counts, document counts, `find`, `holds` (the table's, or
 * the check's once the table gave its index up) and the tag,
 * through the index's growth (a small table, or one reserved too small) and hashes that share
 * their high or low 32-bit half, or their home slot.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { UnitTable } from '../../src/spans/table.js';
import { FirstOffsets } from '../../src/spans/offsets.js';
import { UnitVerifier } from '../../src/spans/verify.js';

interface Model {
  id: number;
  firstDoc: number;
  firstPos: number;
  count: number;
  docs: number;
  lastDoc: number;
}

/** Hashes drawn from few values of each half, so that halves repeat across different hashes. */
const half = fc.oneof(fc.constantFrom(0, 1, 0x7fffffff, 0x80000000, 0xffffffff), fc.integer({ min: 0, max: 7 }), fc.nat({ max: 0xffffffff }));
const hash = fc.tuple(half, half);

/** Occurrences in document order: each document's (hash) list. */
const corpus = fc.array(fc.array(hash, { maxLength: 40 }), { minLength: 1, maxLength: 30 });

const setup = fc.record({
  sized: fc.oneof(
    fc.constant({ capacity: 16, reserve: undefined as [number, number, number] | undefined }),
    fc.record({
      capacity: fc.constantFrom(16, 64),
      reserve: fc.tuple(fc.integer({ min: 1, max: 200 }), fc.constantFrom(0.5, 0.75, 0.9), fc.integer({ min: 0, max: 400 })),
    }),
  ),
  // Before some documents, a growth to a projected number of units (as pass 1's growAhead does), past what is held or not.
  growFor: fc.array(fc.tuple(fc.nat({ max: 29 }), fc.integer({ min: 0, max: 600 })), { maxLength: 3 }),
});

test('UnitTable equals a Map over drawn hashes, through growth (by steps, or to a projected size) and shared halves', () => {
  fc.assert(
    fc.property(corpus, setup, (docs, { sized: s, growFor }) => {
      const t = new UnitTable(s.capacity);
      if (s.reserve) t.reserve(s.reserve[0], s.reserve[1], s.reserve[2]);
      const m = new Map<string, Model>();
      docs.forEach((hashes, doc) => {
        for (const [at, units] of growFor) if (at === doc) t.growFor(units);
        hashes.forEach(([hi, lo], pos) => {
          const key = `${hi}:${lo}`;
          let e = m.get(key);
          if (!e) m.set(key, e = { id: m.size, firstDoc: doc, firstPos: pos, count: 0, docs: 0, lastDoc: -1 });
          e.count++;
          if (e.lastDoc !== doc) (e.docs++, (e.lastDoc = doc));
          assert.equal(t.add(hi, lo, doc, pos), e.id);
          assert.equal(t.count(e.id), e.count);
        });
      });
      assert.equal(t.size, m.size);
      for (const [key, e] of m) {
        const [hi, lo] = key.split(':').map(Number) as [number, number];
        assert.equal(t.find(hi, lo), e.id);
        assert.ok(t.holds(e.id, hi, lo));
        assert.ok(!t.holds(e.id, (hi ^ 1) >>> 0, lo) && !t.holds(e.id, hi, (lo ^ 1) >>> 0));
        assert.equal(t.firstDoc(e.id), e.firstDoc);
        assert.equal(t.firstPos(e.id), e.firstPos);
        assert.equal(t.count(e.id), e.count);
        assert.equal(t.docs(e.id), e.docs);
      }
      // Hashes never added are not found.
      for (const [hi, lo] of [[3, 0x12345678], [0x9abcdef0, 5]] as const) if (!m.has(`${hi}:${lo}`)) assert.equal(t.find(hi, lo), -1);
      // The first document asked of a unit, and whether it is a given one.
      for (const e of m.values()) for (let d = -1; d <= docs.length; d++) assert.equal(t.firstIn(e.id, d), d === e.firstDoc);
      // The units counted once dropped (substring windows after pass 1): the others keep their order, renumbered, with their fields.
      const kept = [...m.entries()].filter(([, e]) => e.count > 1);
      if (growFor.length % 2 === 0) {
        t.dropSingles();
        assert.equal(t.size, kept.length);
        assert.equal(t.dropped, m.size - kept.length);
        kept.forEach(([key, e], id) => {
          const [hi, lo] = key.split(':').map(Number) as [number, number];
          assert.equal(t.find(hi, lo), id);
          assert.equal(t.firstDoc(id), e.firstDoc);
          assert.equal(t.firstPos(id), e.firstPos);
          assert.equal(t.count(id), e.count);
          assert.equal(t.docs(id), e.docs);
          for (let d = -1; d <= docs.length; d++) assert.equal(t.firstIn(id, d), d === e.firstDoc);
        });
        for (const [key, e] of m) if (e.count === 1) assert.equal(t.find(...(key.split(':').map(Number) as [number, number])), -1);
      } else {
        // The index given up after pass 1 (listed units): the check holds the repeated units' hashes; nothing is found by hash.
        const v = new UnitVerifier(t);
        v.takeIndex();
        for (const [key, e] of m) {
          const [hi, lo] = key.split(':').map(Number) as [number, number];
          assert.equal(v.holds(e.id, hi, lo), e.count > 1);
          assert.ok(!v.holds(e.id, (hi ^ 1) >>> 0, lo) && !v.holds(e.id, hi, (lo ^ 1) >>> 0));
        }
        assert.throws(() => t.find(0, 0), /gave its index up/);
      }
      // The tag and the counts are the record's own.
      for (let i = 0; i < t.size; i++) t.setTag(i, i + 1);
      for (let i = 0; i < t.size; i++) assert.equal(t.tag(i), i + 1);
    }),
    { numRuns: 300, seed: 5051 },
  );
});

test('UnitTable: many hashes sharing one high half, or one low half, or one home slot, in a table that grows from 16 slots', () => {
  const t = new UnitTable(16);
  const m = new Map<string, number>();
  const add = (hi: number, lo: number): void => {
    const key = `${hi >>> 0}:${lo >>> 0}`;
    if (!m.has(key)) m.set(key, m.size);
    assert.equal(t.add(hi, lo, 0, m.get(key)!), m.get(key));
  };
  for (let j = 0; j < 3000; j++) {
    add(0xdeadbeef, j * 7919); // one high half
    add(j * 104729, 0xcafef00d); // one low half
    add(j, j); // hi ^ lo: the same home for all (hi ^ (lo >>> 15)) when j < 2¹⁵
  }
  assert.equal(t.size, m.size);
  for (const [key, id] of m) {
    const [hi, lo] = key.split(':').map(Number) as [number, number];
    assert.equal(t.find(hi, lo), id);
    assert.equal(t.firstPos(id), id);
    assert.equal(t.count(id), 1);
  }
  assert.equal(t.find(0xdeadbeef, 1), -1);
});

test('FirstOffsets equals two plain arrays: passages of small steps, jumps back and far, every 64th unit, and units set out of order', () => {
  const step = fc.oneof(
    fc.integer({ min: 0, max: 4 }),
    fc.integer({ min: 0, max: 254 }),
    fc.integer({ min: 255, max: 10_000 }),
    fc.integer({ min: -5000, max: -1 }),
  );
  fc.assert(
    fc.property(fc.array(fc.tuple(step, step), { minLength: 1, maxLength: 400 }), fc.nat({ max: 20 }), (steps, swaps) => {
      const n = steps.length;
      const cp: number[] = [];
      const byte: number[] = [];
      let c = 0;
      let b = 0;
      for (const [dc, db] of steps) {
        c = Math.max(0, c + dc);
        b = Math.max(0, b + db);
        cp.push(c);
        byte.push(b);
      }
      // Mostly in order, as the check sets them; a few units swapped with the next.
      const order = [...Array(n).keys()];
      for (let j = 0; j < swaps && n > 1; j++) {
        const x = (j * 37) % (n - 1);
        [order[x], order[x + 1]] = [order[x + 1]!, order[x]!];
      }
      const f = new FirstOffsets(n);
      for (const r of order) f.set(r, cp[r]!, byte[r]!);
      for (let r = 0; r < n; r++) {
        assert.equal(f.cp(r), cp[r]);
        assert.equal(f.byte(r), byte[r]);
      }
    }),
    { numRuns: 300, seed: 5052 },
  );
});
