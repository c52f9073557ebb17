/**
 * Which columns of a TSV or CSV file make a document: the header's columns resolved (text, id,
 * title and the other fields a run asks for, each found once), and a row's record from them.
 * @module
 */
import { excerpt, InputError, type InputFix } from '../../common/errors.js';
import type { InputRecord, ReaderContext } from './record.js';

/** Which columns make a document. */
export interface ColumnSpec {
  /** Text column names (values joined by one space). Default: a column named `text`, or the only column. */
  text?: string[];
  /** Id column name. Default: none (the row number is the id). */
  id?: string;
  /** Title column name (kept with the document for the web page). Default: none. */
  title?: string;
}

/** Resolves a column name: exact match first, then trimmed and case-insensitive. */
export function findColumn(columns: readonly string[], name: string): number {
  const exact = columns.indexOf(name);
  if (exact >= 0) return exact;
  const want = name.trim().toLowerCase();
  return columns.findIndex((c) => c.trim().toLowerCase() === want);
}

/**
 * The 1-based positions of the other header columns that {@link findColumn} could have taken for
 * `name` (a second exact match, or, when the match was loose, a second loose match): a header
 * naming the text or id column twice is ambiguous, never read from the first silently.
 */
function sameNamed(columns: readonly string[], name: string, i: number): number[] {
  const exact = columns[i] === name;
  const want = name.trim().toLowerCase();
  const out: number[] = [];
  columns.forEach((c, j) => {
    if (j !== i && (exact ? c === name : c.trim().toLowerCase() === want)) out.push(j + 1);
  });
  return out;
}

function listColumns(columns: readonly string[]): string {
  return columns.map((c) => JSON.stringify(c)).join(', ');
}

/** Where the text, id and title are in a row, from the header. */
export interface ColumnLayout {
  columns: string[];
  textIdx: number[];
  idIdx: number;
  titleIdx: number;
}

/**
 * The layout of the header `columns` (line `line`) for `spec`. Header problems are never
 * skippable (without a header there is nothing to read): an {@link InputError} names the line and
 * the available columns.
 */
export function resolveHeader(columns: string[], spec: ColumnSpec, ctx: ReaderContext, line: number): ColumnLayout {
  const fail = (reason: string, fix?: InputFix): never => {
    throw new InputError(ctx.file, line, reason, undefined, fix);
  };
  if (ctx.badLines?.has(line)) fail('invalid UTF-8 in the header');
  let textIdx: number[] = [];
  const names = spec.text ?? [];
  if (names.length === 0) {
    const t = findColumn(columns, 'text');
    if (t >= 0) textIdx = [t];
    else if (columns.length === 1) textIdx = [0];
    else fail(`no text column given; available columns: ${listColumns(columns)}`, { option: 'text' });
  } else {
    textIdx = names.map((name) => {
      const i = findColumn(columns, name);
      if (i < 0) fail(`unknown column "${name}"; available columns: ${listColumns(columns)}`);
      return i;
    });
  }
  const unique = (i: number, name: string, what: string): void => {
    const others = sameNamed(columns, name, i);
    if (others.length > 0)
      fail(
        `the header names the ${what} column "${excerpt(columns[i]!, 60)}" ${others.length + 1} times (columns ${
          [i + 1, ...others].join(', ')
        }): rename all but one`,
      );
  };
  textIdx.forEach((i, k) => unique(i, names[k] ?? 'text', 'text'));
  let idIdx = -1;
  if (spec.id !== undefined) {
    idIdx = findColumn(columns, spec.id);
    if (idIdx < 0) fail(`unknown id column "${spec.id}"; available columns: ${listColumns(columns)}`);
    unique(idIdx, spec.id, 'id');
  }
  let titleIdx = -1;
  if (spec.title !== undefined) {
    titleIdx = findColumn(columns, spec.title);
    if (titleIdx < 0) fail(`unknown title column "${spec.title}"; available columns: ${listColumns(columns)}`);
  }
  return { columns, textIdx, idIdx, titleIdx };
}

/** Where a data record is: its text as read, line break, first and last line, and row number. */
export interface RowPlace {
  raw: string;
  eol: string;
  line: number;
  end: number;
  row: number;
}

/**
 * The document of data record `f`, or undefined when it is invalid (reported through `ctx.invalid`
 * with its line: invalid UTF-8, or another number of fields than the header).
 * Why these parameters: called once per TSV/CSV row; an options object would be an allocation per row.
 */
export function rowRecord(f: string[], at: RowPlace, layout: ColumnLayout, ctx: ReaderContext, quotes: boolean): InputRecord | undefined {
  const { line, end } = at;
  if (ctx.badLines && ctx.badLines.size > 0) {
    for (let l = line; l <= end; l++) {
      if (ctx.badLines.has(l)) {
        ctx.invalid(line, 'invalid UTF-8');
        return undefined;
      }
    }
  }
  const { columns, textIdx, idIdx, titleIdx } = layout;
  if (f.length !== columns.length) {
    const hint = !quotes && f.length > columns.length ? ' (TSV has no quoting: a tab inside a field splits it)' : '';
    const span = end > line ? ` (a quoted field makes this record span lines ${line}-${end})` : '';
    ctx.invalid(line, `ragged row: ${f.length} field${f.length === 1 ? '' : 's'}, the header has ${columns.length}${hint}${span}`);
    return undefined;
  }
  if (end > line) {
    ctx.stats.multiline = (ctx.stats.multiline ?? 0) + 1;
    ctx.stats.firstMultiline ??= `${ctx.file}:${line}-${end}`;
  }
  const text = textIdx.length === 1 ? f[textIdx[0]!]! : textIdx.map((i) => f[i]!).join(' ');
  const out: InputRecord = { text, id: idIdx >= 0 ? f[idIdx] : undefined, row: at.row, line };
  if (titleIdx >= 0 && f[titleIdx]) out.title = f[titleIdx];
  if (ctx.raw) {
    out.raw = at.raw;
    out.eol = at.eol;
  }
  return out;
}
