/**
 * A unit's 64-bit hash straight from the document: the code units of `text[a, b)` are normalized
 * one at a time into a reused buffer and hashed as `unitHash64Text` hashes a string, with no substring,
 * no normalized string and no regular expression per unit. The result is exactly `unitHash64Text` of `makeNormalizer(o)` of
 * the slice, so the hashes (and `units.u32` of a spans job) are those of the string path; a unit
 * holding a code unit the per-character table cannot normalize alone falls back to that path.
 *
 * The `default` preset is NFKC, lowercase, whitespace runs to one space, trimmed. Per character it
 * is a table lookup for code units that are their own NFKC alone and cannot change next to any
 * neighbour: not a mark, not a Hangul jamo vowel or trailing consonant (the characters that compose
 * with the one before), not whitespace other than ASCII's, not a surrogate, and whose lowercase is
 * one such code unit (Σ excluded: its lowercase depends on what follows). A string of such
 * characters is already NFKC and lowercases character by character. test/spans/unitHash.test.ts
 * checks the table against every BMP composition and the hashes against the string path.
 *
 * Why this file is long: the string path, the kernel's, the texts decoded from JSON bytes into the
 * kernel's memory and the whole-document normalization share one hasher's buffers and table.
 * @module
 */
import { unitHash64, unitHash64Text } from '../hash/unitHash64.js';
import { makeNormalizer, resolvePreset, type NormalizeOptions } from '../text/normalize.js';
import { kernelsModule } from '../wasm/wasmKernels.js';
import { decodeJsonString, decoded } from './jsonScan.js';
import { SENTENCE_CLASSES } from './sentences.js';

/** Table entries: the output code unit, or one of these. */
const UNKNOWN = -3;
const FALLBACK = -1;
const SPACE = -2;
const MARK = /\p{M}/u;
const WS = /\s/;

/** Whether code unit `c` normalizes alone, as the module comment says; its output code unit or {@link FALLBACK}. */
function entry(c: number, lower: boolean): number {
  if (c === 0x09 || c === 0x0a || c === 0x0b || c === 0x0c || c === 0x0d || c === 0x20) return SPACE;
  if (c < 0x80) return lower && c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
  if ((c >= 0xd800 && c <= 0xdfff) || c === 0x03a3 || (c >= 0x1100 && c <= 0x11ff)) return FALLBACK;
  const s = String.fromCharCode(c);
  if (s.normalize('NFKC') !== s || MARK.test(s) || WS.test(s)) return FALLBACK;
  if (!lower) return c;
  const l = s.toLowerCase();
  if (l.length !== 1 || l.normalize('NFKC') !== l || MARK.test(l) || WS.test(l)) return FALLBACK;
  const d = l.charCodeAt(0);
  return (d >= 0xd800 && d <= 0xdfff) || (d >= 0x1100 && d <= 0x11ff) ? FALLBACK : d;
}

/** The WebAssembly kernels of this module (src/wasm/kernels.wat): a unit's hash, a document normalized, a range's hash. */
interface Kernels {
  unitHash(src: number, a: number, b: number, tbl: number, buf: number, out: number): number;
  normalizeDoc(src: number, n: number, tbl: number, norm: number, pos: number, lower: number): number;
  hashUnits(p: number, len: number, out: number): number;
  jsonString(p: number, q: number, out: number, info: number): number;
  codeUnits(src: number, from: number, n: number, para: number, tbl: number, buf: number, out: number, max: number, info: number): number;
  utf8Offsets(src: number, p: number, to: number, n: number, out: number): number;
  sentenceUnits(src: number, n: number, cls: number, out: number, max: number): number;
  jsonQuote(src: number, n: number, out: number): number;
  memory: WebAssembly.Memory;
}

/**
 * Where the kernel's memory holds the table (65,536 i32), the two lanes (and the other small
 * answers), {@link K_UNITS} unit records of `codeUnits`, then the document's code units and a unit's normalized ones.
 */
const K_TABLE = 0;
const K_OUT = 65536 * 4;
/** Units `codeUnits` writes per call (6 i32 each), so that its output takes a fixed room. */
const K_UNITS = 1024;
const K_RECS = K_OUT + 64;
/** The sentence classes (256 u8) `sentenceUnits` reads. */
const K_CLS = K_RECS + K_UNITS * 24;
const K_SRC = K_CLS + 256;

