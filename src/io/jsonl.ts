/**
 * JSON Lines: one JSON object per line; fields are addressed by dotted paths (`meta.title`).
 * @module
 */
import type { TextLine } from './utf8.js';
import type { InputRecord, ReaderContext } from './record.js';

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

function fieldNames(obj: object): string {
  return Object.keys(obj)
    .map((k) => JSON.stringify(k))
    .join(', ');
}

/** What a JSON value is, for messages: `a number`, `null`, `an array`, … */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/** Reads JSONL records. Blank lines are ignored. */
export async function* readJsonl(lines: AsyncIterable<TextLine>, ctx: ReaderContext, spec: FieldSpec): AsyncGenerator<InputRecord> {
  const textNames = spec.text && spec.text.length > 0 ? spec.text : ['text'];
  const textPaths = textNames.map(parsePath);
  const idPath = spec.id === undefined ? undefined : parsePath(spec.id);
  const titlePath = spec.title === undefined ? undefined : parsePath(spec.title);
  let row = 0;
  for await (const { text: lineText, line, eol } of lines) {
    if (lineText.trim() === '') continue;
    const r = row++;
    if (ctx.badLines?.has(line)) {
      ctx.invalid(line, 'invalid UTF-8');
      continue;
    }
    let obj: unknown;
    try {
      obj = JSON.parse(lineText);
    } catch (e) {
      ctx.invalid(line, `invalid JSON (${(e as Error).message})`);
      continue;
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      ctx.invalid(line, 'expected a JSON object');
      continue;
    }
    const parts: string[] = [];
    let ok = true;
    for (let i = 0; i < textPaths.length; i++) {
      const v = getPath(obj, textPaths[i]!);
      // Text fields must be strings: a number, null or an array turned into text silently would be
      // a document nobody wrote (the field is probably not the one meant).
      if (typeof v !== 'string') {
        ctx.invalid(line, v === undefined ? `no field "${textNames[i]}"; available fields: ${fieldNames(obj)}` : `field "${textNames[i]}" is ${kindOf(v)}, not a string`);
        ok = false;
        break;
      }
      parts.push(v);
    }
    if (!ok) continue;
    let id: string | undefined;
    if (idPath) {
      const v = getPath(obj, idPath);
      if (typeof v === 'string' || typeof v === 'number') id = String(v);
      else {
        ctx.invalid(line, v === undefined ? `no id field "${spec.id}"; available fields: ${fieldNames(obj)}` : `id field "${spec.id}" is ${kindOf(v)}, not a string or a number`);
        continue;
      }
    }
    const out: InputRecord = { text: parts.length === 1 ? parts[0]! : parts.join(' '), id, row: r, line };
    if (titlePath) {
      const v = getPath(obj, titlePath);
      if ((typeof v === 'string' && v) || typeof v === 'number') out.title = String(v);
    }
    if (ctx.raw) {
      out.raw = lineText;
      out.eol = eol;
    }
    yield out;
  }
}
