/**
 * The one directory walk behind directories of documents (./dir.ts) and directories of shards
 * (./shards.ts): regular files and symbolic links below a root, never descending a link to a
 * directory (no loops). What a link may point to is each caller's rule, so links are returned
 * unresolved.
 * @module
 */
import { promises as fsp, type Dirent } from 'node:fs';
import path from 'node:path';
import { fsError } from './source.js';

/** A file-like entry found by {@link walkTree}. */
export interface WalkEntry {
  /** Path relative to the root, with `/`. */
  rel: string;
  /** A regular file, or a symbolic link (to anything; the caller resolves it). */
  kind: 'file' | 'link';
}

/** Options of {@link walkTree}. */
export interface WalkOptions {
  /** Entries (files and directories) whose name this returns true for are left out. Default: none. */
  skip?: (name: string) => boolean;
}

/**
 * Regular files and symbolic links below `root`, depth first in readdir order (callers sort). A
 * directory that cannot be read is an error naming it.
 */
export async function walkTree(root: string, options: WalkOptions = {}): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const relDir = pending.pop()!;
    const dir = path.join(root, relDir);
    let entries: Dirent[];
    try {
      entries = await fsp.readdir(dir, { withFileTypes: true });
    } catch (e) {
      throw fsError(dir, e);
    }
    for (const ent of entries) {
      if (options.skip?.(ent.name)) continue;
      const rel = relDir ? `${relDir}/${ent.name}` : ent.name;
      if (ent.isDirectory()) pending.push(rel);
      else if (ent.isFile()) out.push({ rel, kind: 'file' });
      else if (ent.isSymbolicLink()) out.push({ rel, kind: 'link' });
    }
  }
  return out;
}
