/**
 * A JSON line's own text, kept: the literal of a value at a path (a number id stays
 * `9007199254740993`, never the double `JSON.parse` rounds it to), the top-level names, and fields
 * appended before the closing brace with every byte before them untouched (key order, number
 * spelling, escapes, whitespace, duplicate keys).
 *
 * These walk text that `JSON.parse` has already accepted (the readers check each line first), so
 * they skip values without checking them again.
 * @module
 */

function skipWs(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
    else return i;
  }
}

/** Past the string whose opening quote is at i: the next quote after an even run of backslashes (found by `indexOf`, not a loop per character). */
function skipString(s: string, i: number): number {
  for (let from = i + 1;;) {
    const q = s.indexOf('"', from);
    if (q < 0) return s.length;
    let b = q - 1;
    while (s.charCodeAt(b) === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** Past the value that starts at i. */
function skipValue(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x22) return skipString(s, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (;;) {
      const d = s.charCodeAt(i);
      if (d === 0x22) {
        i = skipString(s, i);
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
  }
  // A number or a literal: up to the next delimiter.
  while (i < s.length) {
    const d = s.charCodeAt(i);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x09 || d === 0x0a || d === 0x0d) break;
    i++;
  }
  return i;
}

/** A member name's value (the string at [s, e), with its quotes). */
function nameAt(text: string, s: number, e: number): string {
  const inner = text.slice(s + 1, e - 1);
  return inner.includes('\\') ? (JSON.parse(text.slice(s, e)) as string) : inner;
}

/**
 * Calls `each(name, valueStart, valueEnd)` for every member of the object whose `{` is at `open`, in
 * the order written; returns the index of its closing brace.
 */
function members(text: string, open: number, each: (name: string, vs: number, ve: number) => void): number {
  let i = skipWs(text, open + 1);
  if (text.charCodeAt(i) === 0x7d) return i;
  for (;;) {
    const ks = i;
    i = skipString(text, i);
    const name = nameAt(text, ks, i);
    i = skipWs(text, skipWs(text, i) + 1);
    const vs = i;
    i = skipValue(text, i);
    each(name, vs, i);
    i = skipWs(text, i);
    if (text.charCodeAt(i) !== 0x2c) return i;
    i = skipWs(text, i + 1);
  }
}

/**
 * The text of the value at `path` in the JSON line `text` (valid JSON), as written: the last member
 * of each name, as `JSON.parse` keeps it. Undefined when a step is missing or not an object.
 */
export function rawJsonValue(text: string, path: readonly string[]): string | undefined {
  const r = jsonValueRange(text, path);
  return r && text.slice(r[0], r[1]);
}

/**
 * Where the value {@link rawJsonValue} returns lies in `text`: [start, end) (a string's with its
 * quotes), so that a writer can replace it and keep every other character of the line.
 */
export function jsonValueRange(text: string, path: readonly string[]): [number, number] | undefined {
  let s = skipWs(text, 0);
  let e = text.length;
  for (const key of path) {
    if (text.charCodeAt(s) !== 0x7b) return undefined;
    let vs = -1;
    let ve = -1;
    members(text, s, (name, a, b) => {
      if (name === key) {
        vs = a;
        ve = b;
      }
    });
    if (vs < 0) return undefined;
    s = vs;
    e = ve;
  }
  return [s, e];
}

/** The top-level member names of the JSON object line `text` (valid JSON), as written. */
export function jsonTopNames(text: string): string[] {
  const names: string[] = [];
  const open = skipWs(text, 0);
  if (text.charCodeAt(open) === 0x7b) members(text, open, (name) => names.push(name));
  return names;
}

/**
 * The JSON object line `text` (valid JSON) with `fields` (name and value, both JSON text) appended
 * before its closing brace: every character before that brace is kept, and what follows it (spaces).
 */
export function appendJsonFields(text: string, fields: readonly (readonly [string, string])[]): string {
  const open = skipWs(text, 0);
  const close = members(text, open, () => {});
  const empty = skipWs(text, open + 1) === close;
  const added = fields.map(([k, v]) => `${k}:${v}`).join(',');
  return `${text.slice(0, close)}${empty ? '' : ','}${added}${text.slice(close)}`;
}
