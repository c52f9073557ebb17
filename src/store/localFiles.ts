/**
 * Which local file of a store a path names: no output of the index (a snapshot) may be written over
 * the files its own store keeps. Paths are compared as the file system resolves them (links to a
 * directory, `..`, a second name of one file), so another spelling of a store file is still caught.
 * @module
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { StoreFile } from './types.js';

/** `p` with its existing parent directories resolved through links (the file itself need not exist). */
function resolved(p: string): string {
  const abs = path.resolve(p);
  if (existsSync(abs)) return realpathSync(abs);
  const parent = path.dirname(abs);
  return parent === abs ? abs : path.join(resolved(parent), path.basename(abs));
}

/** Device and inode of an existing file: a hard link is the same file under another name. */
function inodeOf(p: string): string | undefined {
  try {
    const s = statSync(p);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * The store file (or directory) `p` would write over, as the store names it; undefined when `p` is
 * none of them. A directory entry holds every path inside it.
 */
export function storeFileAt(files: readonly StoreFile[], p: string): string | undefined {
  const name = resolved(p);
  const ino = inodeOf(name);
  for (const f of files) {
    const own = resolved(f.path);
    const rel = path.relative(own, name);
    if (rel === '' || (f.dir && !rel.startsWith('..') && !path.isAbsolute(rel))) return f.path;
    if (!f.dir && ino !== undefined && ino === inodeOf(own)) return f.path;
  }
  return undefined;
}
