/**
 * Test helper: the drawn corpora of the spans tests (documents from a small pool of repeated lines,
 * paragraphs and sentences, or of a few words, and the options), and the check of a
 * {@link dedupSpans} answer against the brute-force oracle (./spansOracle.ts).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { SpansResult } from '../../src/spans/dedupSpans.js';
import type { OracleOptions, spansOracle } from './spansOracle.js';

/** Pieces that repeat: ASCII, case and spacing variants (equal after the default normalization), CJK, astral, blank. */
const POOL = [
  'Accept all cookies.',
  'accept  ALL cookies.',
  'Subscribe to our newsletter!',
  '我喜欢猫。',
  '他喜欢狗！你好吗？',
  'Emoji 😀 here. And 𝒜stral.',
  'Unique words appear rarely',
  '   ',
  '',
  'Ünïcödé — ok?',
  'Copyright 2024 Example Inc. All rights reserved.',
  // Longer than the walker's first key buffer (256 code units).
  `Long terms: ${'the service is provided as is, '.repeat(12)}end.`,
];
const SEPS = ['\n', '\r\n', '\n\n', '\r\n\r\n', '\n \n', ' '];

export const doc = fc.array(fc.tuple(fc.integer({ min: 0, max: POOL.length - 1 }), fc.integer({ min: 0, max: SEPS.length - 1 })), {
  minLength: 0,
  maxLength: 8,
})
  .chain((parts) => fc.boolean().map((finalBreak) => parts.map(([p, s], i) => POOL[p]! + (i + 1 < parts.length || finalBreak ? SEPS[s]! : '')).join('')));

export const optionsArb: fc.Arbitrary<OracleOptions> = fc.record({
  unit: fc.constantFrom('line' as const, 'paragraph' as const, 'sentence' as const, 'substring' as const),
  window: fc.integer({ min: 1, max: 3 }),
  minLength: fc.integer({ min: 1, max: 5 }),
  bytes: fc.boolean(),
  minDocs: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  minUnitWords: fc.integer({ min: 0, max: 3 }),
  minDocWords: fc.integer({ min: 0, max: 3 }),
  normalize: fc.constantFrom(undefined, { preset: 'none' as const }),
}).map(({ bytes, ...o }) =>
  // Substrings counted in bytes: longer minimums, and no minimum words per unit (refused there).
  o.unit === 'substring' && bytes ? { ...o, lengthUnit: 'bytes' as const, minLength: o.minLength * 8, minUnitWords: 0 } : o
);

/** Documents of a few words, so that windows of 2–6 words repeat across and inside documents. */
export const wordsDoc = fc.array(fc.constantFrom('the', 'The', 'cat', 'sat', 'on', 'mat', 'Ünï', '猫', 'dog,', 'ran.', '😀', '\n', '  '), { maxLength: 30 })
  .map((
    ws,
  ) => ws.join(' '));

/** Asserts that `got` is the oracle's answer `want`: texts, cuts, audit and summary. */
export function assertOracle(got: SpansResult, want: ReturnType<typeof spansOracle>): void {
  got.documents.forEach((d, i) => {
    const w = want.docs[i]!;
    assert.equal(d.text, w.text, `doc ${i} text`);
    assert.equal(d.changed, w.changed, `doc ${i} changed`);
    assert.equal(d.dropped, w.dropped, `doc ${i} dropped`);
    assert.deepEqual(d.removed, w.removed, `doc ${i} cuts`);
  });
  assert.deepEqual(got.audit, want.audit);
  const s = got.summary;
  assert.deepEqual([s.units, s.distinctUnits, s.repeatedUnits], [want.units, want.distinct, want.top.length]);
  assert.deepEqual(s.top, want.top.slice(0, 10));
  assert.equal(s.unitsRemoved, want.audit.length);
  assert.equal(s.documentsDropped, want.docs.filter((d) => d.dropped).length);
  assert.equal(s.bytesRemoved, want.docs.reduce((n, d) => n + d.removed.reduce((m, r) => m + r.byteEnd - r.byteStart, 0), 0));
}
