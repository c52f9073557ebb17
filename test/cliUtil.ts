/** Helpers for the CLI tests: paths, and running the built binary as a subprocess. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root (tests run from dist/test). */
export const repoRoot = path.resolve(here, '../..');
/** The built CLI entry point: the bundle the package's bin runs (scripts/bundle.mjs). */
export const mainJs = path.resolve(repoRoot, 'dist/cli/main.js');
/** The CLI fixtures directory. */
export const fixtures = path.resolve(repoRoot, 'test/fixtures/cli');
/** The Kijiji data set, when present (shipped in data/). */
export const kijiji = path.resolve(repoRoot, 'data/dataset_rent_rome_kijiji.tsv');

/** The result of a CLI run. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `neardup args…` with stdin `input`, in `cwd` (default: the fixtures directory). */
export function neardup(args: string[], opts: { input?: string | Buffer; env?: Record<string, string>; cwd?: string } = {}): Run {
  const r = spawnSync(process.execPath, [mainJs, ...args], {
    cwd: opts.cwd ?? fixtures,
    input: opts.input,
    env: { ...process.env, NEARDUP_PROGRESS: '', NEARDUP_DEBUG: '', ...opts.env },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh temp directory. */
export function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-test-'));
}

/** The expected pairs of the docs.* fixtures, by row. */
export const EXPECTED_PAIRS = ['0\t3\t0.882353', '0\t5\t1', '1\t4\t0.84375', '3\t5\t0.882353'];

/** The same pairs with the fixtures' ids. */
export const EXPECTED_ID_PAIRS = ['a1\ta2\t0.882353', 'a1\ta3\t1', 'b1\tb2\t0.84375', 'a2\ta3\t0.882353'];

/** Non-empty lines of a text. */
export function lines(s: string): string[] {
  return s.split('\n').filter((l) => l !== '');
}
