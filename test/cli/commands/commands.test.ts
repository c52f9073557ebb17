import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { lines, mainJs, neardup, repoRoot, tmpDir } from '../../cliUtil.js';
import { chooseBands } from '../../../src/lsh/params.js';
import { sharedPassages } from '../../../src/cli/commands/compare.js';

test('params: b and r, P(threshold), the FP and FN areas, and the P(s) table', () => {
  const r = neardup(['params', '--threshold', '0.8', '--num-perm', '128']);
  assert.equal(r.code, 0, r.stderr);
  const b = chooseBands(0.8, 128);
  assert.match(r.stdout, new RegExp(`b = ${b.bands} bands × r = ${b.rows} rows`));
  assert.match(r.stdout, new RegExp(`P\\(0\\.8\\) = ${b.recallAtThreshold.toFixed(4)}`));
  assert.match(r.stdout, new RegExp(`FP area .* = ${b.falsePositiveArea.toFixed(5)}`));
  assert.match(r.stdout, new RegExp(`FN area .* = ${b.falseNegativeArea.toFixed(5)}`));
  assert.match(r.stdout, / 0\.80 {2}0\.99\d\d .*← threshold/);
  assert.equal(lines(r.stdout).filter((l) => /^ +\d\.\d\d {2}\d\.\d{4}/.test(l)).length, 20);
});

test('params --weights and --min-recall pick different bandings; --json is machine-readable', () => {
  const w = neardup(['params', '--threshold', '0.5', '--num-perm', '128', '--weights', '0.5,0.5', '--json']);
  assert.equal(w.code, 0, w.stderr);
  const jw = JSON.parse(w.stdout) as { bands: number; rows: number; rule: string; curve: { s: number; p: number }[] };
  const ew = chooseBands(0.5, 128, { weights: { fp: 0.5, fn: 0.5 } });
  assert.deepEqual([jw.bands, jw.rows, jw.rule], [ew.bands, ew.rows, 'weights']);
  assert.ok(jw.curve.some((c) => c.s === 0.5));
  const m = JSON.parse(neardup(['params', '--threshold', '0.5', '--num-perm', '128', '--min-recall', '0.9', '--json']).stdout) as {
    bands: number;
    rows: number;
  };
  const em = chooseBands(0.5, 128, { minRecallAtThreshold: 0.9 });
  assert.deepEqual([m.bands, m.rows], [em.bands, em.rows]);
  const bad = neardup(['params', '--min-recall', '0.9', '--weights', '1,1']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /cannot be used with/);
});

test('compare --text: exact Jaccard per shingle kind, the estimate, shared passages', () => {
  const r = neardup(['compare', '--text', "what's the flight time from Berlin to Helsinki", "what's the flight time from Berlin to Oulu", '--json']);
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as {
    kinds: { kind: string; k: number; jaccard: number; estimate: number; intersection: number }[];
    shared: { passages: { text: string }[] };
  };
  assert.deepEqual(
    j.kinds.map((x) => [x.kind, x.k]),
    [
      ['char', 5],
      ['word', 3],
      ['spot', 3],
    ],
  );
  assert.equal(j.kinds[0]!.intersection, 34);
  assert.ok(Math.abs(j.kinds[0]!.jaccard - 34 / 46) < 1e-12);
  assert.ok(Math.abs(j.kinds[0]!.estimate - j.kinds[0]!.jaccard) < 0.15);
  assert.equal(j.shared.passages[0]!.text, "what's the flight time from berlin to ");
  const human = neardup(['compare', '--text', 'abc def ghi', 'abc def ghi']);
  assert.match(human.stdout, /char +5 .* 1\.0000 +1\.0000/);
});

