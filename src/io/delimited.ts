/**
 * TSV and CSV with a header row. Quotes are relaxed: a field is unquoted only when it is properly
 * quoted, so TSV text with stray quotes (`"like this" here`) stays literal.
 *
 * Lines where no field starts with a quote are split directly (exactly what csv-parse does with
 * them under relax_quotes, 30× faster); records with quoted fields, possibly spanning lines, are
 * parsed by csv-parse.
 * @module
 */
import { createRequire } from 'node:module';
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

/** csv-parse, loaded on the first quoted record: most inputs never need it, and loading it slowed every start. */
let csvParse: ((input: string, options: object) => unknown) | undefined;
const parse = (input: string, options: object): unknown =>
  (csvParse ??= (createRequire(import.meta.url)('csv-parse/sync') as { parse: (input: string, options: object) => unknown }).parse)(input, options);

/** A quoted record may span at most this many lines: beyond, its opening quote is taken as unclosed. */
const MAX_RECORD_LINES = 10000;

const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
/** A quote inside a quoted field: either the closing quote or the first of a doubled one. */
const QUOTE_IN_QUOTED = 3;

/**
 * Runs the quote-state machine of a relaxed-quotes CSV parser over one line and the line break after
 * it. Returns QUOTED when the record continues on the next line, else FIELD_START (record complete).
 * A quoted field whose closing quote is followed by other text becomes a literal field, as in csv-parse.
 */
export function scanQuotes(line: string, state: number, delimiter: string): number {
  const d = delimiter.charCodeAt(0);
  const multi = delimiter.length > 1;
  let s = state;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    const isDelim = c === d && (!multi || line.startsWith(delimiter, i));
    if (s === QUOTED) {
      if (c === 34) s = QUOTE_IN_QUOTED;
    } else if (s === QUOTE_IN_QUOTED) {
      s = c === 34 ? QUOTED : isDelim ? FIELD_START : UNQUOTED;
    } else if (isDelim) {
      s = FIELD_START;
      if (multi) i += delimiter.length - 1;
    } else if (s === FIELD_START) {
      s = c === 34 ? QUOTED : UNQUOTED;
    }
  }
  return s === QUOTED ? QUOTED : FIELD_START;
}

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
  // record_delimiter \n: line ends were normalised by textLines, and a lone CR stays literal, as on the fast path.
  const quoteOptions = { delimiter, record_delimiter: '\n', relax_quotes: true, relax_column_count: true, skip_empty_lines: true };

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

  // Record boundaries come from a small quote-state machine (the same rules as csv-parse with
  // relaxed quotes), so each record is handed to csv-parse once: reparsing a growing block on every
  // line was quadratic, and an unclosed quote used to swallow every later line as one skip.
  let pending: string[] = [];
  let pendingLine = 0;
  let state = FIELD_START;
  const out: InputRecord[] = [];

  /** Parses the pending lines, which hold exactly one complete record by the state machine. */
  const parsePending = (): void => {
    const raw = pending.join('\n');
    const end = pendingLine + pending.length - 1;
    pending = [];
    let recs: string[][];
    try {
      recs = parse(raw, quoteOptions) as string[][];
    } catch (e) {
      const msg = ((e as Error).message ?? String(e)).replace(/ at line \d+/, '');
      if (!columns) throw new InputError(ctx.file, pendingLine, `unreadable header (${msg})`);
      row++;
      ctx.invalid(pendingLine, end > pendingLine ? `${msg} (record on lines ${pendingLine}-${end})` : msg);
      return;
    }
    for (const f of recs) {
      const d = record(f, raw, pendingLine, end);
      if (d) out.push(d);
    }
  };

  /**
   * The pending record's quote never closes (end of input, or MAX_RECORD_LINES lines): its first
   * line is reported and skipped, and the lines after it are read again as ordinary records.
   */
  const unclosed = (): void => {
    const rest = pending.slice(1);
    const first = pendingLine;
    pending = [];
    if (!columns) throw new InputError(ctx.file, first, 'unreadable header (a quoted field is never closed)');
    row++;
    ctx.invalid(first, 'a quoted field is never closed');
    for (let i = 0; i < rest.length; i++) feed(rest[i]!, first + 1 + i);
  };

  const feed = (text: string, line: number): void => {
    if (pending.length === 0) {
      // With relaxed quotes, only a field that starts with a quote is parsed as quoted; a line where no
      // field does is split exactly as csv-parse would split it.
      if (text.charCodeAt(0) !== 34 && text.indexOf(quoteStart) < 0) {
        if (text === '') return;
        const d = record(text.split(delimiter), text, line, line);
        if (d) out.push(d);
        return;
      }
      pending = [text];
      pendingLine = line;
      state = scanQuotes(text, FIELD_START, delimiter);
    } else {
      pending.push(text);
      state = scanQuotes(text, state, delimiter);
    }
    if (state !== QUOTED) parsePending();
    else if (pending.length >= MAX_RECORD_LINES) unclosed();
  };

  for await (const { text, line } of textLines(chunks)) {
    feed(text, line);
    if (out.length > 0) yield* out.splice(0);
  }
  while (pending.length > 0) {
    unclosed();
    if (out.length > 0) yield* out.splice(0);
  }
  if (out.length > 0) yield* out.splice(0);
}
