#!/usr/bin/env node
// Moves source files to new paths and rewrites every reference to them, so that each reference
// still names the same file from its new place. Written for the folder re-cut of issue #49
// (scripts/recut-map.json); re-applied to other branches to bring them into the new layout before
// they merge.
//
// Usage (from the repository root, on a clean working tree or one with edits of your own):
//
//   node scripts/move-modules.mjs scripts/recut-map.json            # move and rewrite
//   node scripts/move-modules.mjs scripts/recut-map.json --dry-run  # only say what it would do
//
// then `npm run build && npx eslint .`, and commit.
//
// Bringing a branch made before the re-cut into the new layout, so that it merges with the branch
// that has it. The move was committed alone, as this script's output ("Folder re-cut (#49): node
// scripts/move-modules.mjs …", call it MOVE; its parent, which adds this script and the map, BEFORE):
//
//   git checkout my-branch
//   git merge BEFORE                  # the code just before the move: conflicts, if any, in the old layout
//   node scripts/move-modules.mjs scripts/recut-map.json
//   npm run build && npx eslint .     # and fix what the script reported (files it does not know)
//   git add -A && git commit -m 'Folder re-cut (#49) on my-branch: node scripts/move-modules.mjs scripts/recut-map.json'
//   git merge -s ours MOVE            # MOVE's changes are exactly what the script just did here
//   git merge recut                   # (or main, once it holds the re-cut): the rest, same paths on both sides
//
// Merging MOVE with `-s ours` records it as merged without a conflict on every line that both the
// branch and the move changed (an import the branch edited, now with a new path on both sides): the
// script made the same change here. Do not merge MOVE normally, and use this script as of BEFORE.
//
// The map is JSON: { "moves": { "old/path": "new/path", ... }, "stays": [ "path", ... ] }. A key
// ending in `/` moves a whole folder (every file below it, to the same place below the value).
// "stays" lists the files of those folders that stay where they are on purpose, so that a file the
// map does not know (one added on the branch) is reported. Paths are relative to the repository root.
//
// What it does:
// 1. Moves every mapped file that exists (`git mv` for tracked files, a rename for untracked ones);
//    a file already at its new path is left alone; an old and a new file both present is an error,
//    and nothing is moved.
// 2. In every text file of the repository (tracked or untracked, not ignored; not the skipped ones
//    below), rewrites
//    - relative references: import/export/`import()` specifiers, `new URL('./x.js', import.meta.url)`,
//      and any `./…` or `../…` path in strings, comments and Markdown links, resolved against the file
//      (against its old place when it moved) to a source file (`.js` names the `.ts` source, as in
//      NodeNext imports; `.wat`, `.json`, `.md` and other files as they are). A reference is rewritten
//      only when its target or the file holding it moved, and keeps its own extension style.
//    - repository-rooted paths: `src/…`, `dist/src/…` (the compiled `.js`/`.d.ts` of a moved `.ts`) in
//      docs, comments, tests and scripts.
//    References that resolve to no file are left alone, as is everything else. So it is idempotent
//    (a second run finds nothing to do) and safe on a branch with other edits: it touches only
//    references to moved files, and references inside moved files.
// 3. Reports what it cannot map: files left behind in a folder the map moves files out of (a file
//    added on the branch: give it a line in the map and run again), and mentions of a folder the map
//    splits (`src/shard/` in prose), which need a person.
//
// Skipped: node_modules, dist, package-lock.json, CHANGELOG.md (its entries describe the layout of
// their time), this script and the map, and files over 4 MB or with NUL bytes. `--skip PATH` adds one.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const dryRun = args.includes('--dry-run');
const skipArgs = [];
for (let i = 0; i < args.length; i++) if (args[i] === '--skip') skipArgs.push(args[++i]);
const mapFile = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--skip');
if (!mapFile) {
  process.stderr.write('usage: node scripts/move-modules.mjs MAP.json [--dry-run] [--skip PATH]…\n');
  process.exit(2);
}

const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
const rel = (p) => path.relative(root, p).split(path.sep).join('/');
const abs = (p) => path.join(root, p);
const map = JSON.parse(readFileSync(path.resolve(mapFile), 'utf8'));
const moves = map.moves ?? map;
const SKIP = new Set([
  'package-lock.json',
  'CHANGELOG.md',
  'scripts/move-modules.mjs',
  rel(path.resolve(mapFile)),
  ...skipArgs.map((s) => rel(path.resolve(s))),
]);
/** Files the map leaves where they are on purpose (`"stays"`): not reported as left behind. */
const stays = new Set(map.stays ?? []);

// ---- The file map: every old file path → its new path (folders expanded against both trees). ----

