/**
 * A JSON line read as bytes for pass 1 (./bytePass1.ts): {@link scanRecord} checks that the line is
 * one JSON object `JSON.parse` accepts and finds its top-level text and id strings, and
 * {@link decodeJsonString} decodes a string's bytes into UTF-16 code units, as `JSON.parse` would,
 * with no string made.
 *
 * The scanner is stricter than `JSON.parse`, never looser: whatever it does not accept (an escaped
 * key, a duplicate text or id key, a value of another type there, nesting deeper than
 * {@link MAX_DEPTH}, invalid JSON) goes to the JSONL reader, whose record or error is then the answer.
 * The bytes must be valid UTF-8 (the caller checks each block).
 * @module
 */

/** Containers nested deeper than this go to the reader (a stack of this size, no recursion). */
const MAX_DEPTH = 256;
const stack = new Uint8Array(MAX_DEPTH);
const OBJECT = 1;
const ARRAY = 2;

/** Whether the string last ended by {@link stringEnd} held a backslash. */
let escaped = false;

/** The names of the fields a record's scan looks for, as UTF-8 bytes. */
export interface RecordKeys {
  /** The text field's name. */
  text: Uint8Array;
  /** The id field's name, when there is one. */
  id: Uint8Array | undefined;
}

/** Past JSON whitespace (space, tab, CR, LF) from `i`, up to `stop`. */
function ws(b: Uint8Array, i: number, stop: number): number {
  while (i < stop) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return i;
    i++;
  }
  return i;
}

/** Whether `c` is an ASCII hexadecimal digit. */
function hex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
}

/**
 * The closing quote of the string whose contents start at `i`, or −1 when the string is not valid
 * JSON (a control character, an unknown escape, a short `\u`) or does not end before `stop`.
 * Sets {@link escaped}.
 */
function stringEnd(b: Uint8Array, i: number, stop: number): number {
  escaped = false;
  for (;;) {
    // A run of plain bytes, with no bounds check: the byte at `stop` is a line break, or past the end (undefined ends the run too).
    let c = b[i]!;
    while (c >= 0x20 && c !== 0x22 && c !== 0x5c) c = b[++i]!;
    if (i >= stop) return -1;
    if (c === 0x22) return i;
    if (c !== 0x5c) return -1;
    escaped = true;
    const e = i + 1 < stop ? b[i + 1]! : -1;
    if (e === 0x75) {
      if (i + 6 > stop || !hex(b[i + 2]!) || !hex(b[i + 3]!) || !hex(b[i + 4]!) || !hex(b[i + 5]!)) return -1;
      i += 6;
    } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) i += 2;
    else return -1;
  }
}

/** Past the number that starts at `i` (JSON's grammar), or −1. */
function numberEnd(b: Uint8Array, i: number, stop: number): number {
  if (i < stop && b[i] === 0x2d) i++;
  const digits = (j: number): number => {
    while (j < stop && b[j]! >= 0x30 && b[j]! <= 0x39) j++;
    return j;
  };
  if (i >= stop) return -1;
  if (b[i] === 0x30) i++;
  else if (b[i]! >= 0x31 && b[i]! <= 0x39) i = digits(i + 1);
  else return -1;
  if (i < stop && b[i] === 0x2e) {
    const j = digits(i + 1);
    if (j === i + 1) return -1;
    i = j;
  }
  if (i < stop && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < stop && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    const j = digits(i);
    if (j === i) return -1;
    i = j;
  }
  return i;
}

/** Past the literal `word` (true, false, null) at `i`, or −1. */
function literalEnd(b: Uint8Array, i: number, stop: number, word: string): number {
  if (i + word.length > stop) return -1;
  for (let j = 0; j < word.length; j++) if (b[i + j] !== word.charCodeAt(j)) return -1;
  return i + word.length;
}

/** Past an object member's key and colon at `i` (any key: nested names are not looked at), or −1. */
function keyEnd(b: Uint8Array, i: number, stop: number): number {
  if (i >= stop || b[i] !== 0x22) return -1;
  i = stringEnd(b, i + 1, stop);
  if (i < 0) return -1;
  i = ws(b, i + 1, stop);
  return i < stop && b[i] === 0x3a ? ws(b, i + 1, stop) : -1;
}

