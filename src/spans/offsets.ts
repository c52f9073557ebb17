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