function filesBelow(dir) {
  const out = [];
  if (!existsSync(abs(dir))) return out;
  for (const e of readdirSync(abs(dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...filesBelow(p));
    else out.push(p);
  }
  return out;
}

/** old → new for every file the map names (existing at either end), folders expanded. */
const fileMap = new Map();
/** Folders the map moves files out of (their prose mentions may need a person). */
const sourceDirs = new Set();
for (const [from, to] of Object.entries(moves)) {
  if (from.startsWith('//')) continue; // comment keys
  if (from.endsWith('/')) {
    const f = from.replace(/\/$/, '');
    const t = to.replace(/\/$/, '');
    for (const p of filesBelow(f)) fileMap.set(p, t + p.slice(f.length));
    for (const p of filesBelow(t)) if (!fileMap.has(f + p.slice(t.length))) fileMap.set(f + p.slice(t.length), p);
  } else {
    fileMap.set(from, to);
  }
}
for (const from of fileMap.keys()) sourceDirs.add(path.posix.dirname(from));
/** new → old, to find the old place of a moved file. */
const reverse = new Map([...fileMap].map(([a, b]) => [b, a]));

// ---- 1. Moves. ----

const tracked = new Set(execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean));
const toMove = [];
const conflicts = [];
for (const [from, to] of fileMap) {
  const hasOld = existsSync(abs(from));
  const hasNew = existsSync(abs(to));
  if (hasOld && hasNew) conflicts.push(`${from} and ${to} both exist`);
  else if (hasOld) toMove.push([from, to]);
}
if (conflicts.length > 0) {
  process.stderr.write(`move-modules: nothing done; resolve these first:\n  ${conflicts.join('\n  ')}\n`);
  process.exit(1);
}
/** Files moved in this run: new path → old path (their references resolve from the old place). */
const movedNow = new Map();
for (const [from, to] of toMove) {
  movedNow.set(to, from);
  if (dryRun) continue;
  mkdirSync(path.dirname(abs(to)), { recursive: true });
  if (tracked.has(from)) execFileSync('git', ['mv', from, to], { cwd: root });
  else renameSync(abs(from), abs(to));
}
if (!dryRun) {
  // Remove folders the moves left empty.
  const dirs = [...new Set(toMove.map(([from]) => path.posix.dirname(from)))].sort((a, b) => b.length - a.length);
  for (const d of dirs) {
    let cur = d;
    while (cur !== '.' && cur !== 'src' && existsSync(abs(cur)) && readdirSync(abs(cur)).length === 0) {
      rmdirSync(abs(cur));
      cur = path.posix.dirname(cur);
    }
  }
}

// ---- 2. References. ----

/** Whether a repository path exists now (a file, or in a dry run a file about to move). */
function present(p) {
  if (dryRun) {
    if (fileMap.has(p) && movedNow.has(fileMap.get(p))) return false; // about to leave
    if (movedNow.has(p)) return true; // about to arrive
  }
  return existsSync(abs(p));
}

/** Source-file candidates a written path may stand for (NodeNext: `.js` names `.ts`). */
function candidates(p) {
  const out = [p];
  const ext = path.posix.extname(p);
  if (ext === '.js') out.push(p.slice(0, -3) + '.ts', p.slice(0, -3) + '.tsx');
  else if (ext === '.mjs') out.push(p.slice(0, -4) + '.mts');
  else if (ext === '.cjs') out.push(p.slice(0, -4) + '.cts');
  else if (p.endsWith('.d.ts')) out.push(p.slice(0, -5) + '.ts');
  else if (ext === '') out.push(p + '.ts', p + '.js', p + '.mjs');
  return out;
}

/**
 * Where the written path `p` (repository-relative, as resolved from the old layout) is now:
 * `{ now, source }` (`source`: the candidate it matched, to carry the written extension over), or
 * undefined when it names no file.
 */
function locate(p) {
  for (const c of candidates(p)) {
    if (fileMap.has(c) && !present(c)) return { now: fileMap.get(c), source: c };
    if (present(c)) return { now: c, source: c };
  }
  return undefined;
}

/** `written` re-spelt for the file's new place `newSource` (same extension style as written). */
function respell(written, source, now) {
  // written ends like source (possibly with another extension): swap the path, keep the suffix.
  const wExt = written.endsWith('.d.ts') ? '.d.ts' : path.posix.extname(written);
  const sExt = source.endsWith('.d.ts') ? '.d.ts' : path.posix.extname(source);
  const nExt = now.endsWith('.d.ts') ? '.d.ts' : path.posix.extname(now);
  const stem = now.slice(0, now.length - nExt.length);
  if (wExt === sExt) return now;
  if (wExt === '' || !path.posix.basename(written).includes('.')) return stem;
  return stem + wExt;
}

function relSpec(fromDir, to) {
  let r = path.posix.relative(fromDir, to);
  if (!r.startsWith('.')) r = './' + r;
  return r;
}