/** Past one scalar value at `i` (a string, number or literal), or −1; −2 when it opens a container. */
function scalarEnd(b: Uint8Array, i: number, stop: number): number {
  const c = b[i]!;
  if (c === 0x22) {
    const e = stringEnd(b, i + 1, stop);
    return e < 0 ? -1 : e + 1;
  }
  if (c === 0x7b || c === 0x5b) return -2;
  if (c === 0x74) return literalEnd(b, i, stop, 'true');
  if (c === 0x66) return literalEnd(b, i, stop, 'false');
  if (c === 0x6e) return literalEnd(b, i, stop, 'null');
  return numberEnd(b, i, stop);
}

/** Past the JSON value that starts at `i` (containers checked to their end, without recursion), or −1. */
function valueEnd(b: Uint8Array, i: number, stop: number): number {
  let depth = 0;
  for (;;) {
    if (i >= stop) return -1;
    const s = scalarEnd(b, i, stop);
    if (s === -1) return -1;
    if (s === -2) {
      const open = b[i] === 0x7b ? OBJECT : ARRAY;
      i = ws(b, i + 1, stop);
      if (i < stop && b[i] === (open === OBJECT ? 0x7d : 0x5d)) i++;
      else {
        if (depth === MAX_DEPTH) return -1;
        stack[depth++] = open;
        if (open === OBJECT && (i = keyEnd(b, i, stop)) < 0) return -1;
        continue;
      }
    } else i = s;
    // After a value: a comma and the next one, or the containers that end here.
    for (;;) {
      if (depth === 0) return i;
      i = ws(b, i, stop);
      if (i >= stop) return -1;
      const c = b[i]!;
      const top = stack[depth - 1]!;
      if (c === 0x2c) {
        i = ws(b, i + 1, stop);
        if (top === OBJECT && (i = keyEnd(b, i, stop)) < 0) return -1;
        break;
      }
      if (c !== (top === OBJECT ? 0x7d : 0x5d)) return -1;
      i++;
      depth--;
    }
  }
}

/** The closing quote of the string whose contents start at `i` (the next quote after an even run of backslashes), or −1 before `stop`; nothing else is checked. */
function quoteEnd(b: Uint8Array, i: number, stop: number): number {
  for (;;) {
    const q = b.indexOf(0x22, i);
    if (q < 0 || q >= stop) return -1;
    let k = q - 1;
    while (b[k] === 0x5c) k--;
    if ((q - 1 - k) % 2 === 0) return q;
    i = q + 1;
  }
}

/** Whether the bytes `b[a, e)` are `key`'s. */
function sameKey(b: Uint8Array, a: number, e: number, key: Uint8Array): boolean {
  if (e - a !== key.length) return false;
  for (let j = 0; j < key.length; j++) if (b[a + j] !== key[j]) return false;
  return true;
}

/**
 * Whether `b[start, stop)` is a JSON object (and whitespace) that `JSON.parse` reads as this scan
 * does, with one string for the text key and (when asked) one for the id key, and no escaped key
 * at the top level; then `at` holds the text string's contents `[at[0], at[1])`, and the id
 * string's the same way in `at[3..4]`, with 1 in `at[5]` when it holds a backslash (−1 with no id
 * key asked). The text string is only found (its closing quote by `indexOf`, not a loop in
 * JavaScript): its decoding checks it ({@link decodeJsonString}, or `JSON.parse` of its token).
 * `b[stop]` must be a line break (CR or LF) or past the end of `b`: the scan's loops stop there.
 * Why these parameters: once per record, where an options object would allocate per record.
 */
export function scanRecord(b: Uint8Array, start: number, stop: number, keys: RecordKeys, at: Int32Array): boolean {
  at.fill(-1);
  let i = ws(b, start, stop);
  if (i >= stop || b[i] !== 0x7b) return false;
  i = ws(b, i + 1, stop);
  if (i < stop && b[i] === 0x7d) return false;
  for (;;) {
    if (i >= stop || b[i] !== 0x22) return false;
    const ks = i + 1;
    const ke = stringEnd(b, ks, stop);
    // An escaped key could spell the text or id key: JSON.parse reads it.
    if (ke < 0 || escaped) return false;
    i = ws(b, ke + 1, stop);
    if (i >= stop || b[i] !== 0x3a) return false;
    i = ws(b, i + 1, stop);
    const slot = sameKey(b, ks, ke, keys.text) ? 0 : keys.id && sameKey(b, ks, ke, keys.id) ? 3 : -1;
    if (slot >= 0) {
      // A duplicate key (JSON.parse keeps the last), or a value that is not a string: the reader's.
      if (at[slot]! >= 0 || i >= stop || b[i] !== 0x22) return false;
      const e = slot === 0 ? quoteEnd(b, i + 1, stop) : stringEnd(b, i + 1, stop);
      if (e < 0) return false;
      at[slot] = i + 1;
      at[slot + 1] = e;
      at[slot + 2] = slot === 0 ? -1 : escaped ? 1 : 0;
      i = e + 1;
    } else if ((i = valueEnd(b, i, stop)) < 0) return false;
    i = ws(b, i, stop);
    if (i >= stop) return false;
    if (b[i] === 0x2c) {
      i = ws(b, i + 1, stop);
      continue;
    }
    if (b[i] !== 0x7d) return false;
    break;
  }
  return ws(b, i + 1, stop) === stop && at[0]! >= 0 && (keys.id === undefined || at[3]! >= 0);
}

