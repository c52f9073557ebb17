/**
 * The normalization presets: lowercase-collapse is the preset once called seed000 (issue #17), under
 * a name that says what it does; the old name stays an alias, in the library, the saved files and
 * the CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { makeNormalizer, resolvePreset, storedPresetName, NORMALIZE_PRESETS } from '../../src/text/normalize.js';
import { createSymbolizer } from '../../src/text/symbolizer.js';
import { createShingler } from '../../src/text/shingler.js';
import { createTextHasher } from '../../src/dedup/textHash.js';
import { NearDupIndex } from '../../src/online/nearDupIndex.js';
import { neardup } from '../cliUtil.js';

const SAMPLES = ['Hello   World\n\n\nNext  line\tTab', '  ÉCOLE  Straße ﬁ  \n x', 'ΣΑΣ σας', '', 'a\u0301b  \r\n\r\nc', 'MIXED case\u00a0nbsp   end  '];

test('lowercase-collapse is seed000 under a name that says what it does: same normalizer, symbols, shingles and text hashes', () => {
  assert.deepEqual([...NORMALIZE_PRESETS], ['default', 'lowercase-collapse', 'none']);
  assert.equal(resolvePreset('seed000'), 'lowercase-collapse');
  assert.equal(resolvePreset('lowercase-collapse'), 'lowercase-collapse');
  assert.equal(resolvePreset(undefined), 'default');
  assert.equal(resolvePreset('nope'), undefined);
  const oldN = makeNormalizer({ preset: 'seed000' });
  const newN = makeNormalizer({ preset: 'lowercase-collapse' });
  assert.equal(newN('A  B\n\nC\t\tD '), 'a b c\t\td ');
  const oldS = createSymbolizer({ preset: 'seed000' }, 7);
  const newS = createSymbolizer({ preset: 'lowercase-collapse' }, 7);
  const oldSh = createShingler({ kind: 'char', k: 3, normalize: { preset: 'seed000' } });
  const newSh = createShingler({ kind: 'char', k: 3, normalize: { preset: 'lowercase-collapse' } });
  const oldH = createTextHasher({ preset: 'seed000' });
  const newH = createTextHasher({ preset: 'lowercase-collapse' });
  for (const t of SAMPLES) {
    assert.equal(newN(t), oldN(t));
    const a = oldS.symbols(t);
    const a2 = Array.from(a.syms.subarray(0, a.count));
    const b = newS.symbols(t);
    assert.deepEqual(Array.from(b.syms.subarray(0, b.count)), a2);
    assert.deepEqual(Array.from(newSh.set(t)), Array.from(oldSh.set(t)));
    const ho = new Uint32Array(2);
    const hn = new Uint32Array(2);
    assert.equal(newH(t, hn), oldH(t, ho));
    assert.deepEqual(Array.from(hn), Array.from(ho));
  }
  assert.throws(
    () => makeNormalizer({ preset: 'nope' as never }),
    /unknown normalization preset "nope" \(expected default, lowercase-collapse \(alias seed000\) or none\)/,
  );
});

test('saved files record the preset as seed000 whichever name was given, so old and new manifests compare equal', async () => {
  assert.equal(storedPresetName('lowercase-collapse'), 'seed000');
  assert.equal(storedPresetName('seed000'), 'seed000');
  assert.equal(storedPresetName(undefined), 'default');
  assert.equal(storedPresetName('none'), 'none');
  const a = await NearDupIndex.open({ shingle: { kind: 'char', k: 4, normalize: { preset: 'seed000' } } });
  const b = await NearDupIndex.open({ shingle: { kind: 'char', k: 4, normalize: { preset: 'lowercase-collapse' } } });
  try {
    assert.equal(a.manifest.shingle.normalize.preset, 'seed000');
    assert.deepEqual(b.manifest, a.manifest);
  } finally {
    await a.close();
    await b.close();
  }
});

test('CLI: --normalize lowercase-collapse and its alias seed000 give the same pairs; help names both', () => {
  const args = ['dedup', path.resolve('examples/ads.tsv'), '--text', 'Title,Short Description', '-k', '10', '--threshold', '0.5', '-q'];
  const oldRun = neardup([...args, '--normalize', 'seed000']);
  const newRun = neardup([...args, '--normalize', 'lowercase-collapse']);
  assert.equal(oldRun.code, 0, oldRun.stderr);
  assert.equal(newRun.code, 0, newRun.stderr);
  assert.ok(oldRun.stdout.length > 0);
  assert.equal(newRun.stdout, oldRun.stdout);
  const help = neardup(['dedup', '--help']).stdout.replace(/\s+/g, ' ');
  assert.match(help, /lowercase-collapse \(collapse runs of spaces or of newlines to one space, lowercase; nothing else; alias seed000\)/);
  assert.match(help, /choices: "default", "lowercase-collapse", "none", "seed000"/);
});

test('options that are not an object (a preset name given as the options, as the CLI spells it) are a RangeError, not the default preset', async () => {
  const { dedupSpans } = await import('../../src/spans/dedupSpans.js');
  for (const bad of ['none', 'default', 1, true] as unknown[]) {
    assert.throws(() => makeNormalizer(bad as never), /normalization options must be an object/, String(bad));
    assert.throws(
      () => dedupSpans([{ id: 'a', text: 'X\n' }, { id: 'b', text: 'x\n' }], { normalize: bad as never }),
      /normalization options must be an object/,
    );
  }
  // Spelt as an object, 'none' keeps the case: nothing is cut.
  assert.deepEqual(dedupSpans([{ id: 'a', text: 'X\n' }, { id: 'b', text: 'x\n' }], { normalize: { preset: 'none' } }).documents.map((d) => d.text), [
    'X\n',
    'x\n',
  ]);
});
