/**
 * A JSON line checked and searched in its bytes: whether the bytes are a JSON object exactly as
 * `JSON.parse` would accept it, and where the values of some top-level fields lie, without decoding
 * the line or building the object.
 *
 * Why: pass 1 decoded every line to a string (~600 MB/s) and ran `JSON.parse` on it, which for a
 * 1.5 KB document cost about as much as signing it; most of a line is one string whose plain runs a
 * vector scan crosses sixteen bytes at a time. Verification, which reads candidate lines again,
 * finds their text field with the same scan ({@link plainStringField}).
 * @module
 */

/** What {@link scanJsonLine} tells of a line. */
export const LINE_BLANK = 0;
/** The line is a JSON object; the fields' values were located. */
export const LINE_OBJECT = 1;
/** This route cannot tell (the line may be invalid, or valid in a way it leaves to `JSON.parse`). */
export const LINE_UNSURE = -1;

/**
 * Finds where a plain run of a JSON string stops: the address of the first byte in [p, end) below
 * 0x20, a quote or a backslash, or `end` (a WebAssembly vector scan, or {@link stringStopJs}).
 */
export type StringStop = (p: number, end: number) => number;

/**
 * {@link StringStop} over `b` for a line known to hold no backslash, when only its quotes matter (a
 * line a pass already checked): the next quote, by a native search.
 */
function quoteStop(b: Buffer): StringStop {
  return (p, end) => {
    const q = b.indexOf(QUOTE, p);
    return q < 0 || q > end ? end : q;
  };
}

/** {@link StringStop} over `b` in JavaScript (the reference the kernel is tested against). */
export function stringStopJs(b: Uint8Array): StringStop {
  return (p, end) => {
    for (let i = p; i < end; i++) {
      const c = b[i]!;
      if (c < 0x20 || c === 0x22 || c === 0x5c) return i;
    }
    return end;
  };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Containers deeper than this are left to `JSON.parse`. */
const MAX_DEPTH = 256;
const OBJECT = 1;
const ARRAY = 2;
/** The open containers of the line being read (one thread reads one line at a time). */
const stack = new Uint8Array(MAX_DEPTH);
const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
}

/**
 * Checks the bytes `b[start .. end)` of one line (valid UTF-8: the caller's guarantee) as
 * `JSON.parse` would, and finds the top-level fields named `keys` (their names' bytes, written
 * without escapes). Returns {@link LINE_BLANK} for a line of JSON whitespace only,
 * {@link LINE_OBJECT} for a JSON object, and {@link LINE_UNSURE} otherwise: invalid JSON, a value
 * that is not an object, containers nested deeper than 256, a top-level name written with escapes
 * (it could spell a key), or a key written twice (`JSON.parse` keeps the last). It never answers
 * {@link LINE_OBJECT} for bytes `JSON.parse` rejects.
 *
 * For key i, `found[3i]` and `found[3i + 1]` are the start and end of its value's bytes (a string's
 * with its quotes), and `found[3i + 2]` is 1 when that value is a string with an escape; −1, −1, 0
 * when the line has no such field.
 *
 * Why these parameters: it is called once per input line by the byte-level line readers, so the
 * bytes, bounds, keys, result array and string scanner are passed as they are, with nothing
 * allocated per line. Why this function is long: it is one state machine (value, name, after a
 * value) whose token readers share the cursor `i`, the depth and the pending key as closure state;
 * cut into functions, the cursor would go back and forth on every token of every line.
 */
