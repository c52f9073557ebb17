/**
 * The benches whose figures bench/RESULTS.md and the docs quote for the online index and spans run
 * to their end at their smallest size: a bench nothing runs rots (one crashed before printing
 * anything for a whole round). Each must exit 0 and print its table. Sizes here check that they run,
 * not their speed (bench/RESULTS.md has the figures, taken on a quiet machine).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, tmpDir } from '../cliUtil.js';

/** A bench, its smallest arguments, its environment, and what its output must hold. */
const BENCHES: [string, (dir: string) => string[], Record<string, string>, RegExp][] = [
  ['gen', (d) => ['--docs', '100', '--out', path.join(d, 'g.tsv')], {}, /wrote .*100 docs/],
  ['file-store', () => ['2000', 'text'], {}, /^\| 2,000 \|/m],
  ['spans', (d) => ['--docs', '300', '--rounds', '1', '--sample', '50', '--dir', d], {}, /^\| line \| new \|/m],
  ['online-prepare', () => ['--n', '500', '--reps', '1'], {}, /^\| index: prepare/m],
  ['online-stores', () => ['2000'], { STORES: 'memory' }, /^\| memory \|/m],
  ['cli-million', () => ['--docs', '2000', '--workers', '1'], {}, /recall of planted pairs/],
  ['http-mixed', () => ['1000', '1', '2'], { STORES: 'file' }, /^\| file \| [\d,]+ \| query \|/m],
  ['online-http', () => ['1', '2'], { DOCS: '0' }, /^\| POST \/v1\/documents \| memory \| 2 \| [\s\S]*the next run's DOCS=\d+/m],
  ['key-table', () => ['1000', '1'], {}, /^\| 1 \| touch \|/m],
];

for (const [name, args, env, want] of BENCHES) {
  test(`bench/${name} runs at its smallest size`, () => {
    const dir = tmpDir();
    const r = spawnSync(process.execPath, ['--expose-gc', path.join(repoRoot, 'dist/bench', `${name}.js`), ...args(dir)], {
      cwd: repoRoot,
      env: { ...process.env, BENCH_DIR: dir, ...env },
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(r.status, 0, `${name}: ${r.stderr}`);
    assert.match(r.stdout, want, name);
  });
}