/** Code units from which {@link UnitHasher.decodeJsonText} leaves the string to JSON.parse (below Node's external strings, 0xFBEE9 bytes). */
const LONG_TEXT = 1 << 19;

/** True on a little-endian machine (every platform Node ships for); a big-endian one takes the string path. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * {@link unitHash64} of code units already normalized, in an instance of the kernels of its own when
 * the runtime has them (its `hashUnits`), else in JavaScript, whose 64-bit products from 16-bit
 * pieces cost 4–5 times `textHash2`'s: the string path and `--normalize none` hash every unit here.
 */
class CodeUnitHash {
  /** The instance, made at the first hash (the default preset's units rarely come here): undefined before, null without the kernels. */
  private made: Pick<Kernels, 'hashUnits' | 'memory'> | null | undefined;
  private lanes = new Uint32Array(0);
  private units = new Uint16Array(0);
  private bytes = Buffer.alloc(0);

  private get fn(): Pick<Kernels, 'hashUnits' | 'memory'> | null {
    if (this.made === undefined) {
      const mod = kernelsModule();
      this.made = mod ? (new WebAssembly.Instance(mod, {}).exports as unknown as Kernels) : null;
      if (this.made) this.views();
    }
    return this.made;
  }

  /** The lanes at 0, the code units from {@link AT}: views made again after the memory grows. */
  private views(): void {
    const ab = this.made!.memory.buffer;
    this.lanes = new Uint32Array(ab, 0, 2);
    this.units = new Uint16Array(ab, AT, (ab.byteLength - AT) >>> 1);
    this.bytes = Buffer.from(ab, AT, ab.byteLength - AT);
  }

  private room(n: number): void {
    if (n <= this.units.length) return;
    const m = this.fn!.memory;
    m.grow(Math.ceil((2 * n + AT - m.buffer.byteLength) / 65536));
    this.views();
  }

  /** The hash of the first `len` code units of `c` into `out`; returns `len`. */
  codes(c: Uint16Array, len: number, out: Uint32Array): number {
    if (!this.fn) return unitHash64(c, 0, len, out);
    this.room(len);
    this.units.set(c.subarray(0, len));
    return this.take(len, out);
  }

  /** The hash of a string's code units into `out`; returns its length. */
  text(t: string, out: Uint32Array): number {
    if (!this.fn) return unitHash64Text(t, out);
    this.room(t.length);
    this.bytes.write(t, 0, 'utf16le');
    return this.take(t.length, out);
  }

  private take(len: number, out: Uint32Array): number {
    this.fn!.hashUnits(AT, len, 0);
    out[0] = this.lanes[0]!;
    out[1] = this.lanes[1]!;
    return len;
  }
}

/** Where {@link CodeUnitHash} writes the code units in its kernel's memory (the hash's two halves are at 0). */
const AT = 64;

/**
 * Hashes units as {@link UnitWalker} compares them. `hash` writes the two lanes into `out` and
 * returns the normalized text's length in UTF-16 code units (0: the unit normalizes to nothing).
 */
