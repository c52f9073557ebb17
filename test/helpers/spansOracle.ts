/**
 * Test helper: a brute-force oracle of `neardup spans` (src/spans/), written apart from it: units
 * found by plain string scans, every unit compared with every earlier one by its normalized text
 * (quadratic, no hashing), offsets by counting code points and UTF-8 bytes of prefixes.
 */
import { makeNormalizer, resolvePreset, type NormalizeOptions } from '../../src/text/normalize.js';
import { tokens } from '../../src/text/tokens.js';

export interface OracleOptions {
  unit: 'line' | 'paragraph' | 'sentence' | 'substring';
  window?: number;
  minLength?: number;
  lengthUnit?: 'words' | 'bytes';
  minDocs?: number;
  minUnitWords?: number;
  minDocWords?: number;
  normalize?: NormalizeOptions;
}

interface OUnit {
  cut: [number, number];
  key: string;
  text: string;
}

export interface OracleRange {
  start: number;
  end: number;
  byteStart: number;
  byteEnd: number;
}

export interface OracleAudit extends OracleRange {
  id: string;
  keptId: string | null;
  keptStart: number | null;
  keptByteStart: number | null;
  count: number;
  docs: number;
}

export interface OracleDoc {
  text: string;
  changed: boolean;
  dropped: boolean;
  removed: OracleRange[];
}

const blank = (s: string): boolean => s.trim() === '';

/** [start, end of text without its break, end with it] of each line. */
function lineSpans(text: string): [number, number, number][] {
  const out: [number, number, number][] = [];
  let a = 0;
  while (a < text.length) {
    const rest = text.slice(a);
    const m = /^([^\n]*?)(\r?\n|$)/.exec(rest)!;
    const len = m[0].length === 0 ? rest.length : m[0].length;
    let content = m[1]!;
    if (m[2] === '' && content.length < rest.length) content = rest;
    out.push([a, a + content.length, a + len]);
    a += len;
  }
  return out;
}

function units(text: string, o: OracleOptions, norm: (s: string) => string): OUnit[] {
  const raw: { cut: [number, number]; text: string }[] = [];
  if (o.unit === 'line') {
    for (const [a, e, c] of lineSpans(text)) if (!blank(text.slice(a, e))) raw.push({ cut: [a, c], text: text.slice(a, e) });
  } else if (o.unit === 'paragraph') {
    const ls = lineSpans(text);
    const paras: { a: number; e: number }[] = [];
    let cur: { a: number; e: number } | undefined;
    for (const [a, e] of ls) {
      if (blank(text.slice(a, e))) cur = undefined;
      else if (cur) cur.e = e;
      else paras.push(cur = { a, e });
    }
    paras.forEach((p, i) => raw.push({ cut: [p.a, i + 1 < paras.length ? paras[i + 1]!.a : text.length], text: text.slice(p.a, p.e) }));
  } else if (o.unit === 'substring' && o.lengthUnit === 'bytes') {
    return byteWindows(text, o);
  } else if (o.unit === 'substring') {
    // Every window of L words; a window's key is its words, each normalized alone.
    const noSpace = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u.test(text);
    const ws = noSpace
      ? [...new Intl.Segmenter(undefined, { granularity: 'word' }).segment(text)].filter((s) => s.isWordLike).map((s) => ({
        a: s.index,
        b: s.index + s.segment.length,
      }))
      : [...text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)].map((m) => ({ a: m.index!, b: m.index! + m[0].length }));
    const L = o.minLength ?? 50;
    const out: OUnit[] = [];
    for (let i = 0; i + L <= ws.length; i++) {
      const words = ws.slice(i, i + L);
      out.push({
        cut: [words[0]!.a, words[L - 1]!.b],
        key: words.map((w) => norm(text.slice(w.a, w.b))).join('\u0001'),
        text: text.slice(words[0]!.a, words[L - 1]!.b),
      });
    }
    return (o.minUnitWords ?? 0) > L ? [] : out;
  } else {
    const segs = [...new Intl.Segmenter(undefined, { granularity: 'sentence' }).segment(text)].filter((s) => !blank(s.segment));
    const w = Math.min(o.window ?? 3, segs.length);
    for (let i = 0; w > 0 && i + w <= segs.length; i++) {
      const a = segs[i]!.index;
      const b = segs[i + w - 1]!.index + segs[i + w - 1]!.segment.length;
      raw.push({ cut: [a, b], text: text.slice(a, b).trim() });
    }
  }
  return raw
    .map((u) => ({ cut: u.cut, key: norm(u.text), text: u.text }))
    .filter((u) => u.key !== '' && tokens(u.key).length >= (o.minUnitWords ?? 0));
}

/**
 * Byte windows, as docs/spans.md defines them: each character normalized alone into code points,
 * a run of whitespace (or stripped punctuation) one space (each alone under the none preset); a
 * window from a character's first code point to the fewest code points of at least L UTF-8 bytes.
 */
