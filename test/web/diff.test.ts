/**
 * The diff view's word diff and change summary (src/web/diffView.js, shared by the web page and the
 * report), run in Node with the jsdiff bundle the page ships: a sentence appended to a text is one
 * change, listed whole (#48: a space of the old text matched inside the new sentence split it into
 * two items, which the summary then listed in reverse), and the changed ranges of both sides always
 * account for the two texts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import fc from 'fast-check';
import { repoRoot } from '../cliUtil.js';

interface Change {
  from: string;
  to: string;
}
interface WordDiff {
  left: [number, number][];
  right: [number, number][];
  changes: Change[];
}
interface DiffView {
  wordDiff(a: string, b: string): WordDiff;
  changeSummary(changes: Change[]): string;
}

/** diffView.js in a context of its own, over jsdiff's browser bundle, as the page loads them. */
function loadDiffView(): DiffView {
  const window: Record<string, unknown> = {};
  const ctx = vm.createContext({ window });
  window.window = window;
  const bundle = path.join(path.dirname(createRequire(import.meta.url).resolve('diff/package.json')), 'dist/diff.min.js');
  vm.runInContext(readFileSync(bundle, 'utf8'), ctx);
  ctx.Diff ??= window.Diff;
  vm.runInContext(readFileSync(path.join(repoRoot, 'src/web/diffView.js'), 'utf8'), ctx);
  return window.neardupDiff as DiffView;
}

const view = loadDiffView();

/** The summary's quoting of one text (spaces collapsed, long ones cut), as changeSummary quotes it. */
function quoted(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 40 ? '“' + t.slice(0, 38) + '…”' : '“' + t + '”';
}

/** The text outside the changed ranges. */
function unchanged(text: string, ranges: [number, number][]): string {
  let out = '';
  let at = 0;
  for (const [s, e] of ranges) {
    assert.ok(s >= at && e > s && e <= text.length, `range ${s}–${e} after ${at} in ${text.length} characters`);
    out += text.slice(at, s);
    at = e;
  }
  return out + text.slice(at);
}

const WORDS = [
  'casa',
  'in',
  'centro',
  'affitto',
  'le',
  'di',
  'da',
  'dopo',
  'euro',
  'con',
  'e',
  'Chiamare',
  'Libero',
  'subito',
  'mq',
  '18',
  '2',
  '1.100,00',
  '3.300',
  "l'acqua",
];
const word = fc.constantFrom(...WORDS);
const sentence = fc.tuple(fc.array(word, { minLength: 2, maxLength: 9 }), fc.constantFrom('.', '!', '', ':')).map(([w, end]) => w.join(' ') + end);
const text = fc.tuple(fc.array(sentence, { minLength: 1, maxLength: 6 }), fc.constantFrom('', ' ', '\n', '  ')).map(([s, tail]) => s.join(' ') + tail);

test('a sentence appended to a text is one change, listed whole, whatever its numbers (property)', () => {
  fc.assert(
    fc.property(text, sentence, fc.constantFrom(' ', '\n', '  ', ''), (a, added, sep) => {
      // With no separator the sentence would be glued to the text's last word: a changed word, not an appended sentence.
      fc.pre(sep !== '' || /\s$/.test(a));
      const b = a + sep + added;
      const d = view.wordDiff(a, b);
      const real = d.changes.filter((c) => c.from.trim() || c.to.trim());
      assert.equal(real.length, 1, JSON.stringify(d.changes));
      assert.equal(view.changeSummary(d.changes), '+ ' + quoted(added));
    }),
    { numRuns: 3000, seed: 48 },
  );
});

test('the spaces in the old text of a TSV ad that ends in one do not split the appended sentence (the reported case)', () => {
  const a = 'Ufficio in affitto Tel. 06.53.55.67 www.esempio.it ';
  const d = view.wordDiff(a, a + " Possibilita' finanziamento a tasso agevolato 1%.");
  assert.equal(view.changeSummary(d.changes), '+ ' + quoted("Possibilita' finanziamento a tasso agevolato 1%."));
});

test('the changed ranges account for both texts: what is left outside them is the same on both sides (property)', () => {
  fc.assert(
    fc.property(text, text, (a, b) => {
      const d = view.wordDiff(a, b);
      assert.equal(unchanged(a, d.left), unchanged(b, d.right));
      if (a === b) assert.deepEqual(d.changes, []);
    }),
    { numRuns: 2000, seed: 49 },
  );
});
