/**
 * TSV and CSV with a header row.
 *
 * TSV is IANA text/tab-separated-values by default: a line is a record, fields are split at tabs,
 * and there is no quoting (a `"` is an ordinary character). A line with another number of fields
 * than the header is reported with its line number, never merged with the next one. Reading TSV
 * with CSV-style quotes is an explicit opt-in (`quotes: true`, CLI `--tsv-quotes`).
 *
 * CSV (and TSV with quotes) follows RFC 4180 with relaxed quotes on one line: a field is unquoted
 * only when it is properly quoted, so stray quotes (`"like this" here`) stay literal. A quoted field
 * may hold line breaks (the record then spans lines, counted in the skip statistics); a record that
 * spans lines must be strictly well quoted, otherwise its first line is reported and the lines
 * after it are read again as records of their own, so a stray opening quote never swallows rows.
 *
 * Lines where no field starts with a quote are split directly (exactly what csv-parse does with
 * them under relax_quotes, 30× faster); records with quoted fields are parsed by csv-parse.
 *
 * Which columns make a document (the header resolved, a row's record) is ./columnLayout.ts.
 * @module
 */
import { createRequire } from 'node:module';
import { textLines, type TextChunk, type TextLine } from '../codec/utf8.js';
import { InputError } from '../../common/errors.js';
import type { InputRecord, ReaderContext } from './record.js';
import { resolveHeader, rowRecord, type ColumnLayout, type ColumnSpec } from './columnLayout.js';

// Their readers (the byte-range readers, spans) import them from here, beside the line reader.
export { findColumn, resolveHeader, rowRecord, type ColumnLayout, type ColumnSpec, type RowPlace } from './columnLayout.js';

/** The line break that ended a line, as {@link readDelimited} keeps it. */
interface Line {
  text: string;
  line: number;
  eol: string;
}

/** What the header said, filled in when the first record is read. */
export interface DelimitedHeader {
  /** Column names. */
  columns: string[];
  /** The header line as it appears in the input. */
  raw: string;
  /** The line break after the header (`\n` or `\r\n`), to write it back the same way. */
  eol?: string;
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

/** How a delimited reader splits and maps its records (one object per file). */
export interface DelimitedOptions {
  /** The field separator: '\t' for TSV, ',' for CSV. */
  delimiter: string;
  /** Which columns make a document. */
  spec: ColumnSpec;
  /** Called once with the header line. */
  onHeader: (h: DelimitedHeader) => void;
  /** Read CSV-style quotes (default true); false (TSV's default) reads every line as one record. */
  quotes?: boolean;
}

/**
 * Splits lines into records and turns them into documents: the header first, then one document per
 * data record. Record boundaries come from a small quote-state machine (the same rules as csv-parse
 * with relaxed quotes), so each record is handed to csv-parse once: reparsing a growing block on
 * every line was quadratic, and an unclosed quote used to swallow every later line as one skip.
 * Documents collect in `out` for the reader to yield.
 */
class RecordSplitter {
  /** Documents ready to be yielded. */
  readonly out: InputRecord[] = [];
  private layout: ColumnLayout | undefined;
  private row = 0;

  /** Whether the header has been read. */
  get hasHeader(): boolean {
    return this.layout !== undefined;
  }
  /** Lines of a record whose quoted field is still open. */
  private pending: Line[] = [];
  private state = FIELD_START;
  private readonly quoteStart: string;
  private readonly quoteOptions;
  private readonly strictOptions;

  private readonly delimiter: string;
  private readonly spec: ColumnSpec;
  private readonly onHeader: (h: DelimitedHeader) => void;
  private readonly quotes: boolean;

  constructor(
    private readonly ctx: ReaderContext,
    options: DelimitedOptions,
  ) {
    const { delimiter, spec, onHeader, quotes = true } = options;
    this.delimiter = delimiter;
    this.spec = spec;
    this.onHeader = onHeader;
    this.quotes = quotes;
    this.quoteStart = delimiter + '"';
    // record_delimiter \n: lines are joined with their own breaks; a CR before a joined \n stays in
    // the quoted field it belongs to (CRLF inside a quoted field is part of the value).
    this.quoteOptions = { delimiter, record_delimiter: '\n', relax_quotes: true, relax_column_count: true, skip_empty_lines: true };
    this.strictOptions = { ...this.quoteOptions, relax_quotes: false };
  }

  /** True while a record's quoted field is open across lines. */
  get open(): boolean {
    return this.pending.length > 0;
  }

