/**
 * Issue #17 (restructuring without behaviour change) for the batch pipeline, inputs, CLI and report:
 * the renamed normalization preset and its alias, compare's k-gram runs in similarity/passages.ts,
 * the one directory walk, errors worded for the io layer with the CLI's flag hints, and the one
 * place that turns flags into pipeline options.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makeNormalizer, resolvePreset, storedPresetName, NORMALIZE_PRESETS } from '../../src/text/normalize.js';
import { createSymbolizer } from '../../src/text/symbolizer.js';
import { createShingler } from '../../src/text/shingler.js';
import { createTextHasher } from '../../src/dedup/textHash.js';
import { shingleRuns } from '../../src/similarity/passages.js';
import { sharedPassages } from '../../src/cli/commands/compare.js';
import { walkTree } from '../../src/io/read/walk.js';
import { openInput } from '../../src/io/read/read.js';
import { InputError, UsageError } from '../../src/common/errors.js';
import { flagHint } from '../../src/cli/flagHints.js';
import { pipelineOptionsFrom } from '../../src/cli/pipelineOptions.js';
import { NearDupIndex } from '../../src/online/nearDupIndex.js';
import { neardup, tmpDir } from '../cliUtil.js';

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
  assert.throws(() => makeNormalizer({ preset: 'nope' as never }), /unknown normalization preset "nope" \(expected default, lowercase-collapse \(alias seed000\) or none\)/);
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

test('shingleRuns: maximal runs of a\'s k-grams found anywhere in b (gathered from two places), longest first, with coverage', () => {
  const sh = createShingler({ kind: 'char', k: 3, normalize: { preset: 'none' } });
  // "abcdef" in a: "abcd" and "cdef" occur in b at two different places, so the run spans all of a.
  const a = 'abcdef-zz';
  const b = 'xxabcdxx cdefyy';
  const { runs, coverage } = shingleRuns(sh.fingerprints(a), sh.set(b), 3, a.length);
  assert.deepEqual(runs, [{ start: 0, length: 6 }]);
  assert.equal(coverage, 6 / 9);
  assert.deepEqual(shingleRuns(sh.fingerprints('ab'), sh.set(b), 3, 2), { runs: [], coverage: 0 });
  // compare's sharedPassages is these runs with their text.
  const shared = sharedPassages('aaaa xyz bbbb', 'bbbb qq aaaa', 4, 'default');
  assert.deepEqual(shared.passages, [
    { start: 0, length: 4, text: 'aaaa' },
    { start: 9, length: 4, text: 'bbbb' },
  ]);
});

test('walkTree: files and links below the root, directory links not descended, skip rule applied to files and folders', async () => {
  const dir = tmpDir();
  fs.mkdirSync(path.join(dir, 'sub/deeper'), { recursive: true });
  fs.mkdirSync(path.join(dir, '_hidden'));
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a');
  fs.writeFileSync(path.join(dir, 'sub/deeper/b.txt'), 'b');
  fs.writeFileSync(path.join(dir, '_hidden/c.txt'), 'c');
  fs.writeFileSync(path.join(dir, '.dot'), 'd');
  fs.symlinkSync(path.join(dir, 'a.txt'), path.join(dir, 'link.txt'));
  fs.symlinkSync(path.join(dir, 'sub'), path.join(dir, 'dirlink'));
  const all = (await walkTree(dir)).sort((x, y) => (x.rel < y.rel ? -1 : 1));
  assert.deepEqual(all, [
    { rel: '.dot', kind: 'file' },
    { rel: '_hidden/c.txt', kind: 'file' },
    { rel: 'a.txt', kind: 'file' },
    { rel: 'dirlink', kind: 'link' },
    { rel: 'link.txt', kind: 'link' },
    { rel: 'sub/deeper/b.txt', kind: 'file' },
  ]);
  const visible = (await walkTree(dir, { skip: (n) => n.startsWith('.') || n.startsWith('_') })).map((e) => e.rel).sort();
  assert.deepEqual(visible, ['a.txt', 'dirlink', 'link.txt', 'sub/deeper/b.txt']);
  await assert.rejects(walkTree(path.join(dir, 'missing')), /missing/);
});

test('io errors name the file and line in the library\'s words and carry the option that fixes them; the CLI adds its flag', async () => {
  const dir = tmpDir();
  const tsv = path.join(dir, 'docs.tsv');
  fs.writeFileSync(tsv, 'id\ttitle\tbody\n1\ta\tb\n');
  let err: unknown;
  try {
    const input = await openInput(tsv);
    for await (const _ of input.records) void _;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof InputError);
  assert.equal(err.message, `${tsv}:1: no text column given; available columns: "id", "title", "body"`);
  assert.doesNotMatch(err.message, /--/);
  assert.deepEqual(err.fix, { option: 'text' });
  assert.equal(flagHint(err.fix), ' (use --text)');
  const cli = neardup(['dedup', 'docs.tsv'], { cwd: dir });
  assert.equal(cli.code, 2);
  assert.equal(cli.stderr, 'neardup: docs.tsv:1: no text column given; available columns: "id", "title", "body" (use --text)\n');

  // A directory holding both shard files and document files.
  fs.mkdirSync(path.join(dir, 'mixed'));
  fs.writeFileSync(path.join(dir, 'mixed/a.txt'), 'hello');
  fs.writeFileSync(path.join(dir, 'mixed/b.jsonl'), '{"text":"x"}\n');
  let dirErr: unknown;
  try {
    await openInput(path.join(dir, 'mixed'));
  } catch (e) {
    dirErr = e;
  }
  assert.ok(dirErr instanceof UsageError);
  assert.match(dirErr.message, /mixed holds both shard files \(b\.jsonl\) and document files \(a\.txt\): read it as format dir to take each \.txt\/\.md\/\.html file as one document, or name the shards with a glob \(e\.g\. '.*mixed\/\*\.jsonl'\)$/);
  assert.deepEqual(dirErr.fix, { option: 'format', value: 'dir' });
  const cliDir = neardup(['dedup', 'mixed'], { cwd: dir });
  assert.equal(cliDir.code, 2);
  assert.match(cliDir.stderr, /^neardup: mixed holds both shard files \(b\.jsonl\) and document files \(a\.txt\): .* \(use --format dir\)\n$/);
  assert.equal(flagHint(undefined), '');
  assert.equal(flagHint({ option: 'format' }), ' (use --format)');
  assert.equal(flagHint({ option: 'out' }), ' (choose another --out)');
});

test('pipelineOptionsFrom: engine flags are checked before reader flags, and the pair format follows --out', () => {
  const flags = {
    format: 'auto' as const,
    delimiter: ',',
    shingle: 'char' as const,
    normalize: 'lowercase-collapse' as const,
    numPerm: 128,
    method: 'oph' as const,
    seed: 1,
    threshold: 0.8,
    out: 'pairs.csv',
  };
  const o = pipelineOptionsFrom(flags);
  assert.equal(o.pairFormat, 'csv');
  assert.deepEqual(o.dedup.shingle, { kind: 'char', normalize: { preset: 'lowercase-collapse' } });
  assert.equal(o.read.delimiter, ',');
  assert.throws(() => pipelineOptionsFrom({ ...flags, delimiter: ';;' }), /--delimiter must be one character/);
  assert.throws(() => pipelineOptionsFrom({ ...flags, delimiter: ';;', buckets: 5 }), /--buckets applies to --candidates sketch only/);
});
