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
import { ByteWindows } from '../../src/spans/byteWindows.js';
import { AnchorCounts, AnchorRuns } from '../../src/spans/anchors.js';
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

test('anchor runs: the walked windows of each document are those its anchors give, a document with none unread, a changed one refused', () => {
  const w = new ByteWindows({}, 60);
  const shared = 'the shared passage, word after word, long enough for several windows of sixty bytes or so.';
  const docs = [
    `alpha ${shared} beta`,
    'nothing shared here at all, only words of its own, enough for a window or two of them.',
    `${shared}\u00e9\ud83d\ude00 gamma`,
    'short',
  ];
  const counts = new AnchorCounts();
  const runs = new AnchorRuns();
  for (const d of docs) w.countAnchors(d, counts, runs);
  const u = newUnits();
  // What the counts give, before finish() spends them.
  const wants = docs.map((d) => {
    const want = w.windows(d, u, counts);
    return { hashes: Array.from(w.windowHash.subarray(0, 2 * want.count)), starts: want.start.slice(0, want.count), skipped: w.skipped };
  });
  runs.finish(counts);
  assert.equal(counts.distinct, 0, 'finish() spends the counts');
  let walked = 0;
  docs.forEach((d, i) => {
    const { hashes, starts, skipped } = wants[i]!;
    const got = w.windowsOf(i, d, u, runs);
    assert.deepEqual(
      [got.start.slice(0, got.count), Array.from(w.windowHash.subarray(0, 2 * got.count)), w.skipped],
      [starts, hashes, skipped],
      `document ${i}`,
    );
    assert.equal(runs.walkedIn(i), got.count);
    assert.equal(runs.windowsIn(i), got.count + w.skipped);
    walked += got.count;
  });
  assert.equal(runs.walked, walked);
  assert.ok(runs.walkedIn(0) > 0 && runs.walkedIn(1) === 0);
  assert.ok(runs.distinctAtLeast > 0 && runs.distinctAtLeast <= walked);
  assert.throws(() => w.windowsOf(0, `alpha ${shared} beta and more`, u, runs), /changed since the pass that counted its anchors/);
});

test('byte windows: options that do not apply are refused by name', () => {
  assert.throws(() => dedupSpans([], { unit: 'line', lengthUnit: 'bytes' }), /lengthUnit applies to substring units only/);
  assert.throws(() => dedupSpans([], { unit: 'substring', lengthUnit: 'chars' as never }), /unknown lengthUnit "chars"/);
  assert.throws(() => dedupSpans([], { unit: 'substring', lengthUnit: 'bytes', minUnitWords: 2 }), /minUnitWords does not apply/);
});

test('byte windows: texts that change between the anchor pass and pass 1 are an error, not a smaller answer', () => {
  const o = { unit: 'substring' as const, lengthUnit: 'bytes' as const, minLength: 20 };
  const a = ['a passage that repeats itself, a passage that repeats itself', 'another text, of its own and long enough'];
  const cases = [
    // One letter changed (the same length, another normalized text).
    ['a passage that repeats itself, a passage that repeats itselx', a[1]!],
    // A document fewer.
    [a[0]!],
    // A document with nothing to walk (pass 1 passes it by unread) that now repeats the first.
    [a[0]!, 'a passage that repeats itself, a passage that repeats itself'],
  ];
  for (const b of cases) {
    const d = new SpanDeduper(o);
    for (const t of a) d.anchor(t);
    d.endAnchoring();
    assert.throws(() => {
      for (const t of b) d.observe(t);
      d.endObserving();
    }, /changed (between|since) the pass/);
  }
  const d = new SpanDeduper(o);
  assert.throws(() => d.observe(a[0]!), /before their anchors were counted/);
});

