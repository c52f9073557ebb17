/**
 * Whether a path can hold a file store, checked before anything is created there: by the store when
 * it opens, and by the CLI before it reads its input (a usage error, exit 2). Its own module so the
 * CLI checks a path without loading the store.
 * @module
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** What a new store may find in its directory: its lock and manifest, left by an open a crash cut short. */
const OWN_FILES = new Set(['lock', 'manifest.json.tmp']);

/** The store's own files, which something else may have made directories of (a registry's index named `table`). */
const STORE_FILES = ['manifest.json', 'lock', 'log', 'records', 'table'];

/**
 * Why `dir` cannot hold a file store, or undefined: a path that is a file (a SQLite database, an
 * input), or a directory that holds other files and no store (`--store .` would scatter the store's
 * files among the user's). A missing or empty directory, or a store's, is fine.
 */
export function fileStoreDirProblem(dir: string): string | undefined {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st) return undefined;
  if (!st.isDirectory())
    return `file store ${dir}: that path is a file, and a file store is a directory (a SQLite database is sqlite:${dir})`;
  const taken = STORE_FILES.find((f) => statSync(path.join(dir, f), { throwIfNoEntry: false })?.isDirectory());
  if (taken) return `file store ${dir}: ${path.join(dir, taken)} is a directory, where the store keeps a file of that name: move it out of the store`;
  if (existsSync(path.join(dir, 'manifest.json'))) return undefined;
  const other = readdirSync(dir).filter((f) => !OWN_FILES.has(f));
  if (other.length === 0) return undefined;
  return `file store ${dir}: the directory holds ${other.length} file${other.length === 1 ? '' : 's'} (${other.slice(0, 3).join(', ')}${
    other.length > 3 ? ', …' : ''
  }) and no index: a new store needs a new or empty directory`;
}