export class UnitHasher {
  /** 0: the string path always; 1: the default preset; 2: `none` (the text as it is). */
  private readonly mode: 0 | 1 | 2;
  private readonly lower: boolean;
  /** Per BMP code unit: its output, {@link SPACE}, {@link FALLBACK}, or {@link UNKNOWN} until first met (in the kernel's memory, with one). */
  private table = new Int32Array(65536).fill(UNKNOWN);
  /**
   * The default preset's per-unit loop in WebAssembly (about twice as fast as in JavaScript), when
   * the runtime has it: its function, memory, and where the normalized code units go ({@link src} is there too).
   */
  private kernel:
    | {
      fn: Kernels;
      buf: number;
      norm: number;
      pos: number;
      lanes: Uint32Array;
      inp: number;
      bytes: Uint8Array;
      info: Int32Array;
      small: Int32Array;
      quoteIn: number;
      quoteOut: number;
      quoteBytes: Buffer;
    }
    | undefined;
  private readonly norm: (t: string) => string;
  /** The hash of code units normalized outside the kernel's `unitHash` (the string path, `none`, no kernel). */
  private readonly h64 = new CodeUnitHash();
  /** The normalized code units of the unit being hashed. */
  private buf = new Uint16Array(1024);
  /** The document whose code units {@link src} holds (the units of one document are hashed one after the other). */
  private doc = '';
  /** {@link src} holds code units a caller wrote ({@link codes}), not {@link doc}'s; {@link docLen}: how many. */
  private fromCodes = false;
  private docLen = 0;
  private src = new Uint16Array(1024);
  private srcBytes = Buffer.from(this.src.buffer);
  /** The normalized string of the last unit {@link hash} took the string path for, else undefined (its code units are in {@link last} from {@link lastAt}). */
  private slowText: string | undefined;
  private last: Uint16Array = this.buf;
  private lastAt = 0;
  /**
   * Overlapping units (sentence windows): the default preset normalizes the document once, into
   * {@link docNorm}, and hashes each unit from there, instead of normalizing each character once
   * per window it is in. {@link docPos}: each non-blank code unit's index in {@link docNorm}.
   */
  wholeDocs = false;
  private docNorm = new Uint16Array(1024);
  private docPos = new Int32Array(1024);
  /** {@link docNorm} for {@link doc}: 0 not made yet, 1 made, 2 the document holds a code unit the table cannot normalize (each unit alone, then). */
  private docState = 0;

  constructor(o: NormalizeOptions = {}) {
    this.norm = makeNormalizer(o);
    const preset = resolvePreset(o.preset);
    const plain = !o.stripPunctuation && !o.stripDiacritics && !o.custom;
    this.mode = !plain || !LITTLE_ENDIAN ? 0 : preset === 'default' ? 1 : preset === 'none' ? 2 : 0;
    this.lower = !o.keepCase;
    const mod = this.mode === 1 ? kernelsModule() : null;
    if (mod) {
      const e = new WebAssembly.Instance(mod, {}).exports as unknown as Kernels;
      const none = new Int32Array(0);
      const bytes = Buffer.alloc(0);
      this.kernel = {
        fn: e,
        buf: 0,
        norm: 0,
        pos: 0,
        lanes: new Uint32Array(0),
        inp: 0,
        bytes,
        info: none,
        small: none,
        quoteIn: 0,
        quoteOut: 0,
        quoteBytes: bytes,
      };
      this.table = new Int32Array(e.memory.buffer, K_TABLE, 65536).fill(UNKNOWN);
      this.room(this.src.length);
      new Uint8Array(e.memory.buffer, K_CLS, 256).set(SENTENCE_CLASSES);
    }
    for (const c of [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]) this.table[c] = SPACE;
  }

  /**
   * With the kernel: room in its memory for a document of `n` code units, a unit as long, the
   * document normalized and its positions, and the views on it made again (growing the memory
   * detaches them; the table's entries stay).
   */
  private room(n: number): void {
    const k = this.kernel!;
    const size = (2 * n + 15) & ~15;
    const buf = K_SRC + size;
    const norm = buf + size;
    const pos = norm + size;
    // And a JSON string's bytes, decoded into src ({@link decodeJson}): at most one code unit a byte.
    const inp = pos + 4 * n + 16;
    // And a text to quote as JSON ({@link jsonOf}), then its JSON: at most six bytes a code unit.
    const quoteIn = (inp + n + 31) & ~15;
    const quoteOut = quoteIn + 2 * n + 16;
    const need = quoteOut + 6 * n + 16;
    const memory = k.fn.memory;
    const have = memory.buffer.byteLength;
    if (need > have) memory.grow(Math.ceil((need - have) / 65536));
    const ab = memory.buffer;
    k.buf = buf;
    k.norm = norm;
    k.pos = pos;
    k.inp = inp;
    k.quoteIn = quoteIn;
    k.quoteOut = quoteOut;
    k.quoteBytes = Buffer.from(ab, quoteIn, 2 * n);
    k.bytes = new Uint8Array(ab);
    k.info = new Int32Array(ab, K_OUT + 8, 1);
    k.small = new Int32Array(ab, K_OUT + 16, 2);
    this.unitRecs = new Int32Array(ab, K_RECS, K_UNITS * 6);
    this.docNorm = new Uint16Array(ab, norm, n);
    this.docPos = new Int32Array(ab, pos, n);
    k.lanes = new Uint32Array(ab, K_OUT, 2);
    this.table = new Int32Array(ab, K_TABLE, 65536);
    this.src = new Uint16Array(ab, K_SRC, n);
    this.srcBytes = Buffer.from(ab, K_SRC, 2 * n);
    this.buf = new Uint16Array(ab, buf, n);
  }

