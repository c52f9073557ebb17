/**
 * UTF-16 indices (how JavaScript strings count) turned into code-point and UTF-8 byte offsets, the
 * two offsets every output of `neardup spans` gives, by a cursor that walks the text forward.
 * @module
 */

/**
 * The same walk over the text's code units elsewhere (the hasher's kernel: UnitHasher.walkOffsets),
 * from UTF-16 index `from` to `to`: returns the index reached, and what it passed in code points
 * and UTF-8 bytes. Why: the walk in JavaScript was a tenth of `neardup spans`' time for line units.
 */
export interface OffsetWalk {
  walkOffsets(from: number, to: number): number;
  readonly walkedCp: number;
  readonly walkedBytes: number;
}

/**
 * A forward cursor over one text: {@link at} a UTF-16 index sets {@link cp} and {@link byte} to
 * that index's code-point and UTF-8 byte offsets. Indices asked in increasing order cost one walk
 * of the text in all; a smaller index starts again from 0. A lone surrogate counts as one code
 * point of three bytes (UTF-8 writes it as U+FFFD).
 */
export class OffsetCursor {
  private text = '';
  private pos = 0;
  private walk: OffsetWalk | undefined;
  /** Code points before the index last asked. */
  cp = 0;
  /** UTF-8 bytes before the index last asked. */
  byte = 0;

  /** Starts over on `text`; with `walk`, walked there (which must hold `text` whenever {@link at} is called). */
  reset(text: string, walk?: OffsetWalk): this {
    this.text = text;
    this.walk = walk;
    this.pos = 0;
    this.cp = 0;
    this.byte = 0;
    return this;
  }

  /** Moves to UTF-16 index `to` (never inside a surrogate pair: units start and end at code points). */
  at(to: number): this {
    if (to < this.pos) {
      this.pos = 0;
      this.cp = 0;
      this.byte = 0;
    }
    const w = this.walk;
    if (w) {
      if (to > this.pos) {
        this.pos = w.walkOffsets(this.pos, to);
        this.cp += w.walkedCp;
        this.byte += w.walkedBytes;
      }
      return this;
    }
    const t = this.text;
    let p = this.pos;
    let cp = this.cp;
    let byte = this.byte;
    while (p < to) {
      const c = t.charCodeAt(p);
      if (c < 0x80) byte += 1;
      else if (c < 0x800) byte += 2;
      else if (c >= 0xd800 && c <= 0xdbff && p + 1 < t.length && (t.charCodeAt(p + 1) & 0xfc00) === 0xdc00) {
        byte += 4;
        p++;
      } else byte += 3;
      cp++;
      p++;
    }
    this.pos = p;
    this.cp = cp;
    this.byte = byte;
    return this;
  }
}

/**
 * An occurrence as ./verify.ts takes it (document, UTF-16 start, and its offsets), whose code-point
 * and byte offsets are found when read (only for a text that shares a hash with another, in
 * practice never), by the document's forward cursor.
 */
export class LazyOccurrence {
  doc = 0;
  pos = 0;
  constructor(private readonly cursor: OffsetCursor) {}
  get cp(): number {
    return this.cursor.at(this.pos).cp;
  }
  get byte(): number {
    return this.cursor.at(this.pos).byte;
  }
}

/** Units between two of {@link FirstOffsets}' absolute entries. */
const EVERY = 64;
/** A delta byte that says: this unit's offsets are absolute, in the escapes. */
const ESC = 255;

/**
 * The first occurrences' code-point and UTF-8 byte starts of units 0 … n − 1 (the check's repeated
 * units, ./verify.ts), set in order of their units as the check meets them (input order) and read
 * for the audit's rows. The windows of a repeated passage are numbered one after another and start
 * a character apart, so each unit keeps its two starts as one byte each, the difference from the
 * unit before; every 64th unit, and a unit whose differences do not fit (another document, another
 * passage) or set out of order, keeps them whole: about 2.2 bytes a unit, where two i32 took 8 (50.9 MB
 * of 100-byte windows: 2.16M units, 17.3 MB). A read sums at most 63 differences.
 */
export class FirstOffsets {
  private readonly dCp: Uint8Array;
  private readonly dByte: Uint8Array;
  /** Unit 64j's starts: `every[2j]`, `every[2j + 1]`. */
  private readonly every: Int32Array;
  /** Units kept whole but the 64th: (unit, cp, byte), in the order set. */
  private esc = new Int32Array(3 * 64);
  private escN = 0;
  /** Whether the escapes are in unit order (set in order: always, but for a caller out of order). */
  private escSorted = true;
  private last = -1;
  private lastCp = 0;
  private lastByte = 0;

  constructor(n: number) {
    this.dCp = new Uint8Array(n);
    this.dByte = new Uint8Array(n);
    this.every = new Int32Array(2 * Math.ceil(n / EVERY));
  }

  /** Sets unit `r`'s starts (once per unit). */
  set(r: number, cp: number, byte: number): void {
    const dc = cp - this.lastCp;
    const db = byte - this.lastByte;
    if (r % EVERY === 0) {
      this.every[2 * (r / EVERY)] = cp;
      this.every[2 * (r / EVERY) + 1] = byte;
    } else if (r === this.last + 1 && dc >= 0 && dc < ESC && db >= 0 && db < ESC) {
      this.dCp[r] = dc;
      this.dByte[r] = db;
    } else {
      this.dCp[r] = ESC;
      if (3 * (this.escN + 1) > this.esc.length) {
        const e = new Int32Array(2 * this.esc.length);
        e.set(this.esc);
        this.esc = e;
      }
      if (this.escN > 0 && this.esc[3 * (this.escN - 1)]! > r) this.escSorted = false;
      this.esc.set([r, cp, byte], 3 * this.escN++);
    }
    this.last = r;
    this.lastCp = cp;
    this.lastByte = byte;
  }

  /** Unit `r`'s code-point start. */
  cp(r: number): number {
    return this.read(r, 0);
  }

  /** Unit `r`'s UTF-8 byte start. */
  byte(r: number): number {
    return this.read(r, 1);
  }

  private read(r: number, f: 0 | 1): number {
    const d = f === 0 ? this.dCp : this.dByte;
    let sum = 0;
    for (let x = r;; x--) {
      if (x % EVERY === 0) return sum + this.every[2 * (x / EVERY) + f]!;
      if (this.dCp[x] === ESC) return sum + this.escaped(x, f);
      sum += d[x]!;
    }
  }

  /** The starts of unit `x`, kept whole. */
  private escaped(x: number, f: 0 | 1): number {
    const e = this.esc;
    if (!this.escSorted) {
      for (let j = 0; j < this.escN; j++) if (e[3 * j] === x) return e[3 * j + 1 + f]!;
      throw new Error(`first offsets: unit ${x} was not set`);
    }
    let lo = 0;
    let hi = this.escN - 1;
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      if (e[3 * m]! < x) lo = m + 1;
      else hi = m;
    }
    if (e[3 * lo] !== x) throw new Error(`first offsets: unit ${x} was not set`);
    return e[3 * lo + 1 + f]!;
  }
}
