/**
 * UTF-16 indices (how JavaScript strings count) turned into code-point and UTF-8 byte offsets, the
 * two offsets every output of `neardup spans` gives, by a cursor that walks the text forward.
 * @module
 */

/**
 * A forward cursor over one text: {@link at} a UTF-16 index sets {@link cp} and {@link byte} to
 * that index's code-point and UTF-8 byte offsets. Indices asked in increasing order cost one walk
 * of the text in all; a smaller index starts again from 0. A lone surrogate counts as one code
 * point of three bytes (UTF-8 writes it as U+FFFD).
 */
export class OffsetCursor {
  private text = '';
  private pos = 0;
  /** Code points before the index last asked. */
  cp = 0;
  /** UTF-8 bytes before the index last asked. */
  byte = 0;

  /** Starts over on `text`. */
  reset(text: string): this {
    this.text = text;
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
