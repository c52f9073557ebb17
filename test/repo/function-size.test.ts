/**
 * Functions stay small (issue #49 item 3): at most 80 lines and 4 positional parameters (an options
 * object counts as one). A function past either limit says why in its leading comment, with
 * "Why this function is long:" or "Why these parameters:", or is one of the known offenders in
 * test/repo/function-size-baseline.json, which may only shrink: a listed function may not grow, and
 * one back within the limits must leave the list. New code is held to the limits from its first commit.
 *
 * When this fails because you shortened a function, delete its line from the baseline. When it
 * fails because a function grew, cut it (or say why, as above). The failure lists what to change.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../helpers.js';

const MAX_LINES = 80;
const MAX_PARAMS = 4;
const WHY = /Why this function is long:|Why these parameters:/;
const SRC = path.join(repoRoot, 'src');

interface Size {
  lines: number;
  params: number;
}

function sourceFiles(dir = SRC): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'types') out.push(...sourceFiles(p));
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out.sort();
}

/** A stable name for a function: its own, its variable's or property's, or "callback in" its enclosing function's. */
function nameOf(n: ts.Node, enclosing: string): string {
  const named = n as ts.Node & { name?: ts.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isPrivateIdentifier(named.name) || ts.isStringLiteral(named.name))) return named.name.text;
  if (ts.isConstructorDeclaration(n)) return 'constructor';
  const p = n.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && ts.isIdentifier(p.name)) return p.name.text;
  return `callback in ${enclosing || '(module)'}`;
}

/** Every function of src/ past a limit, by `file#name` (the largest of same-named ones), unless its comment says why. */
function offenders(): Map<string, Size> {
  const out = new Map<string, Size>();
  for (const file of sourceFiles()) {
    const text = readFileSync(file, 'utf8');
    const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const rel = path.relative(repoRoot, file).split(path.sep).join('/');
    const visit = (n: ts.Node, enclosing: string): void => {
      let inner = enclosing;
      if (ts.isFunctionLike(n) && (n as ts.FunctionLikeDeclaration).body) {
        const f = n as ts.FunctionLikeDeclaration;
        const name = nameOf(f, enclosing);
        inner = name.startsWith('callback in ') ? enclosing : name;
        const lines = src.getLineAndCharacterOfPosition(f.end).line - src.getLineAndCharacterOfPosition(f.getStart(src)).line + 1;
        const params = f.parameters.length;
        const comment = (ts.getLeadingCommentRanges(text, (ts.isVariableDeclaration(f.parent) ? f.parent.parent.parent : f).getFullStart()) ?? []).map((r) =>
          text.slice(r.pos, r.end)
        ).join('\n');
        if ((lines > MAX_LINES || params > MAX_PARAMS) && !WHY.test(comment)) {
          const key = `${rel}#${name}`;
          const had = out.get(key);
          out.set(key, { lines: Math.max(lines, had?.lines ?? 0), params: Math.max(params, had?.params ?? 0) });
        }
      }
      ts.forEachChild(n, (c) => visit(c, inner));
    };
    visit(src, '');
  }
  return out;
}

test(`no function over ${MAX_LINES} lines or ${MAX_PARAMS} positional parameters but the known ones, which only shrink`, () => {
  const baseline = JSON.parse(readFileSync(path.join(repoRoot, 'test/repo/function-size-baseline.json'), 'utf8')) as { functions: Record<string, Size> };
  const known = new Map(Object.entries(baseline.functions));
  const now = offenders();
  const problems: string[] = [];
  for (const [key, size] of now) {
    const was = known.get(key);
    if (!was) problems.push(`${key}: ${size.lines} lines, ${size.params} parameters (new: cut it, take an options object, or say why in its comment)`);
    else if (size.lines > Math.max(was.lines, MAX_LINES) || size.params > Math.max(was.params, MAX_PARAMS))
      problems.push(`${key}: grew to ${size.lines} lines, ${size.params} parameters (the baseline has ${was.lines}, ${was.params})`);
  }
  for (const [key, was] of known) {
    const size = now.get(key);
    if (!size) problems.push(`${key}: within the limits now (or gone): delete its line from test/repo/function-size-baseline.json`);
    else if (size.lines < was.lines || size.params < was.params)
      problems.push(`${key}: shrank to ${size.lines} lines, ${size.params} parameters: lower its baseline entry to that`);
  }
  assert.deepEqual(problems, [], `\n${problems.join('\n')}\n`);
});
