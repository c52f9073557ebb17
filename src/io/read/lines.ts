/**
 * Line formats: plain text (one document per line) and `id<TAB>text` lines (the layout of RCV1 dumps).
 * @module
 */
import type { TextLine } from '../codec/utf8.js';
import type { InputRecord, ReaderContext } from './record.js';

/**
 * A reader of one line at a time, synchronously: the record the line holds, if any. `row`: the
 * record's row when the caller numbers rows itself (it reads some lines another way); otherwise
 * the reader counts the lines it is given.
 */
export type LineReader = (text: string, line: number, eol: string, row?: number) => InputRecord | undefined;

/** Plain text, one line at a time (see {@link readTextLines}). */
export function textLineReader(ctx: ReaderContext): LineReader {
  return (text, line, eol) => {
    if (ctx.badLines?.has(line)) {
      ctx.invalid(line, 'invalid UTF-8');
      return undefined;
    }
    const out: InputRecord = { text, id: undefined, row: line - 1, line };
    if (ctx.raw) {
      out.raw = text;
      out.eol = eol;
    }
    return out;
  };
}

/** `id<TAB>text`, one line at a time (see {@link readIdTextLines}). */
export function idTextLineReader(ctx: ReaderContext): LineReader {
  let row = 0;
  return (text, line, eol, at) => {
    if (text.trim() === '') return undefined;
    const r = at ?? row;
    row = r + 1;
    if (ctx.badLines?.has(line)) {
      ctx.invalid(line, 'invalid UTF-8');
      return undefined;
    }
    const tab = text.indexOf('\t');
    if (tab < 0) {
      ctx.invalid(line, 'ragged row: expected "id<TAB>text" but the line has no tab');
      return undefined;
    }
    const out: InputRecord = { text: text.slice(tab + 1), id: text.slice(0, tab), row: r, line };
    if (ctx.raw) {
      out.raw = text;
      out.eol = eol;
    }
    return out;
  };
}

/** The records of a {@link LineReader} over async lines. */
export async function* readLinesWith(lines: AsyncIterable<TextLine>, read: LineReader): AsyncGenerator<InputRecord> {
  for await (const { text, line, eol } of lines) {
    const r = read(text, line, eol);
    if (r) yield r;
  }
}

/** Plain text: every line is a document, blank lines included (as empty documents), so row = line − 1. */
export function readTextLines(lines: AsyncIterable<TextLine>, ctx: ReaderContext): AsyncGenerator<InputRecord> {
  return readLinesWith(lines, textLineReader(ctx));
}

/** `id<TAB>text`: the id is everything before the first tab, the text everything after it. Blank lines are ignored. */
export function readIdTextLines(lines: AsyncIterable<TextLine>, ctx: ReaderContext): AsyncGenerator<InputRecord> {
  return readLinesWith(lines, idTextLineReader(ctx));
}
