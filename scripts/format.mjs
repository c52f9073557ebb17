#!/usr/bin/env node
// The formatter: dprint's TypeScript plugin (WebAssembly, @dprint/typescript) run by its JS host
// (@dprint/formatter) over the files dprint.json includes, with its settings. `node scripts/format.mjs`
// rewrites them (npm run format); `--check` lists the files that would change and exits 1 (npm run
// lint). The JS host, not the dprint CLI package: the CLI comes as a binary per platform, in optional
// packages a registry mirror may not carry, and then `npm ci` refuses the lock file.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContext } from '@dprint/formatter';
import { getPath } from '@dprint/typescript';
import { glob } from 'tinyglobby';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
// dprint.json is JSON with // comment lines.
const config = JSON.parse(
  readFileSync(path.join(root, 'dprint.json'), 'utf8')
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('//'))
    .join('\n'),
);
const { typescript, includes, excludes, ...global } = config;
// The plugin is loaded below from its package, not from the path the dprint CLI reads.
delete global.plugins;
const context = createContext(global);
context.addPlugin(readFileSync(getPath()), typescript);
const files = await glob(includes, { cwd: root, ignore: excludes.map((e) => (e.includes('*') ? e : `${e}/**`)) });
const changed = [];
for (const rel of files.sort()) {
  const file = path.join(root, rel);
  const text = readFileSync(file, 'utf8');
  const out = context.formatText({ filePath: file, fileText: text });
  if (out === text) continue;
  changed.push(rel);
  if (!check) writeFileSync(file, out);
}
if (check && changed.length) {
  process.stderr.write(`not formatted (npm run format rewrites them):\n${changed.map((f) => `  ${f}\n`).join('')}`);
  process.exit(1);
}
process.stderr.write(`${check ? 'checked' : 'formatted'} ${files.length} files${check ? '' : `, ${changed.length} changed`}\n`);
