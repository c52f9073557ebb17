/**
 * The sentence boundaries of src/spans/sentences.ts against `Intl.Segmenter`'s (what `neardup spans`
 * used alone before, and still uses for the texts that function does not handle): random texts of
 * the characters it handles, weighted towards the ones the rules turn on (terminators, spaces, line
 * breaks, capitals, digits, commas), every text of up to four of its classes' representatives, and
 * texts with other characters, which it must refuse.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sentenceEnds } from '../../src/spans/sentences.js';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });
const want = (t: string): number[] => [...segmenter.segment(t)].map((s) => s.index + s.segment.length);
const got = (t: string): number[] | undefined => {
  const ends: number[] = [];
  return sentenceEnds(t, ends) ? ends : undefined;
};

/** One of each class, and a few of the letters above ASCII. */
const REPS = ['a', 'Z', '7', ' ', '\t', '\n', '\r', '.', '!', '?', ',', 'é', 'É', 'ß', 'ÿ', 'À'];
const HANDLED = fc.constantFrom(...REPS, 'b', 'x', 'Q', '0', 'ñ', 'Þ', 'ð', '.', '.', ' ', ' ', '\n');

test('sentence ends equal Intl.Segmenter on random texts of the characters handled', () => {
  fc.assert(
    fc.property(fc.array(HANDLED, { maxLength: 40 }), (cs) => {
      const t = cs.join('');
      assert.deepEqual(got(t), want(t), JSON.stringify(t));
    }),
    { numRuns: 20000, seed: 60 },
  );
  // Words and sentences, as prose has them.
  const word = fc.stringMatching(/^[A-Za-zà-öø-ÿ0-9]{1,6}$/);
  const sep = fc.constantFrom(' ', '  ', '. ', '.', '? ', '! ', ', ', '.\n', '\n', '\n\n', '\r\n', '.\r\n', '... ', '?! ', '. 5', ' .');
  fc.assert(
    fc.property(fc.array(fc.tuple(word, sep), { maxLength: 12 }), (parts) => {
      const t = parts.map(([w, s]) => w + s).join('');
      assert.deepEqual(got(t), want(t), JSON.stringify(t));
    }),
    { numRuns: 20000, seed: 61 },
  );
});

test('sentence ends equal Intl.Segmenter on every text of up to four class representatives', () => {
  let texts = [''];
  for (let len = 1; len <= 4; len++) {
    texts = texts.flatMap((t) => REPS.map((c) => t + c));
    for (const t of texts) assert.deepEqual(got(t), want(t), JSON.stringify(t));
  }
});

test('sentence ends: texts with any other character are refused (Intl.Segmenter splits them)', () => {
  for (const t of ['Say "hi". Go.', 'a; b. C', '我喜欢猫。', 'x × y. Z', 'a\u0085b', 'Dr. (Smith) went.', 'ª. b', 'e\u0301. F'])
    assert.equal(got(t), undefined, t);
  fc.assert(
    fc.property(fc.array(HANDLED, { maxLength: 10 }), fc.string({ minLength: 1, maxLength: 3 }), (cs, other) => {
      const t = cs.join('') + other;
      const g = got(t);
      if (g !== undefined) assert.deepEqual(g, want(t), JSON.stringify(t));
    }),
    { numRuns: 5000, seed: 62 },
  );
});

test('sentence ends: every code unit the function takes gives the segmenter ends in a few contexts; the rest are refused', () => {
  let taken = 0;
  for (let c = 0; c < 0x10000; c++) {
    const ch = String.fromCharCode(c);
    const contexts = [ch, `a${ch}. B`, `A. ${ch}b`, `x.${ch}`, `Q? ${ch} . z`];
    const ok = contexts.map((t) => got(t) !== undefined);
    assert.ok(ok.every((x) => x === ok[0]), `U+${c.toString(16)}: taken in some contexts only`);
    if (!ok[0]) continue;
    taken++;
    for (const t of contexts) assert.deepEqual(got(t), want(t), JSON.stringify(t));
  }
  assert.equal(taken, 62 + 62 + 8, 'ASCII letters and digits, U+00C0-U+00FF but two, space, tab, CR, LF and . ! ? ,');
});
