/**
 * Fused normalization + symbol lookup: one pass over a raw text's code units that yields the symbol
 * hashes (see `symbols.ts`) of the code points of the *normalized* text, without building the
 * normalized string. Bit-identical to `symbols(normalize(text))`; a text the fast pass cannot prove
 * equivalent for (combining marks, Hangul jamo, final sigma, surrogates, …) takes the reference route.
 *
 * Why it is safe: NFKC of a string is the concatenation of the NFKC of its characters unless a
 * character composes with or reorders against its neighbour. Only combining marks (\p{M}) and
 * conjoining Hangul jamo ever do that in the BMP, so characters whose NFKC contains neither are
 * mapped one by one. `toLowerCase` is context-free except for Σ, which is excluded. Whitespace
 * collapsing and trimming are a small state machine over the same classes.
 * @module
 */
import { makeNormalizer, resolvePreset, type NormalizeOptions } from './normalize.js';
import { symbolHash, symbolTable } from './symbols.js';

/** Character classes of the lookup table (0 = not built yet). */
const UNKNOWN = 0;
const SAFE = 1; // maps to one symbol
const WS = 2; // whitespace (default preset: collapsed and trimmed)
const SLOW = 3; // the fast pass cannot handle it: use the reference route
const EXP = 4; // maps to several symbols (e.g. "…" → "...")
const SP = 5; // lowercase-collapse: a space (runs collapse)
const NL = 6; // lowercase-collapse: a newline (runs collapse)

const WS_RE = /\s/;
const MARK_RE = /\p{M}/u;

/** How a preset maps one BMP code unit to normalized text (undefined: not mappable alone). */
type CharMap = (c: string) => string | undefined;

/**
 * A per-seed, per-preset lookup table from BMP code units to classes and symbols, built lazily
 * 256 code units (one block) at a time. Exported for the WebAssembly path, which mirrors it.
 */
export class SymbolTable {
  readonly cls = new Uint8Array(65536);
  readonly sym = new Int32Array(65536);
  /** For EXP: start (in `exp`) << 5 | length. */
  readonly expRef = new Int32Array(65536);
  exp = new Int32Array(256);
  expUsed = 0;
  readonly spaceSym: number;
  private readonly table: Uint32Array;

  constructor(
    readonly seed: number,
    private readonly map: CharMap,
    /** The preset's kind: only `lowercase-collapse` uses classes 5 and 6 (space and newline runs). */
    readonly kind: 'nfkc' | 'lowercase-collapse' | 'none',
  ) {
    this.table = symbolTable(seed);
    this.spaceSym = this.table[32]! | 0;
  }

  private symOf(cp: number): number {
    return (cp < 65536 ? this.table[cp]! : symbolHash(cp, this.seed)) | 0;
  }

  /** Fills the classes of the 256 code units of block `b` (if not done yet). */
  build(b: number): void {
    if (this.cls[b << 8] !== UNKNOWN) return;
    for (let c = b << 8, end = c + 256; c < end; c++) this.cls[c] = this.classify(c);
  }

  private classify(c: number): number {
    if (c >= 0xd800 && c <= 0xdfff) return SLOW;
    if (this.kind === 'none') {
      this.sym[c] = this.table[c]! | 0;
      return SAFE;
    }
    if (this.kind === 'lowercase-collapse') {
      if (c === 32) return SP;
      if (c === 10) return NL;
    }
    const ch = String.fromCharCode(c);
    if (c === 0x3a3 || MARK_RE.test(ch) || (c >= 0x1100 && c <= 0x11ff)) return SLOW;
    const u = this.map(ch);
    if (u === undefined || u.length === 0) return SLOW;
    if (this.kind === 'nfkc') {
      if (u.length === 1 && WS_RE.test(u)) return WS;
      for (const x of u) {
        const p = x.codePointAt(0)!;
        if (WS_RE.test(x) || MARK_RE.test(x) || (p >= 0x1100 && p <= 0x11ff) || p === 0x3a3 || p === 0x3c2) return SLOW;
      }
    }
    const cps = Array.from(u, (x) => x.codePointAt(0)!);
    if (cps.length === 1) {
      this.sym[c] = this.symOf(cps[0]!);
      return SAFE;
    }
    if (cps.length > 31) return SLOW;
    if (this.expUsed + cps.length > this.exp.length) {
      const grown = new Int32Array((this.expUsed + cps.length) * 2);
      grown.set(this.exp);
      this.exp = grown;
    }
    this.expRef[c] = (this.expUsed << 5) | cps.length;
    for (const p of cps) this.exp[this.expUsed++] = this.symOf(p);
    return EXP;
  }
}

const tables = new Map<string, SymbolTable>();

