/**
 * How each character of a document becomes normalized code points for byte windows
 * (src/spans/byteWindows.ts): each character normalized alone, runs of gap characters (whitespace, and
 * with `stripPunctuation` punctuation and symbols) one space unless the preset is `none`.
 * @module
 */
import { makeNormalizer, resolvePreset, type NormalizeOptions } from './normalize.js';

/** How each character of a document becomes normalized code points (see the module comment of src/spans/byteWindows.ts). */
export class CharNormalizer {
  private readonly norm: (t: string) => string;
  /** Runs of gap characters become one space. */
  readonly collapse: boolean;
  private readonly stripPunctuation: boolean;
  private readonly cache = new Map<number, string>();
  /** Per BMP character: {@link single}'s answer + 3, 0 until asked. */
  private readonly table = new Int32Array(0x10000);

  constructor(o: NormalizeOptions) {
    this.norm = makeNormalizer(o);
    this.collapse = resolvePreset(o.preset) !== 'none';
    this.stripPunctuation = o.stripPunctuation === true;
  }

  /** What character `cp` becomes: a string, or undefined for a gap (whitespace, or stripped punctuation). */
  of(cp: number): string | undefined {
    const hit = this.cache.get(cp);
    if (hit !== undefined) return hit === '\u0000gap' ? undefined : hit;
    const c = String.fromCodePoint(cp);
    const gap = /\s/u.test(c) || (this.stripPunctuation && /[\p{P}\p{S}]/u.test(c));
    const s = gap ? '\u0000gap' : this.norm(c);
    this.cache.set(cp, s);
    return gap ? undefined : s;
  }

  /**
   * What BMP character `unit` becomes, when that is one BMP code point (not a surrogate): that code
   * point; −1 for a gap; −2 otherwise ({@link of} tells). Kept per character in a table.
   */
  single(unit: number): number {
    const hit = this.table[unit]!;
    if (hit !== 0) return hit - 3;
    const s = this.of(unit);
    const c = s === undefined ? -1 : s.length === 1 && !(s.charCodeAt(0) >= 0xd800 && s.charCodeAt(0) <= 0xdfff) ? s.charCodeAt(0) : -2;
    this.table[unit] = c + 3;
    return c;
  }

  /** The code point a gap character counts as, without collapsing: itself if whitespace, else a space. */
  gapAlone(cp: number): number {
    return /\s/u.test(String.fromCodePoint(cp)) ? cp : 0x20;
  }
}
