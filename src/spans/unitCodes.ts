/**
 * Lines and paragraphs split from a text held as UTF-16 code units in a typed array (pass 1 over
 * bytes decodes a record's text there, with no string): the same units, at the same UTF-16
 * indices, as ./units.ts splits from the string, blank lines told by the same `\s`.
 * @module
 */
import type { Units } from './units.js';

/** Per code unit: 1 when `/\s/` matches it (JavaScript's whitespace, which units.ts's `isBlank` tests), made once. */
let spaceTable: Uint8Array | undefined;

/** {@link spaceTable}, made on first use from the regular expression itself, so the two cannot differ. */
function spaces(): Uint8Array {
  if (spaceTable) return spaceTable;
  const t = new Uint8Array(65536);
  const ws = /\s/;
  for (let c = 0; c < 65536; c++) if (ws.test(String.fromCharCode(c))) t[c] = 1;
  return (spaceTable = t);
}

/** Appends a unit's cut range and text range. Why these parameters: once per unit, with no object per unit. */
function push(u: Units, start: number, end: number, ts: number, te: number): void {
  u.start[u.count] = start;
  u.end[u.count] = end;
  u.textStart[u.count] = ts;
  u.textEnd[u.count] = te;
  u.count++;
}

/** Whether `s[a, b)` is all whitespace. */
function blank(s: Uint16Array, a: number, b: number, sp: Uint8Array): boolean {
  for (let i = a; i < b; i++) if (sp[s[i]!] === 0) return false;
  return true;
}

/** units.ts's lines over `s` (the text's code units, exactly: line feeds found by the typed array's own `indexOf`, faster than a loop here). */
function lines(s: Uint16Array, n: number, u: Units, sp: Uint8Array): void {
  let a = 0;
  while (a < n) {
    let nl = s.indexOf(0x0a, a);
    const cut = nl < 0 ? n : nl + 1;
    if (nl < 0) nl = n;
    const te = nl > a && s[nl - 1] === 0x0d ? nl - 1 : nl;
    if (!blank(s, a, te, sp)) push(u, a, cut, a, te);
    a = cut;
  }
}

/** units.ts's paragraphs over `s` (the text's code units, exactly). */
function paragraphs(s: Uint16Array, n: number, u: Units, sp: Uint8Array): void {
  let a = 0;
  let pStart = -1;
  let pTextEnd = -1;
  while (a < n) {
    let nl = s.indexOf(0x0a, a);
    const next = nl < 0 ? n : nl + 1;
    if (nl < 0) nl = n;
    const te = nl > a && s[nl - 1] === 0x0d ? nl - 1 : nl;
    if (!blank(s, a, te, sp)) {
      if (pStart >= 0 && pTextEnd >= 0 && breaks(s, pTextEnd, a) >= 2) {
        push(u, pStart, a, pStart, pTextEnd);
        pStart = -1;
      }
      if (pStart < 0) pStart = a;
      pTextEnd = te;
    }
    a = next;
  }
  if (pStart >= 0) push(u, pStart, n, pStart, pTextEnd);
}

/** The line feeds in `s[e, a)`. */
function breaks(s: Uint16Array, e: number, a: number): number {
  let k = 0;
  for (let i = e; i < a; i++) if (s[i] === 0x0a) k++;
  return k;
}

/** The lines or paragraphs of the text `s[0, n)` into `out` (cleared first), as `splitUnits` splits the same text as a string. */
export function splitUnitCodes(s: Uint16Array, n: number, kind: 'line' | 'paragraph', out: Units): Units {
  out.count = 0;
  // A view of the text alone (one per document): `indexOf` must not find a line feed past it.
  const text = s.length === n ? s : s.subarray(0, n);
  if (kind === 'line') lines(text, n, out, spaces());
  else paragraphs(text, n, out, spaces());
  return out;
}