function getTable(seed: number, kind: 'nfkc' | 'lowercase-collapse' | 'none', keepCase: boolean): SymbolTable {
  const key = `${seed}:${kind}:${keepCase}`;
  let t = tables.get(key);
  if (!t) {
    const map: CharMap = kind === 'none'
      ? (ch) => ch
      : kind === 'lowercase-collapse'
      ? (ch) => ch.toLowerCase()
      : keepCase
      ? (ch) => ch.normalize('NFKC')
      : (ch) => {
        const n = ch.normalize('NFKC');
        // Σ anywhere would make toLowerCase context dependent.
        return n.includes('\u03a3') ? undefined : n.toLowerCase();
      };
    t = new SymbolTable(seed, map, kind);
    if (tables.size > 16) tables.clear();
    tables.set(key, t);
  }
  return t;
}

/**
 * Writes the symbol hashes of the code points of `text` (already normalized) into `out`
 * (length ≥ text.length) and returns their number. Surrogate pairs are one code point; a lone
 * surrogate is a code point of its own value, as in `codePoints`.
 */
export function symbolsOf(text: string, seed: number, out: Int32Array): number {
  const table = symbolTable(seed);
  const len = text.length;
  let n = 0;
  for (let i = 0; i < len; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out[n++] = symbolHash(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000, seed) | 0;
        i++;
        continue;
      }
    }
    out[n++] = table[c]! | 0;
  }
  return n;
}

/**
 * The lookup table that fuses the given normalization, or null when the options need the string
 * route (punctuation or diacritics stripping, a custom function).
 */
export function fusedSymbolTable(options: NormalizeOptions, seed: number): SymbolTable | null {
  if (options.stripPunctuation || options.stripDiacritics || options.custom) return null;
  const preset = resolvePreset(options.preset);
  if (preset === 'none') return getTable(seed >>> 0, 'none', false);
  if (preset === 'lowercase-collapse') return getTable(seed >>> 0, 'lowercase-collapse', false);
  if (preset === 'default') return getTable(seed >>> 0, 'nfkc', options.keepCase ?? false);
  return null;
}

/** Turns raw texts into the symbol sequence of their normalized form. */
export interface Symbolizer {
  /**
   * The symbols of `normalize(text)` in a reused internal buffer (valid until the next call);
   * `count` of them are meaningful.
   */
  symbols(text: string): { syms: Int32Array; count: number };
}

/** The symbols a symbolizer hands back: the same object on every call, its array grown as texts need. */
class SymbolBuffer {
  syms = new Int32Array(4096);
  count = 0;

  /** Makes room for `need` symbols (what the array held is not kept). */
  ensure(need: number): void {
    if (this.syms.length < need) this.syms = new Int32Array(Math.max(need, this.syms.length * 2));
  }
}

/**
 * Builds a {@link Symbolizer} for the given normalization options and hash seed. The default and
 * lowercase-collapse presets (and `none`) get the fused single pass; other options (punctuation or diacritics
 * stripping, a custom function) normalize the string first, then look symbols up.
 */
export function createSymbolizer(options: NormalizeOptions = {}, seed = 0): Symbolizer {
  const norm = makeNormalizer(options);
  const preset = resolvePreset(options.preset);
  const plain = !options.stripPunctuation && !options.stripDiacritics && !options.custom;
  const result = new SymbolBuffer();
  /** The symbols of `t` as it is (already normalized). */
  const direct = (t: string): { syms: Int32Array; count: number } => {
    result.ensure(t.length + 1);
    result.count = symbolsOf(t, seed, result.syms);
    return result;
  };
  const slow = (text: string): { syms: Int32Array; count: number } => direct(norm(text));
  if (!plain) return { symbols: slow };
  if (preset === 'none') return { symbols: direct };
  const st = fusedSymbolTable(options, seed)!;
  const { cls, sym, expRef, spaceSym } = st;
  return {
    symbols(text) {
      const len = text.length;
      result.ensure(len + 1);
      let out = result.syms;
      let n = 0;
      let pend = false; // default preset: a whitespace run is waiting for a following character
      let prev = 0; // lowercase-collapse: class of the previous code unit
      for (let i = 0; i < len; i++) {
        const c = text.charCodeAt(i);
        const cl = cls[c]!;
        if (cl === SAFE) {
          if (pend) {
            out[n++] = spaceSym;
            pend = false;
          }
          out[n++] = sym[c]!;
          prev = SAFE;
          continue;
        }
        if (cl === WS) {
          pend = n > 0;
          continue;
        }
        if (cl === SP || cl === NL) {
          if (prev !== cl) out[n++] = spaceSym;
          prev = cl;
          continue;
        }
        if (cl === EXP) {
          const ref = expRef[c]!;
          const m = ref & 31;
          if (n + m + (len - i) + 1 > out.length) {
            result.ensure(Math.max(out.length * 2, n + m + (len - i) + 1));
            result.syms.set(out.subarray(0, n));
            out = result.syms;
          }
          if (pend) {
            out[n++] = spaceSym;
            pend = false;
          }
          const exp = st.exp;
          for (let j = ref >>> 5, e = j + m; j < e; j++) out[n++] = exp[j]!;
          prev = EXP;
          continue;
        }
        if (cl === UNKNOWN) {
          st.build(c >>> 8);
          i--;
          continue;
        }
        return slow(text);
      }
      result.count = n;
      return result;
    },
  };
}
