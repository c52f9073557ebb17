/**
 * Locating the browser assets: the chart library bundles from node_modules (d3 and Observable
 * Plot, UMD builds) and this package's own static files in src/web. Everything is served or
 * inlined locally; nothing is loaded from a CDN.
 * @module
 */
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

let ownRoot: string | undefined;

/**
 * This package's root directory (where its package.json is): found by walking up from this file,
 * which runs from dist/src/web after tsc and from dist/cli in the bundled CLI, so paths to shipped
 * files (src/web, dist/src, package.json) never depend on where the code was compiled to.
 */
export function neardupRoot(): string {
  if (ownRoot !== undefined) return ownRoot;
  let dir = here;
  for (;;) {
    const pj = path.join(dir, 'package.json');
    if (existsSync(pj) && (JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === 'neardup') return (ownRoot = dir);
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find neardup's package.json above ${here}`);
    dir = up;
  }
}

/** The vendored browser bundles: name → [package, file inside the package]. */
export const VENDOR_BUNDLES = {
  'd3.min.js': ['d3', 'dist/d3.min.js'],
  'plot.umd.min.js': ['@observablehq/plot', 'dist/plot.umd.min.js'],
  // jsdiff (BSD-3-Clause, 37 KB minified): the word-by-word differences view of the page and report.
  'diff.min.js': ['diff', 'dist/diff.min.js'],
} as const;

/** A vendored bundle name. */
export type VendorBundle = keyof typeof VENDOR_BUNDLES;

function packageRoot(name: string): string {
  // Both packages export only ".", so resolve the entry and walk up to the package.json.
  let dir = path.dirname(require.resolve(name));
  for (;;) {
    const pj = path.join(dir, 'package.json');
    if (existsSync(pj) && (JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === name) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find the package directory of ${name}`);
    dir = up;
  }
}

const cache = new Map<string, string>();

/** The text of a vendored bundle (read once, then cached). */
export function vendorBundle(name: VendorBundle): string {
  let s = cache.get(name);
  if (s === undefined) {
    const [pkg, file] = VENDOR_BUNDLES[name];
    s = readFileSync(path.join(packageRoot(pkg), file), 'utf8');
    cache.set(name, s);
  }
  return s;
}

/**
 * The directory of the static web files (src/web, shipped as they are): a copy next to the running
 * file wins, else the package's src/web.
 */
export function webDir(): string {
  const candidates = [here, path.join(neardupRoot(), 'src/web')];
  for (const d of candidates) if (existsSync(path.join(d, 'index.html'))) return d;
  throw new Error(`cannot find the web assets (index.html) in ${candidates.join(' or ')}`);
}

/** The text of a static web file in {@link webDir}, e.g. `report.js`. */
export function webFile(name: string): string {
  const key = `web:${name}`;
  let s = cache.get(key);
  if (s === undefined) {
    s = readFileSync(path.join(webDir(), name), 'utf8');
    cache.set(key, s);
  }
  return s;
}

/**
 * Compiled library modules the page loads as browser ES modules (they import nothing): served under
 * /ui/ by the name on the left, so the page runs exactly the library's code (commonPassages).
 */
export const LIBRARY_MODULES = {
  'passages.js': 'dist/src/similarity/passages.js',
} as const;

/** A library module name. */
export type LibraryModule = keyof typeof LIBRARY_MODULES;

/**
 * The text of a compiled library module (read once, then cached), without its source-map comment
 * (the map is not served). Throws naming the missing file when the library is not compiled.
 */
export function libraryModule(name: LibraryModule): string {
  const key = `lib:${name}`;
  let s = cache.get(key);
  if (s === undefined) {
    const file = path.join(neardupRoot(), LIBRARY_MODULES[name]);
    if (!existsSync(file)) throw new Error(`cannot find the compiled library module ${file} that the web page serves as /ui/${name} (run npm run build)`);
    s = readFileSync(file, 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
    cache.set(key, s);
  }
  return s;
}
