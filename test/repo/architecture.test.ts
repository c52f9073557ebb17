/**
 * The architecture page (docs/architecture.md) is checked against the code, so it cannot drift:
 * - every import between src/ folders is an edge its "may import" column allows; a folder is the
 *   directory a file sits in (`shard/stages`, `io/read`, `cli`), so every sub-folder is a row of its
 *   own; a name in the column is that folder, or, for a folder with no files of its own, its
 *   sub-folders (`io` is every `io/…`);
 * - no import cycle between files (type-only imports included: they still couple the modules);
 * - every src/ folder that holds source files is in that table and in the README's module table;
 * - no folder of src/ holds more than 20 files directly;
 * - no source file is over 400 lines unless it says why at its top.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../helpers.js';

const SRC = path.join(repoRoot, 'src');
/** Files of the build's own tooling that are not modules of the library. */
const SKIP_DIRS = new Set(['types']);
/** A long file must say why in its first lines, with this phrase. */
const LONG_MARK = 'Why this file is long:';
const MAX_LINES = 400;
/** Files one folder may hold directly: past this, a folder is cut into sub-folders of one concern each. */
const MAX_FILES = 20;

function sourceFiles(dir = SRC): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) out.push(...sourceFiles(p));
    } else if ((e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) || e.name.endsWith('.js')) {
      out.push(p);
    }
  }
  return out.sort();
}

/** The folder under src/ a file sits in (`shard/stages`); files directly in src/ are the package root. */
function folderOf(file: string): string {
  const rel = path.relative(SRC, path.dirname(file)).split(path.sep).join('/');
  return rel === '' ? '(root)' : rel;
}

/**
 * Whether `may` (a row's "may import" names) lets its folder import `to`: `to` itself, or a parent
 * of it that holds no files of its own (`io` for `io/read`; but `store` is only `src/store`'s files).
 */
function mayImport(may: Set<string>, to: string, folders: Set<string>): boolean {
  if (may.has('*') || may.has(to)) return true;
  for (let f = to; f.includes('/');) {
    f = f.slice(0, f.lastIndexOf('/'));
    if (may.has(f) && !folders.has(f)) return true;
  }
  return false;
}

// Static imports, re-exports, side-effect imports and dynamic import() of relative paths.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** Relative imports of a file, resolved to source files (.js in imports names the .ts source). */
function importsOf(file: string): string[] {
  const code = stripComments(readFileSync(file, 'utf8'));
  const out: string[] = [];
  for (const m of code.matchAll(IMPORT)) {
    const target = path.resolve(path.dirname(file), m[1]!);
    const ts = target.replace(/\.js$/, '.ts');
    out.push(file.endsWith('.js') ? target : ts);
  }
  return out;
}

/** The "folder | owns | may import" table of docs/architecture.md. */
function allowedEdges(): Map<string, Set<string>> {
  const doc = readFileSync(path.join(repoRoot, 'docs/architecture.md'), 'utf8');
  const rows = new Map<string, Set<string>>();
  for (const line of doc.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 5) continue;
    const name = /^`src\/([a-z0-9]+(?:\/[a-z0-9]+)*)\/?`$/.exec(cells[1]!)?.[1] ?? (cells[1] === '`src/*.ts`' ? '(root)' : undefined);
    if (!name) continue;
    assert.ok(!rows.has(name), `src/${name} has one row in docs/architecture.md's table`);
    const may = cells[3]!;
    // Folder names are in backticks; words around them (why the edge exists) are not names.
    const targets = may === '—' || may === '-' ? [] : [...may.matchAll(/`([a-z0-9]+(?:\/[a-z0-9]+)*)`/g)].map((x) => x[1]!);
    rows.set(name, new Set(/^all\b/.test(may) ? ['*'] : targets));
  }
  return rows;
}

test('every import between src/ folders is allowed by docs/architecture.md', () => {
  const allowed = allowedEdges();
  assert.ok(allowed.size >= 10, 'the table of docs/architecture.md was found');
  const folders = new Set(sourceFiles().map(folderOf));
  const bad: string[] = [];
  for (const file of sourceFiles()) {
    const from = folderOf(file);
    const may = allowed.get(from);
    assert.ok(may, `src/${from} is missing from the table in docs/architecture.md`);
    for (const target of importsOf(file)) {
      const to = folderOf(target);
      if (to === from || mayImport(may, to, folders)) continue;
      bad.push(`${path.relative(repoRoot, file)} imports ${path.relative(repoRoot, target)} (${from} → ${to})`);
    }
  }
  assert.deepEqual(bad, [], 'imports the architecture page does not allow');
});

test('every src/ folder is in the architecture table and in the README module table', () => {
  const folders = new Set(sourceFiles().map(folderOf).filter((f) => f !== '(root)'));
  const allowed = allowedEdges();
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  for (const f of folders) {
    assert.ok(allowed.has(f), `src/${f} is in docs/architecture.md's table`);
    assert.ok(readme.includes(`| \`src/${f}\``), `src/${f} is in the README's module table`);
  }
  for (const f of allowed.keys()) assert.ok(f === '(root)' || folders.has(f), `docs/architecture.md lists src/${f}, which holds no source file`);
  for (const [f, may] of allowed) {
    for (const t of may) {
      if (t === '*') continue;
      assert.ok([...folders].some((g) => g === t || g.startsWith(t + '/')), `docs/architecture.md lets src/${f} import \`${t}\`, which is no folder`);
    }
  }
});

test(`no folder of src/ holds more than ${MAX_FILES} files directly`, () => {
  const crowded: string[] = [];
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true });
    const files = entries.filter((e) => e.isFile()).length;
    if (files > MAX_FILES) crowded.push(`${path.relative(repoRoot, dir)}: ${files} files`);
    for (const e of entries) if (e.isDirectory() && !SKIP_DIRS.has(e.name)) walk(path.join(dir, e.name));
  };
  walk(SRC);
  assert.deepEqual(crowded, [], `folders over ${MAX_FILES} files: cut them into sub-folders of one concern each (docs/architecture.md)`);
});

test('no import cycle between source files (type-only imports included)', () => {
  const files = sourceFiles();
  const known = new Set(files);
  const edges = new Map(files.map((f) => [f, importsOf(f).filter((t) => known.has(t))]));
  // Tarjan's strongly connected components; any component of two or more files is a cycle.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)!) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(path.relative(repoRoot, w));
      } while (w !== v);
      if (comp.length > 1) cycles.push(comp.sort());
    }
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  assert.deepEqual(cycles, [], 'files that import each other, directly or through others');
});

test(`no source file over ${MAX_LINES} lines without a reason at its top`, () => {
  const long: string[] = [];
  for (const file of sourceFiles()) {
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n').length;
    if (lines <= MAX_LINES) continue;
    const head = text.split('\n').slice(0, 40).join('\n');
    if (!head.includes(LONG_MARK)) long.push(`${path.relative(repoRoot, file)}: ${lines} lines`);
  }
  assert.deepEqual(long, [], `files over ${MAX_LINES} lines need "${LONG_MARK} …" in their first 40 lines`);
});
