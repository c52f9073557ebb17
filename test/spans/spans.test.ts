/**
 * Span deduplication in memory (src/spans/, `dedupSpans`) against a brute-force oracle
 * (test/helpers/spansOracle.ts) on random documents built from a small pool of repeated lines,
 * paragraphs and sentences: the kept texts, the ranges cut and the audit are the oracle's, for
 * every unit and both modes; and the odd bytes (CRLF, no final newline, astral characters, CJK).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dedupSpans } from '../../src/spans/dedupSpans.js';
import { selectTop } from '../../src/spans/selectTop.js';
import { splitUnits, newUnits } from '../../src/spans/units.js';
import { OffsetCursor } from '../../src/spans/offsets.js';
import { spansOracle } from '../helpers/spansOracle.js';
import { assertOracle, doc, optionsArb, wordsDoc } from '../helpers/spansCorpus.js';

test('dedupSpans equals the brute-force oracle: kept texts, cuts and audit (every unit, keep-first and --min-docs)', () => {
  fc.assert(
    fc.property(fc.array(doc, { minLength: 1, maxLength: 8 }), optionsArb, (texts, o) => {
      const opts = { ...o, window: o.unit === 'sentence' ? o.window : undefined, minLength: o.unit === 'substring' ? o.minLength : undefined };
      const ids = texts.map((_, i) => `d${i}`);
      assertOracle(dedupSpans(texts.map((text, i) => ({ id: ids[i]!, text })), opts), spansOracle(texts, ids, opts));
    }),
    { numRuns: 300, seed: 50 },
  );
});

test('substring units equal the oracle on documents of a few words: repeats of L words or more cut whole, one audit row per run', () => {
  fc.assert(
    fc.property(
      fc.array(wordsDoc, { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 1, max: 6 }),
      fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      fc.integer({ min: 0, max: 2 }),
      (texts, minLength, minDocs, minDocWords) => {
        const opts = { unit: 'substring' as const, minLength, minDocs, minDocWords };
        const ids = texts.map((_, i) => `d${i}`);
        const got = dedupSpans(texts.map((text, i) => ({ id: ids[i]!, text })), opts);
        const want = spansOracle(texts, ids, opts);
        got.documents.forEach((d, i) => {
          assert.equal(d.text, want.docs[i]!.text, `doc ${i} text`);
          assert.deepEqual(d.removed, want.docs[i]!.removed, `doc ${i} cuts`);
          assert.equal(d.dropped, want.docs[i]!.dropped, `doc ${i} dropped`);
        });
        assert.deepEqual(got.audit, want.audit);
        assert.deepEqual(got.summary.top, want.top.slice(0, 10));
        assert.equal(got.summary.unitsRemoved, want.audit.length);
      },
    ),
    { numRuns: 500, seed: 51 },
  );
});

test('substring units: a long repeat is cut whole in a later document and kept in the first; shorter repeats stay', () => {
  const banner = 'This article was first published by Example News and is reproduced here with permission of the editors';
  const r = dedupSpans([`Rome rents rise. ${banner}.`, `Milan rents fall. ${banner}!`, 'Example News and is reproduced'], { unit: 'substring', minLength: 8 });
  assert.equal(r.documents[0]!.text, `Rome rents rise. ${banner}.`);
  assert.equal(r.documents[1]!.text, 'Milan rents fall. !');
  assert.equal(r.documents[2]!.text, 'Example News and is reproduced', 'five words: under the minimum length');
  assert.deepEqual(r.audit.map((a) => [a.id, a.start, a.end, a.keptId, a.keptStart]), [['1', 18, 18 + banner.length, '0', 17]]);
});

test('units: CRLF lines keep their CR out of the compared text and in the cut; a last line without a break; blank lines are no units', () => {
  const t = 'a\r\n\r\nb\n  \nc';
  const u = splitUnits(t, 'line', 3, newUnits());
  assert.deepEqual([u.start, u.end, u.textStart, u.textEnd], [[0, 5, 10], [3, 7, 11], [0, 5, 10], [1, 6, 11]]);
  const p = splitUnits('p1 l1\r\np1 l2\r\n\r\np2\n\n\n', 'paragraph', 3, newUnits());
  assert.deepEqual([p.start, p.end, p.textStart, p.textEnd], [[0, 16], [16, 21], [0, 16], [12, 18]]);
});

test('units: Unicode sentence windows, CJK full stops included', () => {
  const t = '我喜欢猫。他喜欢狗！你好吗？';
  const u = splitUnits(t, 'sentence', 2, newUnits());
  assert.deepEqual(Array.from({ length: u.count }, (_, k) => t.slice(u.start[k], u.end[k])), ['我喜欢猫。他喜欢狗！', '他喜欢狗！你好吗？']);
  const one = splitUnits('Only one. ', 'sentence', 3, newUnits());
  assert.equal(one.count, 1);
});

test('offsets: code points and UTF-8 bytes of astral, CJK and lone surrogates', () => {
  const t = 'a😀我\ud800b';
  const c = new OffsetCursor().reset(t);
  const at = (i: number): [number, number] => (c.at(i), [c.cp, c.byte]);
  assert.deepEqual([at(1), at(3), at(4), at(5), at(6), at(0)], [[1, 1], [2, 5], [3, 8], [4, 11], [5, 12], [0, 0]]);
});

test('keep-first inside one document, boilerplate mode everywhere, and the top units', () => {
  const r = dedupSpans(['x\nfooter\nfooter\n', 'y\nfooter\n', 'z\n'], { unit: 'line' });
  assert.deepEqual(r.documents.map((d) => d.text), ['x\nfooter\n', 'y\n', 'z\n']);
  assert.deepEqual(r.summary.top, [{ text: 'footer', count: 3, docs: 2 }]);
  const b = dedupSpans(['x\nfooter\n', 'y\nfooter\n', 'footer'], { unit: 'line', minDocs: 3 });
  assert.deepEqual(b.documents.map((d) => [d.text, d.dropped]), [['x\n', false], ['y\n', false], ['', true]]);
  assert.equal(b.audit[0]!.keptId, null);
  assert.throws(() => dedupSpans([], { unit: 'bogus' as never }), /unknown unit "bogus" \(expected line, paragraph, sentence or substring\)/);
  assert.throws(() => dedupSpans([], { unit: 'line', minLength: 5 }), /minLength applies to substring units only/);
  assert.throws(() => dedupSpans([], { unit: 'substring', minLength: 0 }), /minLength must be an integer ≥ 1/);
});

test('selectTop: the k first of a total order, as a full sort gives them, for every k', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 200 }), fc.integer({ min: 0, max: 60 }), (xs, k) => {
      const before = (a: number, b: number): number => xs[b]! - xs[a]! || a - b;
      const want = Array.from({ length: xs.length }, (_, i) => i).sort(before).slice(0, k);
      assert.deepEqual(selectTop(xs.length, k, before), want);
    }),
    { numRuns: 300, seed: 53 },
  );
});

test('substring units of 9-16 words, longer than an anchor gram of 8: equal to the oracle, which walks every window', () => {
  const words = fc.array(fc.constantFrom('the', 'The', 'cat', 'sat', 'on', 'mat', 'Ünï', '猫', 'dog,', 'ran.', '\n'), { maxLength: 60 }).map((ws) =>
    ws.join(' ')
  );
  fc.assert(
    fc.property(
      fc.array(words, { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 9, max: 16 }),
      fc.option(fc.integer({ min: 2, max: 3 }), { nil: undefined }),
      (texts, minLength, minDocs) => {
        // A long document repeated whole: its windows are walked, the others mostly not.
        const all = [...texts, texts[0]!];
        const opts = { unit: 'substring' as const, minLength, minDocs };
        const ids = all.map((_, i) => `d${i}`);
        assertOracle(dedupSpans(all.map((text, i) => ({ id: ids[i]!, text })), opts), spansOracle(all, ids, opts));
      },
    ),
    { numRuns: 300, seed: 54 },
  );
});