test('compare files (HTML stripped) with -k for the chosen kind; a missing file is an error', () => {
  const dir = tmpDir();
  const a = path.join(dir, 'a.html');
  const b = path.join(dir, 'b.txt');
  fs.writeFileSync(a, '<p>The quick brown fox jumps over the lazy dog near the river bank today</p>');
  fs.writeFileSync(b, 'The quick brown fox jumps over the lazy dog near the river bank tonight');
  const r = neardup(['compare', a, b, '--shingle', 'word', '-k', '2']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^word +2 +13 +13 +12 +0\.8571/m);
  assert.match(r.stdout, /@0 \(\d+ chars\) "the quick brown fox jumps over the lazy dog near the river bank to"/);
  const missing = neardup(['compare', a, path.join(dir, 'nope.txt')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nope\.txt: no such file or directory/);
});

test('sharedPassages finds maximal runs and the coverage of a', () => {
  const { passages, coverage } = sharedPassages('aaaa xyz bbbb', 'bbbb qq aaaa', 4, 'default');
  assert.deepEqual(
    passages.map((p) => p.text),
    ['aaaa', 'bbbb'],
  );
  assert.ok(Math.abs(coverage - 8 / 13) < 1e-12);
});

test('bench: LSH against brute force, and candidates against bands with recall at ≥ 0.9', () => {
  const r = neardup(['bench', 'docs.tsv', '--text', 'body', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as Record<string, any>;
  assert.equal(j.lshVsBruteForce.lsh.pairs, 4);
  assert.equal(j.lshVsBruteForce.bruteForce.pairs, 4);
  assert.equal(j.lshVsBruteForce.common, 4);
  assert.equal(j.lshVsBruteForce.recall, 1);
  assert.equal(j.lshVsBruteForce.precision, 1);
  assert.deepEqual(
    j.bandSweep.rows.map((x: { bands: number; rows: number }) => [x.bands, x.rows]),
    [
      [2, 50],
      [5, 20],
      [10, 10],
      [20, 5],
    ],
  );
  assert.equal(j.bandSweep.rows[3].total, 1, 'one pair (an exact copy) has J ≥ 0.9');
  assert.equal(j.bandSweep.rows[3].found, 1);
  const human = neardup(['bench', 'docs.tsv', '--text', 'body', '--bands-list', '4,25']);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /1\. LSH against brute force/);
  assert.match(human.stdout, /LSH \(oph, 128 hashes, 16×6, verify exact\) +\S+ m?s +4/);
  assert.match(human.stdout, /brute force \(exact Jaccard, all pairs\) +\S+ m?s +4/);
  assert.match(human.stdout, /in common +4/);
  assert.match(human.stdout, /recall 100\.00% · precision 100\.00%/);
  assert.match(human.stdout, /^ +4 +25 +\d+ +1\/1 \(100\.00%\)/m);
  assert.match(human.stdout, /^ +25 +4 +\d+ +1\/1 \(100\.00%\)/m);
  const bad = neardup(['bench', 'docs.tsv', '--text', 'body', '--bands-list', '0']);
  assert.equal(bad.code, 2);
});

test('the bundled CLI (the package bin) and the unbundled entry print the same version and help', () => {
  const bundled = neardup(['--version']);
  assert.equal(bundled.code, 0, bundled.stderr);
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
  assert.equal(bundled.stdout.trim(), pkg.version);
  assert.equal(neardup(['-V']).stdout.trim(), pkg.version);
  // --version loads no command; help still lists every one.
  const help = neardup(['--help']).stdout;
  for (const name of ['dedup', 'params', 'compare', 'bench', 'report', 'serve', 'index', 'job', 'stage', 'worker'])
    assert.match(help, new RegExp(`^  ${name} `, 'm'), name);
  assert.equal(path.resolve(repoRoot, pkg.bin['neardup']!), mainJs);
  const plain = spawnSync(process.execPath, [path.join(repoRoot, 'dist/src/cli/main.js'), 'dedup', '--help'], { encoding: 'utf8' });
  assert.equal(neardup(['dedup', '--help']).stdout, plain.stdout);
});

test('job dedup --help and job plan --help: what a job refuses outright is not listed, what it takes at some values only says which', () => {
  for (const cmd of [['job', 'dedup'], ['job', 'plan']]) {
    const help = neardup([...cmd, '--help']).stdout.replace(/\s+/g, ' ');
    for (const refused of ['--exact ', '--stream ', '--workers ', '--limit ', '--memory-budget ', '--batch-size ', '--buckets '])
      assert.ok(!help.includes(refused), `${cmd.join(' ')} --help lists ${refused}`);
    for (
      const [opt, only] of [['--measure', 'jaccard'], ['--candidates', 'lsh'], ['--cluster-mode', 'components'], ['--verify', 'exact'], [
        '--fingerprint-bits',
        '32',
      ]]
    ) {
      assert.match(help, new RegExp(`${opt} .*?\\[sharded jobs: ${only} only\\]`), `${cmd.join(' ')} --help: ${opt}`);
    }
  }
});