  /** The normalized text of a unit (the string path; the summary's top units and word counts use it). */
  normalized(text: string, a: number, b: number): string {
    return this.norm(text.slice(a, b));
  }

  /**
   * The hash of the normalized `text[a, b)` into `out[0]`, `out[1]`; returns the normalized length.
   * The normalized code units go to a reused buffer first, then one tight loop hashes them: two
   * simple loops run faster than one that hashes as it normalizes.
   * Why these parameters: once per unit in the walker's loop, where an options object would allocate per unit.
   */
  hash(text: string, a: number, b: number, out: Uint32Array): number {
    if (this.mode !== 0 && (this.fromCodes || text !== this.doc)) this.load(text);
    return this.hashLoaded(text, a, b, out);
  }

  /**
   * Room for a text of `n` code units, which the caller writes into the array returned (valid until
   * the next call of this hasher), then tells their count to {@link tookCodes}: its units are then
   * hashed by {@link hashCodes}, with no string (pass 1 over bytes decodes a record's text there).
   */
  codes(n: number): Uint16Array {
    if (n > this.src.length) this.roomForDoc(n);
    return this.src;
  }

  /** The text whose units {@link hashCodes} hashes is the first `n` code units written into {@link codes}'s array. */
  tookCodes(n: number): void {
    this.fromCodes = true;
    this.doc = '';
    this.docLen = n;
    this.docState = 0;
  }

  /**
   * Decodes the contents of a JSON string, the bytes `b[a, q)` (valid UTF-8; its closing quote at
   * `q`), into {@link codes}'s array as `JSON.parse` decodes them (in the kernel when there is one):
   * returns the code units, or −1 where `JSON.parse` refuses the string; {@link jsonBytes} is then
   * its UTF-8 length. {@link tookCodes} is the caller's.
   */
  decodeJson(b: Uint8Array, a: number, q: number): number {
    const k = this.kernel;
    if (!k) {
      const n = decodeJsonString(b, a, q, this.codes(q - a));
      this.jsonBytes = decoded.bytes;
      return n;
    }
    this.codes(q - a);
    // The bytes with their closing quote, which ends the kernel's loops.
    k.bytes.set(b.subarray(a, q + 1), k.inp);
    const n = k.fn.jsonString(k.inp, k.inp + q - a, K_SRC, K_OUT + 8);
    this.jsonBytes = k.info[0]!;
    return n;
  }

  /** The UTF-8 length of the string {@link decodeJson} decoded last. */
  jsonBytes = 0;

  /** The unit records {@link splitCodes} wrote last: 6 i32 each (start, cut end, text end, normalized length, the two lanes). */
  unitRecs = new Int32Array(0);
  /** Where {@link splitCodes} stopped: the position to call it again from (the text's length once done). */
  resumeAt = 0;

  /** Whether {@link splitCodes} and {@link walkOffsets} run (the default preset in the kernel). */
  get inKernelToo(): boolean {
    return this.kernel !== undefined;
  }

  /**
   * The lines (or paragraphs) of the text {@link tookCodes} took, from `from` (0, then {@link resumeAt}),
   * split, normalized and hashed by one kernel call, not one per unit: the units of ./unitCodes.ts with
   * {@link hashCodes}'s hashes, into {@link unitRecs}; returns how many (at most {@link K_UNITS}), or −1
   * where a code unit needs the string path (the caller splits and hashes the rest the other way).
   */
  splitCodes(from: number, para: boolean): number {
    const k = this.kernel!;
    for (;;) {
      // Bit 1: lowercase (the kernel's ASCII runs skip the table, which lowercases or not).
      const flags = (para ? 1 : 0) | (this.lower ? 2 : 0);
      const r = k.fn.codeUnits(K_SRC, from, this.docLen, flags, K_TABLE, k.buf, K_RECS, K_UNITS, K_OUT + 8);
      if (r >= 0) {
        this.resumeAt = k.info[0]!;
        return r;
      }
      const c = this.src[-r - 1]!;
      if (this.table[c] !== UNKNOWN) return -1;
      this.table[c] = entry(c, this.lower);
    }
  }