  /** Takes the next line. */
  feed(l: Line): void {
    const text = l.text;
    if (this.pending.length === 0) {
      // Without quotes (TSV) every line is a record; with relaxed quotes, only a field that starts
      // with a quote is parsed as quoted, and a line where no field does is split as csv-parse would.
      if (!this.quotes || (text.charCodeAt(0) !== 34 && text.indexOf(this.quoteStart) < 0)) {
        if (text === '') return;
        this.record(text.split(this.delimiter), text, l.eol, l.line, l.line);
        return;
      }
      this.pending = [l];
      this.state = scanQuotes(text, FIELD_START, this.delimiter);
    } else {
      this.pending.push(l);
      this.state = scanQuotes(text, this.state, this.delimiter);
    }
    if (this.state !== QUOTED) this.parsePending();
    else if (this.pending.length >= MAX_RECORD_LINES) this.malformed(`a quoted field is not closed within ${MAX_RECORD_LINES} lines`);
  }

  /**
   * The pending record's first line opens a quote that never closes properly (end of input,
   * MAX_RECORD_LINES lines, or a bad closing quote): that line is reported and skipped, and the
   * lines after it are read again as ordinary records.
   */
  malformed(reason: string): void {
    const rest = this.pending.slice(1);
    const first = this.pending[0]!.line;
    this.pending = [];
    if (!this.layout) throw new InputError(this.ctx.file, first, `unreadable header (${reason})`);
    this.row++;
    this.ctx.invalid(first, reason);
    for (const l of rest) this.feed(l);
  }

  /**
   * Handles one record spanning lines [line, end]: the header first, then documents.
   * Why these parameters: called once per TSV/CSV record; an options object would be an allocation per record.
   */
  private record(f: string[], raw: string, eol: string, line: number, end: number): void {
    if (!this.layout) {
      this.layout = resolveHeader(f, this.spec, this.ctx, line);
      this.onHeader({ columns: f, raw, eol });
      return;
    }
    const d = rowRecord(f, { raw, eol, line, end, row: this.row++ }, this.layout, this.ctx, this.quotes);
    if (d) this.out.push(d);
  }

  /** Parses the pending lines, which hold exactly one complete record by the state machine. */
  private parsePending(): void {
    const lines = this.pending;
    const raw = joinLines(lines);
    const first = lines[0]!.line;
    const end = first + lines.length - 1;
    const eol = lines[lines.length - 1]!.eol;
    let recs: string[][];
    try {
      recs = parse(raw, this.quoteOptions) as string[][];
      // A record spanning lines must be well quoted: a closing quote followed by more text (relaxed
      // on one line) is a stray opening quote that swallowed the lines after it.
      if (lines.length > 1) parse(raw, this.strictOptions);
    } catch (e) {
      if (lines.length > 1) {
        this.malformed(`a quoted field opened here is not closed properly (it would span lines ${first}-${end})`);
        return;
      }
      this.pending = [];
      const msg = ((e as Error).message ?? String(e)).replace(/ at line \d+/, '');
      if (!this.layout) throw new InputError(this.ctx.file, first, `unreadable header (${msg})`);
      this.row++;
      this.ctx.invalid(first, msg);
      return;
    }
    this.pending = [];
    for (const f of recs) this.record(f, raw, eol, first, end);
  }
}

/** Lines as one text, each joined by its own line break. */
function joinLines(lines: Line[]): string {
  let s = lines[0]!.text;
  for (let i = 1; i < lines.length; i++) s += lines[i - 1]!.eol + lines[i]!.text;
  return s;
}

/**
 * The delimited reader over lines the caller splits, synchronously: `feed` every line in order,
 * then `finish`; documents collect in `out` (take them as they come). What {@link readDelimited}
 * does, without an async step per line.
 */
export function delimitedLineReader(ctx: ReaderContext, options: DelimitedOptions): { out: InputRecord[]; feed(l: TextLine): void; finish(): void } {
  const splitter = new RecordSplitter(ctx, options);
  return {
    out: splitter.out,
    feed: (l) => splitter.feed(l),
    finish: () => {
      while (splitter.open) splitter.malformed('a quoted field is never closed');
    },
  };
}

/**
 * Reads delimited records. Throws (through `ctx.invalid`) for a record with a different number of
 * fields than the header, invalid UTF-8, or a quoting error; throws an {@link InputError} for an
 * unknown column. `quotes` false (TSV's default) reads every line as one record without quoting.
 */
export async function* readDelimited(chunks: AsyncIterable<TextChunk>, ctx: ReaderContext, options: DelimitedOptions): AsyncGenerator<InputRecord> {
  const { delimiter } = options;
  const splitter = new RecordSplitter(ctx, options);
  const { out } = splitter;
  for await (const l of textLines(chunks)) {
    splitter.feed(l);
    if (out.length > 0) yield* out.splice(0);
  }
  while (splitter.open) {
    splitter.malformed('a quoted field is never closed');
    if (out.length > 0) yield* out.splice(0);
  }
  if (out.length > 0) yield* out.splice(0);
  // A header is required: without one there are no columns, so an empty file is not 0 documents.
  if (!splitter.hasHeader)
    throw new InputError(
      ctx.file,
      undefined,
      `no header line (the file is empty): ${delimiter === '\t' ? 'TSV' : 'CSV'} input starts with a header naming its columns`,
    );
}
