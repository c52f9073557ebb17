/**
 * A directory of documents: every .txt, .md and .html file below it, one document each, with its
 * relative path (with `/`) as the id, in sorted path order. Symbolic links never lead outside the
 * directory.
 * @module
 */
import { promises as fsp } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import path from 'node:path';
import { htmlToText } from './html.js';
import { fsError } from './source.js';
import { walkTree } from './walk.js';
import { noteInput } from './inputStamps.js';
import type { InputRecord, ReaderContext } from './record.js';

/** File extensions read from a directory. */
export const DIR_EXTENSIONS = ['.txt', '.md', '.markdown', '.html', '.htm'];

/** A directory entry that was not read, and why. */
export interface RefusedEntry {
  /** Path of the entry (root joined with its relative path). */
  path: string;
  /** Why it was not read. */
  reason: string;
}

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Relative paths (with `/`) of the document files under `root`, sorted, and the symbolic links that
 * were refused. A symbolic link to a file is read only when its target lies inside the root; links
 * to directories are never descended (no loops; a target inside the root is read at its own path).
 * Node's recursive readdir follows directory links, so the walk is ./walk.ts's.
 */
export async function listDocumentFiles(root: string): Promise<{ files: string[]; refused: RefusedEntry[] }> {
  let realRoot: string;
  try {
    const st = await fsp.stat(root);
    if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    realRoot = await fsp.realpath(root);
  } catch (e) {
    throw fsError(root, e);
  }
  const files: string[] = [];
  const refused: RefusedEntry[] = [];
  for (const { rel, kind } of await walkTree(root)) {
    const wanted = DIR_EXTENSIONS.includes(path.extname(rel).toLowerCase());
    if (kind === 'file') {
      if (wanted) files.push(rel);
      continue;
    }
    const full = path.join(root, rel);
    let target: string;
    try {
      target = await fsp.realpath(full);
    } catch {
      if (wanted) refused.push({ path: full, reason: 'broken symbolic link' });
      continue;
    }
    const st = await fsp.stat(target);
    if (!inside(realRoot, target)) {
      if (wanted || st.isDirectory()) refused.push({ path: full, reason: `symbolic link to ${target}, outside the input directory: not followed` });
    } else if (st.isFile() && wanted) {
      files.push(rel);
    }
  }
  return { files: files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), refused: refused.sort((a, b) => (a.path < b.path ? -1 : 1)) };
}

function firstBadLine(buf: Buffer): number {
  let line = 1;
  let start = 0;
  while (start <= buf.length) {
    let end = buf.indexOf(10, start);
    if (end === -1) end = buf.length;
    if (!isUtf8(buf.subarray(start, end))) return line;
    start = end + 1;
    line++;
  }
  return 1;
}

/** Reads the documents of a directory. HTML files are reduced to their text. */
export async function* readDirectory(root: string, ctx: ReaderContext, onBytes?: (n: number) => void): AsyncGenerator<InputRecord> {
  const { files, refused } = await listDocumentFiles(root);
  // Refused links are invalid records: an error naming the link, or counted with --skip-invalid.
  for (const r of refused) ctx.invalid(undefined, r.reason, r.path);
  for (let row = 0; row < files.length; row++) {
    const rel = files[row]!;
    const full = path.join(root, rel);
    let buf: Buffer;
    noteInput(full);
    try {
      buf = await fsp.readFile(full);
    } catch (e) {
      throw fsError(full, e);
    }
    onBytes?.(buf.length);
    if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
    if (!isUtf8(buf)) {
      // Name the file itself, not the directory: that is where the problem is.
      const line = firstBadLine(buf);
      ctx.invalid(line, 'invalid UTF-8', full);
      continue;
    }
    let text = buf.toString('utf8');
    const ext = path.extname(rel).toLowerCase();
    if (ext === '.html' || ext === '.htm') text = htmlToText(text);
    const out: InputRecord = { text, id: rel, row, line: row + 1 };
    if (ctx.raw) out.raw = rel;
    yield out;
  }
}
