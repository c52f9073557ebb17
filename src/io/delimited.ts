/**
 * TSV and CSV with a header row. Quotes are relaxed: a field is unquoted only when it is properly
 * quoted, so TSV text with stray quotes (`"like this" here`) stays literal.
 *
 * Lines where no field starts with a quote are split directly (exactly what csv-parse does with
 * them under relax_quotes, 30× faster); records with quoted fields, possibly spanning lines, are
 * parsed by csv-parse.
 * @module
 */
import { parse } from 'csv-parse/sync';
import { textLines, type TextChunk } from './utf8.js';
import { InputError } from './errors.js';
import type { InputRecord, ReaderContext } from './record.js';

/** Which columns make a document. */
export interface ColumnSpec {
  /** Text column names (values joined by one space). Default: a column named `text`, or the only column. */
  text?: string[];
  /** Id column name. Default: none (the row number is the id). */
  id?: string;
}

/** What the header said, filled in when the first record is read. */
export interface DelimitedHeader {
  /** Column names. */
  columns: string[];
  /** The header line as it appears in the input. */
  raw: string;
}

/** A quoted record may span at most this many lines: beyond, its opening quote is taken as unclosed. */
const MAX_RECORD_LINES = 10000;

/** Resolves a column name: exact match first, then trimmed and case-insensitive. */
export function findColumn(columns: readonly string[], name: string): number {
  const exact = columns.indexOf(name);
  if (exact >= 0) return exact;
  const want = name.trim().toLowerCase();
  return columns.findIndex((c) => c.trim().toLowerCase() === want);
}

function listColumns(columns: readonly string[]): string {
  return columns.map((c) => JSON.stringify(c)).join(', ');
}

/**
 * Reads delimited records. Throws (through `ctx.invalid`) for a record with a different number of
 * fields than the header, invalid UTF-8, or a quoting error; throws an {@link InputError} for an
 * unknown column.
 */
export async function* readDelimited(
  chunks: AsyncIterable<TextChunk>,
  ctx: ReaderContext,
  delimiter: string,
  spec: ColumnSpec,
  onHeader: (h: DelimitedHeader) => void,
): AsyncGenerator<InputRecord> {
  let columns: string[] | undefined;
  let textIdx: number[] = [];
  let idIdx = -1;
  let row = 0;
  const quoteStart = delimiter + '"';
  const quoteOptions = { delimiter, relax_quotes: true, relax_column_count: true, skip_empty_lines: true };

  /** Handles one record spanning lines [line, end]; returns the document, if any. */
  const record = (f: string[], raw: string, line: number, end: number): InputRecord | undefined => {
    if (!columns) {
      columns = f;
      // Header problems are never skippable: without a header there is nothing to read.
      const fail = (reason: string): never => {
        throw new InputError(ctx.file, line, reason);
      };
      if (ctx.badLines?.has(line)) fail('invalid UTF-8 in the header');
      const names = spec.text ?? [];
      if (names.length === 0) {
        const t = findColumn(columns, 'text');
        if (t >= 0) textIdx = [t];
        else if (columns.length === 1) textIdx = [0];
        else fail(`no text column given (use --text); available columns: ${listColumns(columns)}`);
      } else {
        textIdx = names.map((name) => {
          const i = findColumn(columns!, name);
          if (i < 0) fail(`unknown column "${name}"; available columns: ${listColumns(columns!)}`);
          return i;
        });
      }
      if (spec.id !== undefined) {
        idIdx = findColumn(columns, spec.id);
        if (idIdx < 0) fail(`unknown id column "${spec.id}"; available columns: ${listColumns(columns)}`);
      }
      onHeader({ columns, raw });
      return undefined;
    }
    const r = row++;
    if (ctx.badLines && ctx.badLines.size > 0) {
      for (let l = line; l <= end; l++) {
        if (ctx.badLines.has(l)) {
          ctx.invalid(line, 'invalid UTF-8');
          return undefined;
        }
      }
    }
    if (f.length !== columns.length) {
      ctx.invalid(line, `ragged row: ${f.length} field${f.length === 1 ? '' : 's'}, the header has ${columns.length}`);
      return undefined;
    }
    const text = textIdx.length === 1 ? f[textIdx[0]!]! : textIdx.map((i) => f[i]!).join(' ');
    const out: InputRecord = { text, id: idIdx >= 0 ? f[idIdx] : undefined, row: r, line };
    if (ctx.raw) out.raw = raw;
    return out;
  };

  let pending: string[] = [];
  let pendingLine = 0;
  /** Parses the pending lines with csv-parse; returns false while a quoted field is still open. */
  const parsePending = (atEnd: boolean): InputRecord[] | false => {
    const raw = pending.join('\n');
    const end = pendingLine + pending.length - 1;
    let recs: string[][];
    try {
      recs = parse(raw, quoteOptions) as string[][];
    } catch (e) {
      const err = e as { code?: string; message?: string };
      if (err.code === 'CSV_QUOTE_NOT_CLOSED' && !atEnd && pending.length < MAX_RECORD_LINES) return false;
      pending = [];
      if (!columns) throw new InputError(ctx.file, pendingLine, `unreadable header (${(err.message ?? String(e)).replace(/ at line \d+/, '')})`);
      row++;
      ctx.invalid(pendingLine, (err.message ?? String(e)).replace(/ at line \d+/, '').replace(/^Quote Not Closed: .*/, 'a quoted field is never closed'));
      return [];
    }
    pending = [];
    const out: InputRecord[] = [];
    for (const f of recs) {
      const d = record(f, raw, pendingLine, end);
      if (d) out.push(d);
    }
    return out;
  };

  for await (const { text, line } of textLines(chunks)) {
    if (pending.length > 0) {
      pending.push(text);
      const got = parsePending(false);
      if (got) yield* got;
      continue;
    }
    // With relaxed quotes, only a field that starts with a quote is parsed as quoted; a line where no
    // field does is split exactly as csv-parse would split it.
    if (text.charCodeAt(0) !== 34 && text.indexOf(quoteStart) < 0) {
      if (text === '') continue;
      const d = record(text.split(delimiter), text, line, line);
      if (d) yield d;
      continue;
    }
    pending = [text];
    pendingLine = line;
    const got = parsePending(false);
    if (got) yield* got;
  }
  if (pending.length > 0) {
    const got = parsePending(true);
    if (got) yield* got;
  }
}
