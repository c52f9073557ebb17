/**
 * Line formats: plain text (one document per line) and `id<TAB>text` lines (the layout of RCV1 dumps).
 * @module
 */
import type { TextLine } from './utf8.js';
import type { InputRecord, ReaderContext } from './record.js';

/** Plain text: every line is a document, blank lines included (as empty documents), so row = line − 1. */
export async function* readTextLines(lines: AsyncIterable<TextLine>, ctx: ReaderContext): AsyncGenerator<InputRecord> {
  for await (const { text, line, eol } of lines) {
    if (ctx.badLines?.has(line)) {
      ctx.invalid(line, 'invalid UTF-8');
      continue;
    }
    const out: InputRecord = { text, id: undefined, row: line - 1, line };
    if (ctx.raw) {
      out.raw = text;
      out.eol = eol;
    }
    yield out;
  }
}

/** `id<TAB>text`: the id is everything before the first tab, the text everything after it. Blank lines are ignored. */
export async function* readIdTextLines(lines: AsyncIterable<TextLine>, ctx: ReaderContext): AsyncGenerator<InputRecord> {
  let row = 0;
  for await (const { text, line, eol } of lines) {
    if (text.trim() === '') continue;
    const r = row++;
    if (ctx.badLines?.has(line)) {
      ctx.invalid(line, 'invalid UTF-8');
      continue;
    }
    const tab = text.indexOf('\t');
    if (tab < 0) {
      ctx.invalid(line, 'ragged row: expected "id<TAB>text" but the line has no tab');
      continue;
    }
    const out: InputRecord = { text: text.slice(tab + 1), id: text.slice(0, tab), row: r, line };
    if (ctx.raw) {
      out.raw = text;
      out.eol = eol;
    }
    yield out;
  }
}