test('the sweep in WebAssembly (all windows, and the walked ones only) gives what its JavaScript loop gives: windows, anchors, runs, walked windows', () => {
  const words = [...PIECES, 'lorem', 'ipsum', 'dolor', 'a', 'bb', 'ccc', 'x'.repeat(40), 'ü'.repeat(9), '😀😀', '\u0000'];
  const doc = fc.oneof(
    byteDoc,
    fc.array(fc.constantFrom(...words), { maxLength: 300 }).map((ws) => ws.join(' ')),
    // Long: past the kernel's first room (4,096 tokens), so its memory grows.
    fc.array(fc.constantFrom(...words), { minLength: 1500, maxLength: 2500 }).map((ws) => ws.join(' ')),
  );
  fc.assert(
    fc.property(fc.array(doc, { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 400 }), normalizations, (base, minBytes, normalize) => {
      // Repeats, so that some runs are walked.
      const docs = [...base, ...base.slice(0, 2).map((t) => `${t} tail`)];
      const sides = [true, false].map((wasm) => {
        const w = new ByteWindows(normalize ?? {}, minBytes, { wasm });
        const counts = new AnchorCounts();
        const runs = new AnchorRuns();
        const u = newUnits();
        const all = docs.map((t) => {
          w.countAnchors(t, counts, runs);
          w.windows(t, u, undefined);
          return [u.start.slice(0, u.count), u.end.slice(0, u.count), Array.from(w.windowHash.subarray(0, 2 * u.count))];
        });
        const counted: number[][] = [];
        counts.forEach((h, c) => counted.push([h, c]));
        runs.finish(counts);
        const walked = docs.map((t, i) => {
          w.windowsOf(i, t, u, runs);
          return [u.start.slice(0, u.count), Array.from(w.windowHash.subarray(0, 2 * u.count)), w.skipped];
        });
        return { all, counted, lens: Array.from(runs.lens), walked };
      });
      // Compared as JSON: a failing deepEqual of arrays this long takes minutes to describe.
      assert.ok(JSON.stringify(sides[0]) === JSON.stringify(sides[1]), 'WebAssembly and JavaScript differ');
      // And each document's windows do not depend on the documents before it (arrays grown for one, stale for the next).
      docs.forEach((t, i) => {
        const u = newUnits();
        new ByteWindows(normalize ?? {}, minBytes).windows(t, u, undefined);
        const [start, end] = sides[0]!.all[i]!;
        assert.ok(JSON.stringify([u.start.slice(0, u.count), u.end.slice(0, u.count)]) === JSON.stringify([start, end]), `document ${i} alone`);
      });
    }),
    { numRuns: 150, seed: 74, endOnFailure: true },
  );
});

test('a document whose characters expand (ﷺ is 18 code points, an emoji two code units) and then run long in ASCII: its windows are the same whatever document came before', () => {
  // Normalized, it has more code units than the text and more than its tokens, and words longer than a gap's headroom: the room for the code units runs out first, in a word.
  const text = `${'ﷺ'.repeat(300)}${'😀'.repeat(10)} ${'abcdefghijklmnopqrstuvwxyz '.repeat(800)}`;
  const before = `${'zyx '.repeat(30000)}`;
  for (const wasm of [true, false]) {
    const hashes = [false, true].map((after) => {
      const w = new ByteWindows({}, 60, { wasm });
      const u = newUnits();
      if (after) w.windows(before, u, undefined);
      w.windows(text, u, undefined);
      const codes = String.fromCharCode(...(w as unknown as { codes: Uint16Array }).codes.subarray(0, 20000));
      assert.ok(!codes.includes('\u0000'), `wasm ${wasm}, after ${after}: every normalized code unit written`);
      return {
        count: u.count,
        hashes: Array.from(w.windowHash.subarray(0, 2 * u.count)),
        key: Array.from(w.key(u.count - 1, new Uint16Array(8)).buf.subarray(0, 8)),
      };
    });
    assert.deepEqual(hashes[1], hashes[0], `wasm ${wasm}`);
    assert.ok(
      'abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz'.includes(String.fromCharCode(...hashes[0]!.key)),
      'the last window is normalized text, not what a document before left',
    );
  }
});
