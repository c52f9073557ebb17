/**
 * JSON Lines: one JSON object per line; fields are addressed by dotted paths (`meta.title`).
 * @module
 */
import type { TextLine } from '../codec/utf8.js';
import type { InputRecord, ReaderContext } from './record.js';
import { readLinesWith, type LineReader } from './lines.js';
import { rawJsonValue } from './jsonRaw.js';

/** Which fields make a document. */
export interface FieldSpec {
  /** Text field paths (values joined by one space). Default `['text']`. */
  text?: string[];
  /** Id field path. Default: none (the row number is the id). */
  id?: string;
  /** Title field path (kept with the document for the web page). Default: none. */
  title?: string;
}

/** Splits a dotted path; `a.b` reads `obj.a.b`. */
export function parsePath(path: string): string[] {
  return path.split('.');
}

/** The value at `path` in `obj`, or undefined when any step is missing. */
export function getPath(obj: unknown, path: readonly string[]): unknown {
  let v = obj;
  for (const k of path) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** The first field names of `obj`, for messages (a record may have thousands, or long ones). */
function fieldNames(obj: object): string {
  const keys = Object.keys(obj);
  const shown = keys.slice(0, 10).map((k) => JSON.stringify(k.length > 30 ? `${k.slice(0, 30)}…` : k));
  return shown.join(', ') + (keys.length > 10 ? ` and ${keys.length - 10} more` : '');
}

/** What a JSON value is, for messages: `a number`, `null`, `an array`, … */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/**
 * The JSONL reader for one line at a time, synchronously: what {@link readJsonl} does per line, for
 * callers that split lines themselves (a worker's byte range, where an async generator per line
 * cost more than the JSON parsing).
 */
export function jsonlLineReader(ctx: ReaderContext, spec: FieldSpec): LineReader {
  const textNames = spec.text && spec.text.length > 0 ? spec.text : ['text'];
  const textPaths = textNames.map(parsePath);
  const idPath = spec.id === undefined ? undefined : parsePath(spec.id);
  const titlePath = spec.title === undefined ? undefined : parsePath(spec.title);
  let row = 0;
  return (lineText, line, eol, at) => {
    if (lineText.trim() === '') return undefined;
    const r = at ?? row;
    row = r + 1;
    if (ctx.badLines?.has(line)) {
      ctx.invalid(line, 'invalid UTF-8');
      return undefined;
    }
    let obj: unknown;
    try {
      obj = JSON.parse(lineText);
    } catch (e) {
      ctx.invalid(line, `invalid JSON (${(e as Error).message})`);
      return undefined;
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      ctx.invalid(line, 'expected a JSON object');
      return undefined;
    }
    const parts: string[] = [];
    for (let i = 0; i < textPaths.length; i++) {
      const v = getPath(obj, textPaths[i]!);
      // Text fields must be strings: a number, null or an array turned into text silently would be
      // a document nobody wrote (the field is probably not the one meant).
      if (typeof v !== 'string') {
        ctx.invalid(
          line,
          v === undefined ? `no field "${textNames[i]}"; available fields: ${fieldNames(obj)}` : `field "${textNames[i]}" is ${kindOf(v)}, not a string`,
        );
        return undefined;
      }
      parts.push(v);
    }
    let id: string | undefined;
    if (idPath) {
      const v = getPath(obj, idPath);
      // A number id is its literal as written (9007199254740993, 1.50): String(v) of the double
      // JSON.parse made would round big integers, so two distinct ids could become one.
      if (typeof v === 'string') {
        if (!wellFormed(v)) {
          ctx.invalid(
            line,
            `id field "${spec.id}" holds a lone surrogate (a \\ud800–\\udfff escape without its pair): an id must be text that UTF-8 can spell, or two ids would print alike`,
          );
          return undefined;
        }
        id = v;
      } else if (typeof v === 'number') id = rawJsonValue(lineText, idPath) ?? String(v);
      else {
        ctx.invalid(
          line,
          v === undefined
            ? `no id field "${spec.id}"; available fields: ${fieldNames(obj)}`
            : `id field "${spec.id}" is ${kindOf(v)}, not a string or a number`,
        );
        return undefined;
      }
    }
    const out: InputRecord = { text: parts.length === 1 ? parts[0]! : parts.join(' '), id, row: r, line };
    if (titlePath) {
      const v = getPath(obj, titlePath);
      // A number is its literal as written, as an id is: --keep max:FIELD compares big integers exactly.
      if (typeof v === 'string' && v) out.title = v;
      else if (typeof v === 'number') out.title = rawJsonValue(lineText, titlePath) ?? String(v);
    }
    if (ctx.raw) {
      out.raw = lineText;
      out.eol = eol;
    }
    return out;
  };
}

/** Reads JSONL records. Blank lines are ignored. */
export function readJsonl(lines: AsyncIterable<TextLine>, ctx: ReaderContext, spec: FieldSpec): AsyncGenerator<InputRecord> {
  return readLinesWith(lines, jsonlLineReader(ctx, spec));
}

/**
 * True when `s` has no lone surrogate (JSON can escape one, UTF-8 cannot spell it: written out, it
 * becomes U+FFFD, so two distinct ids would print as one).
 */
export function wellFormed(s: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}
