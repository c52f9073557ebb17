/**
 * Reading one whole document from a file (for `compare`), checked as UTF-8, HTML reduced to text.
 * @module
 */
import { promises as fsp } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { InputError } from '../../common/errors.js';
import { htmlToText } from './html.js';
import { fsError } from './source.js';
import { noteInput } from './inputStamps.js';

/** The text of a file: gunzipped when gzip, BOM dropped, HTML (.html/.htm) reduced to its text. */
export async function readTextFile(file: string): Promise<string> {
  let buf: Buffer;
  noteInput(file);
  try {
    buf = await fsp.readFile(file);
  } catch (e) {
    throw fsError(file, e);
  }
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) {
    try {
      buf = gunzipSync(buf);
    } catch (e) {
      throw new InputError(file, undefined, `invalid gzip data (${(e as Error).message})`);
    }
  }
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
  if (!isUtf8(buf)) {
    let line = 1;
    let start = 0;
    for (;;) {
      let end = buf.indexOf(10, start);
      if (end === -1) end = buf.length;
      if (!isUtf8(buf.subarray(start, end)) || end >= buf.length) break;
      start = end + 1;
      line++;
    }
    throw new InputError(file, line, 'invalid UTF-8');
  }
  const text = buf.toString('utf8');
  const ext = path.extname(file.replace(/\.gz$/i, '')).toLowerCase();
  return ext === '.html' || ext === '.htm' ? htmlToText(text) : text;
}