const RELATIVE = /(?<=^|[\s'"`([=,:<>{])(\.{1,2}\/[A-Za-z0-9_\-./@]*[A-Za-z0-9_\-@/])/gm;
const ROOTED = /(?<![A-Za-z0-9_\-./@])((?:dist\/)?src\/[A-Za-z0-9_\-./@]*[A-Za-z0-9_\-@])/g;

let changedFiles = 0;
let changedRefs = 0;
const splitMentions = new Map();
const splitDirs = sourceDirs;

function rewrite(file) {
  const old = movedNow.get(file) ?? file;
  const oldDir = path.posix.dirname(old);
  const newDir = path.posix.dirname(file);
  const moved = old !== file;
  const text = readFileSync(abs(dryRun && moved ? old : file), 'utf8');
  let n = 0;
  let out = text.replace(RELATIVE, (written) => {
    const resolved = path.posix.normalize(path.posix.join(oldDir, written));
    const hit = resolved.startsWith('..') ? undefined : locate(resolved);
    if (!hit) {
      // `path.join(here, '../../src/x.js')` from a compiled test: the part from src/ is repository-rooted.
      const i = written.indexOf('src/');
      if (i < 0) return written;
      const tail = rooted(written.slice(i));
      if (tail === written.slice(i)) return written;
      n++;
      return written.slice(0, i) + tail;
    }
    if (!moved && hit.now === hit.source) return written;
    let spelt = relSpec(newDir, respell(written, hit.source, hit.now));
    if (written.endsWith('/') && !spelt.endsWith('/')) spelt += '/';
    if (spelt === written) return written;
    n++;
    return spelt;
  });
  out = out.replace(ROOTED, (written) => {
    const r = rooted(written);
    if (r !== written) n++;
    else {
      const d = written.replace(/\/$/, '').replace(/^dist\//, '');
      if (splitDirs.has(d)) {
        const list = splitMentions.get(file) ?? new Set();
        list.add(written);
        splitMentions.set(file, list);
      }
    }
    return r;
  });
  if (n > 0) {
    changedFiles++;
    changedRefs += n;
    if (!dryRun) writeFileSync(abs(file), out);
    else process.stdout.write(`would rewrite ${n} reference(s) in ${file}\n`);
  }
}

/** A repository-rooted path (`src/…` or `dist/src/…`) re-spelt if it names a moved file. */
function rooted(written) {
  const dist = written.startsWith('dist/');
  const p = dist ? written.slice(5) : written;
  const hit = locate(p);
  if (!hit || hit.now === hit.source) return written;
  return (dist ? 'dist/' : '') + respell(p, hit.source, hit.now);
}

const TEXT_EXT = /\.(ts|mts|cts|js|mjs|cjs|json|md|yml|yaml|html|css|txt|sh)$/;
const all = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter(Boolean);
const files = new Set();
for (const f0 of all) {
  // In a real run the index already shows moved files at their new paths; in a dry run map them.
  const f = dryRun && fileMap.has(f0) && movedNow.has(fileMap.get(f0)) ? fileMap.get(f0) : f0;
  if (SKIP.has(f) || f.startsWith('node_modules/') || f.startsWith('dist/')) continue;
  const real = dryRun ? movedNow.get(f) ?? f : f;
  if (!existsSync(abs(real))) continue;
  const base = path.posix.basename(f);
  const isText = TEXT_EXT.test(f) || (!base.includes('.') && statSync(abs(real)).size < 1 << 20);
  if (!isText || statSync(abs(real)).size > 4 << 20) continue;
  if (readFileSync(abs(real)).includes(0)) continue;
  files.add(f);
}
for (const f of [...files].sort()) rewrite(f);

// ---- 3. Report. ----

const leftBehind = [];
for (const d of sourceDirs) {
  if (!existsSync(abs(d))) continue;
  for (const e of readdirSync(abs(d), { withFileTypes: true })) {
    const p = `${d}/${e.name}`;
    if (e.isFile() && !fileMap.has(p) && !reverse.has(p) && !stays.has(p)) leftBehind.push(p);
  }
}
process.stdout.write(
  `${dryRun ? 'would move' : 'moved'} ${toMove.length} file(s); ${
    dryRun ? 'would rewrite' : 'rewrote'
  } ${changedRefs} reference(s) in ${changedFiles} file(s)\n`,
);
if (leftBehind.length > 0)
  process.stdout.write(`not in the map, left where they are (add them to the map if they belong to a new folder):\n  ${leftBehind.sort().join('\n  ')}\n`);
if (splitMentions.size > 0) {
  process.stdout.write('mentions of a folder the map splits (check the prose by hand):\n');
  for (const [f, s] of [...splitMentions].sort()) process.stdout.write(`  ${f}: ${[...s].join(', ')}\n`);
}