/** What {@link decodeJsonString} found besides the code units: the UTF-8 length of the string it decoded last. */
export const decoded = { bytes: 0 };

/** The value of hexadecimal digit `c`. */
function hexValue(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

/**
 * Decodes the contents `b[a, e)` of the string {@link scanRecord} found into `out` as UTF-16 code
 * units, as `JSON.parse` does (a `\u` escape is one code unit, a lone surrogate included); `b[e]`
 * is its closing quote, `out` needs room for `e − a`. Returns the code units written, or −1 when
 * `JSON.parse` would refuse the string (a control character, an unknown escape, a short `\u`);
 * {@link decoded} then holds the UTF-8 length of the string (`Buffer.byteLength`: a lone surrogate counts 3).
 */
export function decodeJsonString(b: Uint8Array, a: number, e: number, out: Uint16Array): number {
  let n = 0;
  /** The UTF-8 bytes of the escapes' code units less the escapes' own bytes (every other byte is its own). */
  let adj = 0;
  let i = a;
  for (;;) {
    // A run of ASCII, with no bounds check: `b[e]` is the closing quote, which ends it.
    let c = b[i]!;
    while (c < 0x80 && c >= 0x20 && c !== 0x5c && c !== 0x22) {
      out[n++] = c;
      c = b[++i]!;
    }
    if (i >= e) break;
    // A control character JSON does not allow in a string.
    if (c < 0x20) return -1;
    if (c === 0x5c) {
      const x = b[i + 1]!;
      if (x !== 0x75) {
        const u = x === 0x6e ? 0x0a : x === 0x74 ? 0x09 : x === 0x72 ? 0x0d : x === 0x62 ? 0x08 : x === 0x66 ? 0x0c : x;
        if (u === x && x !== 0x22 && x !== 0x5c && x !== 0x2f) return -1;
        out[n++] = u;
        i += 2;
        adj -= 1;
        continue;
      }
      if (i + 6 > e || !hex(b[i + 2]!) || !hex(b[i + 3]!) || !hex(b[i + 4]!) || !hex(b[i + 5]!)) return -1;
      const u = (hexValue(b[i + 2]!) << 12) | (hexValue(b[i + 3]!) << 8) | (hexValue(b[i + 4]!) << 4) | hexValue(b[i + 5]!);
      // A low surrogate right after a high one (which only an escape leaves last: UTF-8 writes pairs whole) makes 4 bytes with it.
      const pairs = u >= 0xdc00 && u <= 0xdfff && n > 0 && (out[n - 1]! & 0xfc00) === 0xd800;
      out[n++] = u;
      i += 6;
      adj += (pairs ? 1 : u < 0x80 ? 1 : u < 0x800 ? 2 : 3) - 6;
    } else if (c < 0xe0) {
      out[n++] = ((c & 0x1f) << 6) | (b[i + 1]! & 0x3f);
      i += 2;
    } else if (c < 0xf0) {
      out[n++] = ((c & 0x0f) << 12) | ((b[i + 1]! & 0x3f) << 6) | (b[i + 2]! & 0x3f);
      i += 3;
    } else {
      const cp = ((c & 0x07) << 18) | ((b[i + 1]! & 0x3f) << 12) | ((b[i + 2]! & 0x3f) << 6) | (b[i + 3]! & 0x3f);
      out[n++] = 0xd800 + ((cp - 0x10000) >> 10);
      out[n++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      i += 4;
    }
  }
  decoded.bytes = e - a + adj;
  return n;
}