  /**
   * The sentences of the text {@link tookCodes} took (or {@link holdText} loaded), `n` code units,
   * split by the kernel as ./sentences.ts splits them, the non-blank ones into {@link sentenceRecs}
   * (4 i32 each: start, end, first and past the last non-blank code unit); returns how many, or −1
   * when the text needs `Intl.Segmenter` (a character ./sentences.ts does not handle) or has more
   * sentences than a quarter of its code units. The records are valid until the next hash (they share
   * the room of the document's normalized positions).
   */
  splitSentences(n: number): number {
    const k = this.kernel!;
    return k.fn.sentenceUnits(K_SRC, n, K_CLS, k.pos, this.docPos.length >>> 2);
  }

  /** {@link splitSentences}'s records. */
  get sentenceRecs(): Int32Array {
    return this.docPos;
  }

  /**
   * `JSON.stringify(text)` as UTF-8 bytes, made by the kernel (5 times faster than `JSON.stringify`
   * on the texts cut records keep): a view of its memory, valid until the next call of this hasher;
   * undefined with no kernel. The text loaded stays loaded.
   */
  jsonOf(text: string): Uint8Array | undefined {
    const k = this.kernel;
    if (!k) return undefined;
    if (text.length > this.src.length) this.roomForDoc(text.length);
    k.quoteBytes.write(text, 0, 'utf16le');
    return this.quoted(text.length);
  }

  /** The JSON of the `n` code units at the kernel's quote input, as a view of its memory. */
  private quoted(n: number): Uint8Array {
    const k = this.kernel!;
    const len = k.fn.jsonQuote(k.quoteIn, n, k.quoteOut);
    return k.bytes.subarray(k.quoteOut, k.quoteOut + len);
  }

  /**
   * {@link jsonOf} of the text made of `source`'s ranges `kept` (`[start, end)` pairs in order),
   * copied from the kernel's copy of `source`, with no string made; undefined with no kernel or
   * when `source` is not the text loaded (the caller makes the text and calls {@link jsonOf}).
   */
  jsonOfRanges(source: string, kept: readonly number[]): Uint8Array | undefined {
    const k = this.kernel;
    if (!k || this.fromCodes || source !== this.doc) return undefined;
    let n = 0;
    for (let r = 0; r < kept.length; r += 2) {
      k.bytes.copyWithin(k.quoteIn + 2 * n, K_SRC + 2 * kept[r]!, K_SRC + 2 * kept[r + 1]!);
      n += kept[r + 1]! - kept[r]!;
    }
    return this.quoted(n);
  }

  /** Makes `text` the text loaded (its code units copied in, unless they are), for {@link walkOffsets}; false with no kernel. */
  holdText(text: string): boolean {
    if (!this.kernel) return false;
    if (this.fromCodes || text !== this.doc) this.load(text);
    return true;
  }

  /**
   * {@link OffsetCursor}'s walk in the kernel, over the text {@link holdText} loaded: from UTF-16
   * index `from` to `to`, the index reached; {@link walkedCp} and {@link walkedBytes}: what it passed.
   */
  walkOffsets(from: number, to: number): number {
    return this.kernel!.fn.utf8Offsets(K_SRC, from, to, this.docLen, K_OUT + 16);
  }

  /** Code points {@link walkOffsets} passed. */
  get walkedCp(): number {
    return this.kernel!.small[0]!;
  }

  /** UTF-8 bytes {@link walkOffsets} passed. */
  get walkedBytes(): number {
    return this.kernel!.small[1]!;
  }

  /**
   * {@link decodeJson}, then the text as a string (undefined where `JSON.parse` refuses it), whose
   * code units are then already loaded: {@link hash} of it reads them without copying them again.
   */
  decodeJsonText(b: Uint8Array, a: number, q: number): string | undefined {
    const n = this.decodeJson(b, a, q);
    return n < 0 ? undefined : this.textOfJson(b, a, q, n);
  }