export function scanJsonLine(b: Uint8Array, start: number, end: number, keys: readonly Uint8Array[], found: Int32Array, stop: StringStop): number {
  for (let k = 0; k < keys.length; k++) {
    found[3 * k] = -1;
    found[3 * k + 1] = -1;
    found[3 * k + 2] = 0;
  }
  let i = start;
  while (i < end && isWs(b[i]!)) i++;
  if (i === end) return LINE_BLANK;
  if (b[i] !== 0x7b) return LINE_UNSURE;
  let depth = 0;
  /** The key whose value is being read at depth 1, and where that value starts. */
  let pending = -1;
  let valueStart = 0;
  /** Where the value that just ended ends (before any whitespace after it). */
  let valueEnd = 0;
  let escaped = false;
  /** Reads the string whose opening quote is at i: i ← past its closing quote, or −1. */
  const string = (): void => {
    escaped = false;
    let j = i + 1;
    for (;;) {
      j = stop(j, end);
      if (j >= end) {
        i = -1;
        return;
      }
      const c = b[j]!;
      if (c === QUOTE) {
        i = j + 1;
        return;
      }
      if (c !== BACKSLASH || j + 1 >= end) {
        i = -1;
        return;
      }
      escaped = true;
      const e = b[j + 1]!;
      if (e === 0x75) {
        // \uXXXX
        if (j + 6 > end || !isHex(b[j + 2]!) || !isHex(b[j + 3]!) || !isHex(b[j + 4]!) || !isHex(b[j + 5]!)) {
          i = -1;
          return;
        }
        j += 6;
      } else if (e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) j += 2;
      else {
        i = -1;
        return;
      }
    }
  };
  const digits = (): void => {
    while (i < end && isDigit(b[i]!)) i++;
  };
  /** Reads the number at i: i ← past it, or −1. */
  const number = (): void => {
    if (b[i] === 0x2d) i++;
    if (i >= end) return void (i = -1);
    if (b[i] === 0x30) i++;
    else if (isDigit(b[i]!)) digits();
    else return void (i = -1);
    if (i < end && b[i] === 0x2e) {
      i++;
      if (i >= end || !isDigit(b[i]!)) return void (i = -1);
      digits();
    }
    if (i < end && (b[i]! | 0x20) === 0x65) {
      i++;
      if (i < end && (b[i] === 0x2b || b[i] === 0x2d)) i++;
      if (i >= end || !isDigit(b[i]!)) return void (i = -1);
      digits();
    }
  };
  const literal = (word: number[]): void => {
    if (i + word.length > end) return void (i = -1);
    for (let w = 0; w < word.length; w++) if (b[i + w] !== word[w]) return void (i = -1);
    i += word.length;
  };
  // The states: reading a value at i, or a name (after '{' or ',' in an object), or after a value.
  const VALUE = 0;
  const NAME = 1;
  const AFTER = 2;
  let state = VALUE;
  for (;;) {
    while (i < end && isWs(b[i]!)) i++;
    if (state === VALUE) {
      if (i >= end) return LINE_UNSURE;
      const c = b[i]!;
      if (c === 0x7b || c === 0x5b) {
        if (depth === MAX_DEPTH) return LINE_UNSURE;
        stack[depth++] = c === 0x7b ? OBJECT : ARRAY;
        i++;
        while (i < end && isWs(b[i]!)) i++;
        if (i < end && b[i] === (c === 0x7b ? 0x7d : 0x5d)) {
          depth--;
          i++;
          valueEnd = i;
          state = AFTER;
        } else state = c === 0x7b ? NAME : VALUE;
        continue;
      }
      escaped = false;
      if (c === QUOTE) string();
      else if (c === 0x2d || isDigit(c)) number();
      else if (c === 0x74) literal(TRUE);
      else if (c === 0x66) literal(FALSE);
      else if (c === 0x6e) literal(NULL);
      else return LINE_UNSURE;
      if (i < 0) return LINE_UNSURE;
      valueEnd = i;
      state = AFTER;
      continue;
    }
    if (state === NAME) {
      if (i >= end || b[i] !== QUOTE) return LINE_UNSURE;
      const s = i + 1;
      string();
      if (i < 0) return LINE_UNSURE;
      if (depth === 1) {
        if (escaped) return LINE_UNSURE;
        pending = -1;
        for (let k = 0; k < keys.length; k++) {
          if (sameBytes(b, s, i - 1, keys[k]!)) {
            if (found[3 * k]! >= 0) return LINE_UNSURE;
            pending = k;
            break;
          }
        }
      }
      while (i < end && isWs(b[i]!)) i++;
      if (i >= end || b[i] !== 0x3a) return LINE_UNSURE;
      i++;
      while (i < end && isWs(b[i]!)) i++;
      if (depth === 1) valueStart = i;
      state = VALUE;
      continue;
    }
    // AFTER: a value ended at i.
    if (depth === 1 && pending >= 0) {
      found[3 * pending] = valueStart;
      found[3 * pending + 1] = valueEnd;
      found[3 * pending + 2] = b[valueStart] === QUOTE && escaped ? 1 : 0;
      pending = -1;
    }
    if (depth === 0) return i === end ? LINE_OBJECT : LINE_UNSURE;
    if (i >= end) return LINE_UNSURE;
    const c = b[i]!;
    const top = stack[depth - 1];
    if (c === 0x2c) {
      i++;
      state = top === OBJECT ? NAME : VALUE;
    } else if (c === (top === OBJECT ? 0x7d : 0x5d)) {
      depth--;
      i++;
      valueEnd = i;
      // A container just closed: it is the value that ended (escapes inside it do not count).
      escaped = false;
    } else return LINE_UNSURE;
  }
}

function sameBytes(b: Uint8Array, s: number, e: number, key: Uint8Array): boolean {
  if (e - s !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (b[s + i] !== key[i]) return false;
  return true;
}

/**
 * The value of top-level field `key` in the JSON object line `buf[start .. end)`, when it is a
 * string written without escapes: its UTF-8 bytes are then `buf[out[0] .. out[1])` and this returns
 * true. False otherwise, and whenever {@link scanJsonLine} cannot tell. For lines read again after
 * a pass that checked them: `escapes` false (the caller knows the line has no backslash, see
 * {@link lineHasBackslash}) ends strings at the next quote by a native search (most of a line is its
 * text; a loop over its bytes in JavaScript took ~2 µs a line), and control characters are then
 * not looked for.
 * Why these parameters: called once per line for each field looked up; an options object would be an allocation per line.
 */
export function plainStringField(buf: Buffer, start: number, end: number, key: Uint8Array, out: Int32Array, escapes = true): boolean {
  const found = fieldFound;
  keyList[0] = key;
  // A batch's lines share one buffer: its two stops are made once.
  if (stops.buf !== buf) stops = { buf, js: stringStopJs(buf), quote: quoteStop(buf) };
  if (scanJsonLine(buf, start, end, keyList, found, escapes ? stops.js : stops.quote) !== LINE_OBJECT) return false;
  const vs = found[0]!;
  if (vs < 0 || buf[vs] !== QUOTE || found[2] === 1) return false;
  out[0] = vs + 1;
  out[1] = found[1]! - 1;
  return true;
}

const fieldFound = new Int32Array(3);
let stops: { buf: Buffer | null; js: StringStop; quote: StringStop } = { buf: null, js: () => 0, quote: () => 0 };
const keyList: Uint8Array[] = [new Uint8Array(0)];

/**
 * Tells, line by line in order, whether a line has a backslash: `has(start, end)` for consecutive
 * lines of `buf`, with one forward native search over the whole buffer in all.
 */
export function lineHasBackslash(buf: Buffer): (start: number, end: number) => boolean {
  let next = buf.indexOf(BACKSLASH);
  return (start, end) => {
    while (next >= 0 && next < start) next = buf.indexOf(BACKSLASH, next + 1);
    return next >= 0 && next < end;
  };
}
