/**
 * TSV and CSV with a header row, parsed by csv-parse. Quotes are relaxed: a field is unquoted only
 * when it is properly quoted, so TSV text with stray quotes (`"like this" here`) stays literal.
 * @module
 */
import { Readable, pipeline } from 'node:stream';
import { parse, type Info } from 'csv-parse';
import type { TextChunk } from './utf8.js';
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

function cleanRaw(raw: string): string {
  // csv-parse's raw text can carry CRs and blank lines skipped before the record.
  let s = 0;
  let e = raw.length;
  while (s < e && (raw.charCodeAt(s) === 10 || raw.charCodeAt(s) === 13)) s++;
  while (e > s && raw.charCodeAt(e - 1) === 13) e--;
  return raw.slice(s, e);
}

function newlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n;
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
 * Reads delimited records. Throws (through `ctx.invalid`) for an unknown column, a record with a
 * different number of fields than the header, invalid UTF-8, or a quoting error.
 */
export async function* readDelimited(
  chunks: AsyncIterable<TextChunk>,
  ctx: ReaderContext,
  delimiter: string,
  spec: ColumnSpec,
  onHeader: (h: DelimitedHeader) => void,
): AsyncGenerator<InputRecord> {
  const parser = parse({
    delimiter,
    relax_quotes: true,
    relax_column_count: true,
    raw: true,
    info: true,
    skip_empty_lines: true,
    skip_records_with_error: ctx.badLines !== undefined,
    on_skip: (err) => {
      ctx.invalid(typeof err?.lines === "number" ? err.lines : undefined, err ? err.message.replace(/ at line \d+/, '') : 'unparseable record');
      return undefined;
    },
  });
  const texts = Readable.from(
    (async function* () {
      for await (const c of chunks) yield c.text;
    })(),
  );
  pipeline(texts, parser, () => {});
  let columns: string[] | undefined;
  let textIdx: number[] = [];
  let idIdx = -1;
  let row = 0;
  try {
    for await (const rec of parser as AsyncIterable<{ record: string[]; raw: string; info: Info }>) {
      const raw = cleanRaw(rec.raw);
      const end = rec.info.lines;
      const line = end - newlines(raw);
      if (!columns) {
        columns = rec.record;
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
        continue;
      }
      const r = row++;
      const f = rec.record;
      if (ctx.badLines && ctx.badLines.size > 0) {
        let bad = false;
        for (let l = line; l <= end; l++) if (ctx.badLines.has(l)) bad = true;
        if (bad) {
          ctx.invalid(line, 'invalid UTF-8');
          continue;
        }
      }
      if (f.length !== columns.length) {
        ctx.invalid(line, `ragged row: ${f.length} field${f.length === 1 ? '' : 's'}, the header has ${columns.length}`);
        continue;
      }
      const text = textIdx.length === 1 ? f[textIdx[0]!]! : textIdx.map((i) => f[i]!).join(' ');
      const out: InputRecord = { text, id: idIdx >= 0 ? f[idIdx] : undefined, row: r, line };
      if (ctx.raw) out.raw = raw;
      yield out;
    }
  } catch (e) {
    const err = e as { code?: string; lines?: number; message?: string };
    if (typeof err.code === 'string' && err.code.startsWith('CSV_')) {
      ctx.invalid(err.lines, (err.message ?? err.code).replace(/ at line \d+/, ''));
      return;
    }
    throw e;
  } finally {
    texts.destroy();
  }
}