  /** The text {@link decodeJson} decoded from `b[a, q)` into `n` code units, as a string, loaded as {@link decodeJsonText} loads it. */
  textOfJson(b: Uint8Array, a: number, q: number, n: number): string {
    // A long text as JSON.parse makes it: Node makes an external two-byte string of a long utf16le
    // decoding, even of Latin-1, and a regular expression over 5M such code units overflowed the stack
    // (a unicode regex's backtracking) where JSON.parse's one-byte string did not.
    if (n >= LONG_TEXT) return JSON.parse(Buffer.from(b.buffer, b.byteOffset + a - 1, q - a + 2).toString('utf8')) as string;
    // utf16le keeps lone surrogates, and V8 makes a one-byte string of Latin-1 code units.
    const text = this.srcBytes.toString('utf16le', 0, 2 * n);
    this.doc = text;
    this.docLen = n;
    this.fromCodes = false;
    this.docState = 0;
    return text;
  }

  /** {@link hash} of the text {@link tookCodes} took, units `[a, b)`. Why these parameters: as {@link hash}. */
  hashCodes(a: number, b: number, out: Uint32Array): number {
    return this.hashLoaded(undefined, a, b, out);
  }

  /** The code units `[a, b)` of the text {@link tookCodes} took, as a string (the rare units the string path normalizes). */
  codeString(a: number, b: number): string {
    let s = '';
    for (let i = a; i < b; i += 4096) s += String.fromCharCode(...this.src.subarray(i, Math.min(b, i + 4096)));
    return s;
  }

  /** {@link hash} of units of the text loaded: `text`, or (undefined) the code units {@link tookCodes} took. Why these parameters: as {@link hash}. */
  private hashLoaded(text: string | undefined, a: number, b: number, out: Uint32Array): number {
    const mode = this.mode;
    this.slowText = undefined;
    if (mode === 0) return this.slow(text, a, b, out);
    if (!this.kernel && b - a > this.buf.length) this.grow(b - a);
    if (this.wholeDocs && mode === 1) {
      if (this.docState === 0) this.normalizeDoc(this.docLen);
      if (this.docState === 1) return this.fromDoc(a, b, out);
    }
    if (this.kernel) return this.inKernel(text, a, b, out);
    const src = this.src;
    const buf = this.buf;
    this.last = buf;
    this.lastAt = 0;
    let len = 0;
    if (mode === 2) {
      for (let i = a; i < b; i++) buf[len++] = src[i]!;
      return this.h64.codes(buf, len, out);
    }
    const table = this.table;
    for (let i = a; i < b; i++) {
      const c = src[i]!;
      let m = table[c]!;
      if (m === UNKNOWN) m = table[c] = entry(c, this.lower);
      if (m >= 0) {
        buf[len++] = m;
        continue;
      }
      if (m === FALLBACK) return this.slow(text, a, b, out);
      // A whitespace run between two characters is one space; leading and trailing ones are trimmed.
      // (The whitespace entries are filled from the start, so the run's end is no unknown entry.)
      while (i + 1 < b && table[src[i + 1]!] === SPACE) i++;
      if (len > 0 && i + 1 < b) buf[len++] = 0x20;
    }
    return this.h64.codes(buf, len, out);
  }

  /** {@link hash} in the kernel. Why these parameters: as {@link hash}. */
  private inKernel(text: string | undefined, a: number, b: number, out: Uint32Array): number {
    const k = this.kernel!;
    this.last = this.buf;
    this.lastAt = 0;
    for (;;) {
      const len = k.fn.unitHash(K_SRC, a, b, K_TABLE, k.buf, K_OUT);
      if (len >= 0) {
        out[0] = k.lanes[0]!;
        out[1] = k.lanes[1]!;
        return len;
      }
      // A code unit not met before: its entry, then again; one the table cannot normalize alone: the string path.
      const c = this.src[-len - 1]!;
      if (this.table[c] !== UNKNOWN) return this.slow(text, a, b, out);
      this.table[c] = entry(c, this.lower);
    }
  }

  /** Copies the document's code units into {@link src}: typed-array reads cost less than `charCodeAt` on a string of any representation. */
  private load(text: string): void {
    if (text.length > this.src.length) this.roomForDoc(text.length);
    this.srcBytes.write(text, 0, 'utf16le');
    this.doc = text;
    this.docLen = text.length;
    this.fromCodes = false;
    this.docState = 0;
  }

