/**
 * Substrings counted in UTF-8 bytes (src/spans/byteWindows.ts, `--length-unit bytes`) against the
 * brute-force oracle, which walks every window of the corpus: so the anchors that thin out pass 1
 * are checked to lose no repeat. Documents of repeated words with odd characters (compatibility
 * characters that normalize to several code points, combining marks, astral ones, tabs, CRLF,
 * runs of whitespace), at minimum lengths small enough that windows repeat by chance too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dedupSpans } from '../../src/spans/dedupSpans.js';
import { AnchorCounts, ByteWindows } from '../../src/spans/byteWindows.js';
import { SpanDeduper } from '../../src/spans/deduper.js';
import { newUnits } from '../../src/spans/units.js';
import { spansOracle } from '../helpers/spansOracle.js';
import { assertOracle } from '../helpers/spansCorpus.js';

const PIECES = [
  'the',
  'The',
  'ﷺ',
  'ﷺﷺﷺﷺ',
  'cat',
  'sat',
  'ﬁne',
  'fine',
  'e\u0301',
  'é',
  'ΣΑΣ',
  '‥',
  '猫',
  '😀',
  'dog,',
  'ran.',
  '\t',
  '\r\n',
  '  ',
  ' \n ',
  '—',
];
const byteDoc = fc.array(fc.constantFrom(...PIECES), { maxLength: 24 }).map((ws) => ws.join(' '));
const normalizations = fc.constantFrom(
  undefined,
  { preset: 'none' as const },
  { preset: 'lowercase-collapse' as const },
  { stripPunctuation: true },
  { preset: 'none' as const, stripPunctuation: true },
  { stripDiacritics: true },
);

test('byte windows equal the oracle of every window: texts, cuts, audit, counts and top units (keep-first and --min-docs)', () => {
  fc.assert(
    fc.property(
      fc.array(byteDoc, { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 1, max: 40 }),
      fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      fc.integer({ min: 0, max: 2 }),
      normalizations,
      (texts, minLength, minDocs, minDocWords, normalize) => {
        const opts = { unit: 'substring' as const, lengthUnit: 'bytes' as const, minLength, minDocs, minDocWords, normalize };
        const ids = texts.map((_, i) => `d${i}`);
        assertOracle(dedupSpans(texts.map((text, i) => ({ id: ids[i]!, text })), opts), spansOracle(texts, ids, opts));
      },
    ),
    { numRuns: 400, seed: 52 },
  );
});

test('byte windows: a repeated passage is cut whole from its first character to its last; a shorter one stays', () => {
  const banner = 'This article was first published by Example News and is reproduced here with permission.';
  const r = dedupSpans([`Rome rents rise. ${banner}`, `Milan:  ${banner.toUpperCase()} Bye`, 'by Example News'], {
    unit: 'substring',
    lengthUnit: 'bytes',
    minLength: 40,
  });
  // The run of spaces before the passage is one space, as after "rise.": it goes with the passage.
  assert.deepEqual(r.documents.map((d) => d.text), [`Rome rents rise. ${banner}`, 'Milan: Bye', 'by Example News']);
  assert.deepEqual(r.audit.map((a) => [a.id, a.start, a.end, a.keptId, a.keptStart]), [['1', 6, 8 + banner.length, '0', 16]]);
});

test('anchors: the window a passage occurs in twice is walked, a window that occurs once is passed over; every window has an anchor', () => {
  const w = new ByteWindows({}, 100);
  assert.equal(w.gram, 25);
  const shared = 'x'.repeat(10) + ' the shared passage of more than a hundred bytes, word after word, with nothing else in it at all.';
  const docs = [
    `alpha beta gamma ${shared}`,
    `delta ${shared} epsilon`,
    'a document of its own, with no passage anyone else has, long enough for a window or two of its own, and then some more words.',
  ];
  const counts = new AnchorCounts();
  for (const d of docs) w.countAnchors(d, counts);
  const u = newUnits();
  const walked = docs.map((d) => {
    w.windows(d, u, counts);
    return [u.count, w.skipped];
  });
  assert.equal(walked[2]![0], 0, 'the unique document: no window walked');
  assert.ok(walked[2]![1]! > 0);
  const all = docs.map((d) => w.windows(d, u, undefined).count);
  walked.forEach(([n, skipped], i) => assert.equal(n! + skipped!, all[i], `document ${i}: walked and passed over are all its windows`));
  assert.ok(walked[0]![0]! > 0 && walked[1]![0]! > 0);
});

test('byte windows: options that do not apply are refused by name', () => {
  assert.throws(() => dedupSpans([], { unit: 'line', lengthUnit: 'bytes' }), /lengthUnit applies to substring units only/);
  assert.throws(() => dedupSpans([], { unit: 'substring', lengthUnit: 'chars' as never }), /unknown lengthUnit "chars"/);
  assert.throws(() => dedupSpans([], { unit: 'substring', lengthUnit: 'bytes', minUnitWords: 2 }), /minUnitWords does not apply/);
});

test('byte windows: texts that change between the anchor pass and pass 1 are an error, not a smaller answer', () => {
  const o = { unit: 'substring' as const, lengthUnit: 'bytes' as const, minLength: 20 };
  const a = ['a passage that repeats itself, a passage that repeats itself', 'another text'];
  // One letter changed (the same length, another normalized text), and a document fewer.
  for (const b of [['a passage that repeats itself, a passage that repeats itselx', 'another text'], [a[0]!]]) {
    const d = new SpanDeduper(o);
    for (const t of a) d.anchor(t);
    d.endAnchoring();
    for (const t of b) d.observe(t);
    assert.throws(() => d.endObserving(), /the input changed between the pass that counts anchors and pass 1/);
  }
  const d = new SpanDeduper(o);
  assert.throws(() => d.observe(a[0]!), /before their anchors were counted/);
});
