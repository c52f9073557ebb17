/**
 * Every script src/ starts as a worker thread or child process (`new URL('./NAME.js',
 * import.meta.url)`) is an entry of the CLI bundle (scripts/bundle.mjs), so that the bundled code
 * finds `dist/cli/NAME.js` beside its chunks. A missing one fails only at run time, and a caller
 * that falls back quietly (the file store folding its whole log) hides it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../helpers.js';

const SCRIPT = /new URL\(\s*'\.\/([\w-]+)\.js'\s*,\s*import\.meta\.url\s*\)/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

test('every worker or child script src/ starts is in the CLI bundle', () => {
  const scripts = new Map<string, string>();
  for (const f of sources(path.join(repoRoot, 'src'))) {
    for (const m of readFileSync(f, 'utf8').matchAll(SCRIPT)) scripts.set(m[1]!, path.relative(repoRoot, f));
  }
  assert.ok(scripts.size >= 4, `found ${[...scripts.keys()].join(', ')}`);
  const missing = [...scripts].filter(([name]) => !existsSync(path.join(repoRoot, 'dist/cli', `${name}.js`)));
  assert.deepEqual(missing.map(([name, from]) => `${name}.js (started by ${from})`), []);
});
