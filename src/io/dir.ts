/**
 * A directory of documents: every .txt, .md and .html file below it, one document each, with its
 * relative path (with `/`) as the id, in sorted path order.
 * @module
 */
import { promises as fsp } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import path from 'node:path';
import { htmlToText } from './html.js';
import { fsError } from './source.js';
import type { InputRecord, ReaderContext } from './record.js';

/** File extensions read from a directory. */
export const DIR_EXTENSIONS = ['.txt', '.md', '.markdown', '.html', '.htm'];

/** Relative paths (with `/`) of the document files under `root`, sorted. */
export async function listDocumentFiles(root: string): Promise<string[]> {
  let entries: string[];
  try {
    const st = await fsp.stat(root);
    if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    entries = (await fsp.readdir(root, { recursive: true })) as string[];
  } catch (e) {
    throw fsError(root, e);
  }
  const files: string[] = [];
  for (const rel of entries) {
    if (!DIR_EXTENSIONS.includes(path.extname(rel).toLowerCase())) continue;
    const st = await fsp.stat(path.join(root, rel));
    if (st.isFile()) files.push(rel.split(path.sep).join('/'));
  }
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
  const files = await listDocumentFiles(root);
  for (let row = 0; row < files.length; row++) {
    const rel = files[row]!;
    const full = path.join(root, rel);
    let buf: Buffer;
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