  /** Room in {@link src} for a document of `n` code units (doubling). */
  private roomForDoc(n: number): void {
    if (this.kernel) return this.room(Math.max(n, 2 * this.src.length));
    const ab = new ArrayBuffer(2 * Math.max(n, 2 * this.src.length));
    this.src = new Uint16Array(ab);
    this.srcBytes = Buffer.from(ab);
  }

  /** Normalizes the first `n` code units of {@link src} (the whole document) into {@link docNorm}, as {@link hash} does a unit. */
  private normalizeDoc(n: number): void {
    if (this.kernel) return this.normalizeDocInKernel(n);
    if (n > this.docNorm.length) {
      this.docNorm = new Uint16Array(Math.max(n, 2 * this.docNorm.length));
      this.docPos = new Int32Array(this.docNorm.length);
    }
    const src = this.src;
    const table = this.table;
    const out = this.docNorm;
    const pos = this.docPos;
    let len = 0;
    for (let i = 0; i < n; i++) {
      const c = src[i]!;
      let m = table[c]!;
      if (m === UNKNOWN) m = table[c] = entry(c, this.lower);
      if (m >= 0) {
        pos[i] = len;
        out[len++] = m;
        continue;
      }
      if (m === FALLBACK) {
        this.docState = 2;
        return;
      }
      while (i + 1 < n && table[src[i + 1]!] === SPACE) i++;
      if (len > 0 && i + 1 < n) out[len++] = 0x20;
    }
    this.docState = 1;
  }

  /**
   * The hash of unit `[a, b)` from {@link docNorm}: its first to its last non-blank code unit there
   * (the blanks between them are one space in both). Why these parameters: as {@link hash}.
   */
  private fromDoc(a: number, b: number, out: Uint32Array): number {
    const src = this.src;
    const table = this.table;
    while (a < b && table[src[a]!] === SPACE) a++;
    while (b > a && table[src[b - 1]!] === SPACE) b--;
    const at = a < b ? this.docPos[a]! : 0;
    const len = a < b ? this.docPos[b - 1]! + 1 - at : 0;
    this.last = this.docNorm;
    this.lastAt = at;
    const k = this.kernel;
    if (!k) return this.h64.codes(this.docNorm.subarray(at), len, out);
    k.fn.hashUnits(k.norm + 2 * at, len, K_OUT);
    out[0] = k.lanes[0]!;
    out[1] = k.lanes[1]!;
    return len;
  }

  /** {@link normalizeDoc} in the kernel (its unknown entries filled as {@link inKernel} fills them). */
  private normalizeDocInKernel(n: number): void {
    const k = this.kernel!;
    for (;;) {
      const r = k.fn.normalizeDoc(K_SRC, n, K_TABLE, k.norm, k.pos, this.lower ? 1 : 0);
      if (r >= 0) return void (this.docState = 1);
      const c = this.src[-r - 1]!;
      if (this.table[c] !== UNKNOWN) return void (this.docState = 2);
      this.table[c] = entry(c, this.lower);
    }
  }

  /** Room for `n` code units. */
  private grow(n: number): void {
    this.buf = new Uint16Array(Math.max(2 * n, 2 * this.buf.length));
  }

  /** The string path: normalize the slice, then hash it. Why these parameters: as {@link hash}. */
  private slow(text: string | undefined, a: number, b: number, out: Uint32Array): number {
    const t = this.norm(text === undefined ? this.codeString(a, b) : text.slice(a, b));
    this.h64.text(t, out);
    this.slowText = t;
    return t.length;
  }

  /**
   * Copies the normalized code units of the unit last hashed (its length was {@link hash}'s answer)
   * into `into` from `at`, grown as needed; returns the buffer written. Exactness (#50) compares these, not hashes.
   */
  copyLast(into: Uint16Array, at: number, len: number): Uint16Array {
    const out = into.length < at + len ? grown(into, at + len) : into;
    const t = this.slowText;
    if (t === undefined) out.set(this.last.subarray(this.lastAt, this.lastAt + len), at);
    else for (let i = 0; i < len; i++) out[at + i] = t.charCodeAt(i);
    return out;
  }
}

/** A copy of `a` with room for at least `n` code units (doubling). */
export function grown(a: Uint16Array, n: number): Uint16Array {
  const b = new Uint16Array(Math.max(n, 2 * a.length, 64));
  b.set(a);
  return b;
}