function byteWindows(text: string, o: OracleOptions): OUnit[] {
  const n = o.normalize ?? {};
  const norm = makeNormalizer(n);
  const collapse = resolvePreset(n.preset) !== 'none';
  const toks: { s: string; a: number; b: number; first: boolean }[] = [];
  let inGap = false;
  for (let i = 0; i < text.length;) {
    const c = String.fromCodePoint(text.codePointAt(i)!);
    const isGap = /\s/u.test(c) || (n.stripPunctuation === true && /[\p{P}\p{S}]/u.test(c));
    if (isGap && collapse && inGap) toks[toks.length - 1]!.b = i + c.length;
    else if (isGap) toks.push({ s: collapse || !/\s/u.test(c) ? ' ' : c, a: i, b: i + c.length, first: true });
    else {
      const cps = Array.from(norm(c));
      cps.forEach((s, j) => toks.push({ s, a: i, b: i + c.length, first: j === 0 }));
      if (cps.length > 0) inGap = false;
    }
    if (isGap) inGap = true;
    i += c.length;
  }
  const L = o.minLength ?? 50;
  const out: OUnit[] = [];
  for (let t = 0; t < toks.length; t++) {
    if (!toks[t]!.first) continue;
    let key = '';
    let e = t;
    while (e < toks.length && Buffer.byteLength(key) < L) key += toks[e++]!.s;
    if (Buffer.byteLength(key) < L) break;
    const cut: [number, number] = [toks[t]!.a, toks[e - 1]!.b];
    out.push({ cut, key, text: text.slice(cut[0], cut[1]) });
  }
  return out;
}

/** Collapses the rows audit[from..] of one document (its removed windows `cuts`, in order) into one row per run of overlapping windows. */
function mergeRows(audit: OracleAudit[], from: number, text: string, cuts: [number, number][]): void {
  const rows = audit.splice(from);
  let end = -1;
  rows.forEach((r, i) => {
    const [a, b] = cuts[i]!;
    if (i > 0 && a <= end) {
      end = Math.max(end, b);
      const last = audit[audit.length - 1]!;
      last.end = cps(text.slice(0, end));
      last.byteEnd = bytes(text.slice(0, end));
    } else {
      end = b;
      audit.push(r);
    }
  });
}

const cps = (s: string): number => Array.from(s).length;
/** A top unit's text as the summary shows it: at most 500 UTF-16 code units, then `…`. */
const shown = (s: string): string => (s.length > 500 ? `${s.slice(0, 500)}…` : s);
const bytes = (s: string): number => Buffer.byteLength(s);

/** The oracle's answer for documents `texts` with ids `ids`. */
export function spansOracle(
  texts: readonly string[],
  ids: readonly string[],
  o: OracleOptions,
): { docs: OracleDoc[]; audit: OracleAudit[]; units: number; distinct: number; top: { text: string; count: number; docs: number }[] } {
  const norm = makeNormalizer(o.normalize ?? {});
  const all = texts.map((t) => units(t, o, norm));
  const flat: { doc: number; u: OUnit }[] = [];
  all.forEach((us, doc) => us.forEach((u) => flat.push({ doc, u })));
  const docs: OracleDoc[] = [];
  const audit: OracleAudit[] = [];
  let auditFrom = 0;
  texts.forEach((text, d) => {
    const removedCuts: [number, number][] = [];
    for (const u of all[d]!) {
      const same = flat.filter((x) => x.u.key === u.key);
      const first = same[0]!;
      const docCount = new Set(same.map((x) => x.doc)).size;
      const isFirst = first.doc === d && first.u.cut[0] === u.cut[0];
      const remove = o.minDocs === undefined ? !isFirst : docCount >= o.minDocs;
      if (!remove) continue;
      removedCuts.push(u.cut);
      const ft = texts[first.doc]!.slice(0, first.u.cut[0]);
      audit.push({
        id: ids[d]!,
        start: cps(text.slice(0, u.cut[0])),
        end: cps(text.slice(0, u.cut[1])),
        byteStart: bytes(text.slice(0, u.cut[0])),
        byteEnd: bytes(text.slice(0, u.cut[1])),
        keptId: o.minDocs === undefined ? ids[first.doc]! : null,
        keptStart: o.minDocs === undefined ? cps(ft) : null,
        keptByteStart: o.minDocs === undefined ? bytes(ft) : null,
        count: same.length,
        docs: docCount,
      });
    }
    // Substring windows: one audit row per run of overlapping removed windows, named by its first.
    if (o.unit === 'substring') mergeRows(audit, auditFrom, text, removedCuts);
    auditFrom = audit.length;
    // Merged cuts: a character is cut when any removed unit covers it.
    const covered = new Uint8Array(text.length);
    for (const [a, b] of removedCuts) covered.fill(1, a, b);
    const removed: OracleRange[] = [];
    let kept = '';
    for (let i = 0; i < text.length;) {
      if (!covered[i]) {
        kept += text[i];
        i++;
        continue;
      }
      let j = i;
      while (j < text.length && covered[j]) j++;
      removed.push({ start: cps(text.slice(0, i)), end: cps(text.slice(0, j)), byteStart: bytes(text.slice(0, i)), byteEnd: bytes(text.slice(0, j)) });
      i = j;
    }
    const changed = removedCuts.length > 0;
    const dropped = changed && tokens(kept).length < (o.minDocWords ?? 1);
    docs.push({ text: changed ? kept : text, changed, dropped, removed });
  });
  // The most repeated units: by occurrences, ties by first occurrence; the first occurrence's text.
  const groups = new Map<string, { doc: number; u: OUnit }[]>();
  for (const x of flat) groups.set(x.u.key, [...(groups.get(x.u.key) ?? []), x]);
  const top = [...groups.values()]
    .filter((g) => g.length > 1)
    .sort((a, b) => b.length - a.length || a[0]!.doc - b[0]!.doc || a[0]!.u.cut[0] - b[0]!.u.cut[0])
    .map((g) => ({ text: shown(g[0]!.u.text), count: g.length, docs: new Set(g.map((x) => x.doc)).size }));
  return { docs, audit, units: flat.length, distinct: groups.size, top };
}
