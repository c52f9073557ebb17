/**
 * commonPassages: exact offsets in both texts, folding, greedy non-overlapping tiling, and (as a
 * property) agreement with a dynamic-programming longest common substring.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { commonPassages, type Passage } from '../../src/index.js';

/** The fold of the library, for checking: lowercase ASCII/BMP letters, whitespace runs → one space. */
function fold(s: string): string {
  return s.replace(/\s+/g, ' ').replace(/[^\s]/g, (c) => (c.toLowerCase().length === 1 ? c.toLowerCase() : c));
}

/** Longest common substring length by DP (O(n·m), fine for short strings). */
function lcs(a: string, b: string): number {
  let best = 0;
  let prev = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const cur = new Int32Array(b.length + 1);
    for (let j = 1; j <= b.length; j++) {
      if (a.charCodeAt(i - 1) === b.charCodeAt(j - 1)) {
        cur[j] = prev[j - 1]! + 1;
        if (cur[j]! > best) best = cur[j]!;
      }
    }
    prev = cur;
  }
  return best;
}

function checkInvariants(a: string, b: string, passages: Passage[], minLength: number, folded: boolean): void {
  const usedA = new Uint8Array(a.length);
  const usedB = new Uint8Array(b.length);
  for (const p of passages) {
    const sa = a.slice(p.aStart, p.aEnd);
    const sb = b.slice(p.bStart, p.bEnd);
    assert.equal(p.text, sa);
    if (folded) assert.equal(fold(sa), fold(sb));
    else assert.equal(sa, sb);
    assert.ok(p.length >= minLength, `passage of ${p.length} < ${minLength}`);
    for (let i = p.aStart; i < p.aEnd; i++) {
      assert.equal(usedA[i], 0, `overlap in a at ${i}`);
      usedA[i] = 1;
    }
    for (let i = p.bStart; i < p.bEnd; i++) {
      assert.equal(usedB[i], 0, `overlap in b at ${i}`);
      usedB[i] = 1;
    }
  }
  for (let i = 1; i < passages.length; i++) assert.ok(passages[i - 1]!.length >= passages[i]!.length, 'longest first');
}

test('passages: two re-posted ads share their passages at the right offsets in both', () => {
  const a = 'Affittasi bilocale arredato in zona Prati, vicino metro Ottaviano. Euro 900 al mese, spese incluse.';
  const b = 'AFFITTASI bilocale arredato in zona Prati,   vicino metro Ottaviano. Euro 950 al mese, spese incluse. Niente agenzie.';
  const r = commonPassages(a, b, { minLength: 10 });
  checkInvariants(a, b, r.passages, 10, true);
  assert.equal(r.passages.length, 2);
  const [p1, p2] = r.passages;
  // Case and the extra spaces are folded away; the price splits the ad in two passages.
  assert.equal(p1!.text, 'Affittasi bilocale arredato in zona Prati, vicino metro Ottaviano. Euro 9');
  assert.equal(p1!.aStart, 0);
  assert.equal(p1!.bStart, 0);
  assert.equal(b.slice(p1!.bStart, p1!.bEnd), 'AFFITTASI bilocale arredato in zona Prati,   vicino metro Ottaviano. Euro 9');
  assert.equal(p2!.text, '0 al mese, spese incluse.');
  assert.equal(b.slice(p2!.bStart, p2!.bEnd), '0 al mese, spese incluse.');
  assert.ok(r.coverageA > 0.95 && r.coverageA <= 1);
  assert.ok(r.coverageB < r.coverageA);
});

test('passages: moved blocks are found in both orders; exact folding when asked', () => {
  const x = 'the first block of text is here';
  const y = 'and a second, different block follows';
  const r = commonPassages(`${x} / ${y}`, `${y} | ${x}`, { minLength: 12 });
  assert.deepEqual(r.passages.map((p) => p.text).sort(), [x, y].sort());
  assert.deepEqual(commonPassages('Hello World again', 'hello world again', { fold: 'none', minLength: 5 }).passages.map((p) => p.text), [
    'orld again',
    'ello ',
  ]);
  assert.equal(commonPassages('short', 'short', { minLength: 6 }).passages.length, 0);
  assert.equal(commonPassages('', 'anything at all here', {}).passages.length, 0);
  assert.equal(commonPassages('abcdefghij'.repeat(5), 'abcdefghij'.repeat(5), { minLength: 5, maxPassages: 1 }).passages.length, 1);
  assert.throws(() => commonPassages('a', 'b', { minLength: 0 }), RangeError);
  assert.throws(() => commonPassages('a', 'b', { fold: 'x' as never }), RangeError);
});

test('passages: non-BMP text and repetitive text', () => {
  const a = 'emoji 😀😀 and more text that repeats 😀 here';
  const r = commonPassages(a, a, { minLength: 5 });
  assert.equal(r.passages.length, 1);
  assert.equal(r.passages[0]!.text, a);
  const rep = 'ab'.repeat(3000);
  const r2 = commonPassages(rep, rep.slice(1), { minLength: 20 });
  checkInvariants(rep, rep.slice(1), r2.passages, 20, true);
  assert.equal(r2.passages[0]!.length, rep.length - 1);
});

test('passages: the first passage is the longest common substring; invariants hold (property)', () => {
  const alphabet = fc.constantFrom('a', 'b', 'c', ' ', 'A', 'x');
  const str = (max: number) => fc.array(alphabet, { maxLength: max }).map((cs) => cs.join(''));
  fc.assert(
    fc.property(str(60), str(60), str(40), str(40), fc.integer({ min: 2, max: 12 }), (p, q, shared, tail, minLength) => {
      const a = p + shared + tail;
      const b = q + shared + p;
      const r = commonPassages(a, b, { minLength, fold: 'none' });
      checkInvariants(a, b, r.passages, minLength, false);
      const best = lcs(a, b);
      if (best >= minLength) assert.equal(r.passages[0]!.length, best);
      else assert.equal(r.passages.length, 0);
      const rf = commonPassages(a, b, { minLength });
      checkInvariants(a, b, rf.passages, minLength, true);
      const bestFolded = lcs(fold(a), fold(b));
      if (bestFolded >= minLength) assert.equal(rf.passages[0]!.length, bestFolded);
    }),
    { numRuns: 300, seed: 6 },
  );
});
