/**
 * The memory store's id index: document id → slot, in typed arrays instead of a Map of strings.
 * Ids are kept as UTF-8 bytes in one arena (`off`/`len` per slot, `len` -1 for a free slot) with
 * each one's 32-bit hash, and an open-addressing table of slots keyed by that hash. Why: a Map of
 * 10^7 strings takes seconds to build and cannot be saved, so a file store's open spent most of its
 * time rebuilding it from a JSON list of ids; these arrays are read back from a checkpoint as they
 * are (src/store/file/checkpoint.ts), with no per-id work.
 * @module
 */

const EMPTY = -1;
const FREE = -1;
const encoder = new TextEncoder();
/** First byte of an id kept as UTF-16 (never the first byte of UTF-8). */
const UTF16 = 0xff;
/** Any UTF-16 surrogate code unit (no `u` flag: code units, not code points). */
const SURROGATE = /[\ud800-\udfff]/;

/** FNV-1a, then murmur3's finalizer (FNV's low bits are weak for linear probing). */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The hash an id is kept under, of its bytes `from`..`to` of `b` (the file store's checkpoint finds ids of its log by it). */
export function hashBytes(b: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 16777619);
  return finish(h);
}

/** The arrays of an id index, as saved and restored. */
export interface IdTableImage {
  /** Id bytes of the live ids, back to back in slot order (`off` follows from `len`). */
  bytes: Uint8Array;
  /** Per slot: byte length of its id, -1 for a free slot. */
  len: Int32Array;
  /** Per slot: the id's hash. */
  hash: Uint32Array;
  /** The open-addressing table of slots (a power-of-two length; -1 empty). */
  tab: Int32Array;
  /** Live ids. */
  count: number;
}

/** Document id → slot. Slots are handed out by the caller; this keeps which id is in which. */
export class IdTable {
  private bytes: Buffer = Buffer.alloc(1 << 16);
  private used = 0;
  private live = 0;
  private off: Float64Array = new Float64Array(1024);
  private len: Int32Array = new Int32Array(1024).fill(FREE);
  private hash: Uint32Array = new Uint32Array(1024);
  private tab: Int32Array = new Int32Array(1024).fill(EMPTY);
  private mask = 1023;
  private n = 0;
  /** The id being looked up, as UTF-8 (reused: one encoding per call). */
  private scratch = new Uint8Array(256);
  private scratchLen = 0;

  /** Live ids. */
  get size(): number {
    return this.n;
  }

  /** Encodes `id` into the scratch buffer; returns its hash. */
  private load(id: string): number {
    let ascii = id.length <= this.scratch.length;
    if (ascii) {
      for (let i = 0; i < id.length; i++) {
        const c = id.charCodeAt(i);
        if (c >= 0x80) {
          ascii = false;
          break;
        }
        this.scratch[i] = c;
      }
    }
    if (ascii) this.scratchLen = id.length;
    else if (SURROGATE.test(id)) this.scratchLen = this.loadUtf16(id);
    else {
      if (id.length * 3 > this.scratch.length) this.scratch = new Uint8Array(id.length * 3);
      this.scratchLen = encoder.encodeInto(id, this.scratch).written;
    }
    return hashBytes(this.scratch, 0, this.scratchLen);
  }

  /**
   * An id with a surrogate, as a marker byte then its UTF-16 code units: UTF-8 would turn two
   * different lone surrogates into the same bytes (U+FFFD), and the id read back must be the id given.
   */
  private loadUtf16(id: string): number {
    if (id.length * 2 + 1 > this.scratch.length) this.scratch = new Uint8Array(id.length * 2 + 1);
    this.scratch[0] = UTF16;
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      this.scratch[1 + 2 * i] = c & 0xff;
      this.scratch[2 + 2 * i] = c >>> 8;
    }
    return id.length * 2 + 1;
  }

  /** Whether slot `s` holds the id in the scratch buffer, of hash `h`. */
  private holds(s: number, h: number): boolean {
    if (this.hash[s] !== h || this.len[s] !== this.scratchLen) return false;
    const o = this.off[s]!;
    for (let i = 0; i < this.scratchLen; i++) if (this.bytes[o + i] !== this.scratch[i]) return false;
    return true;
  }

  /** The position in the table of the id in the scratch buffer, or of the empty entry that ends its probe. */
  private probe(h: number): number {
    for (let i = h & this.mask;; i = (i + 1) & this.mask) {
      const s = this.tab[i]!;
      if (s === EMPTY || this.holds(s, h)) return i;
    }
  }

  /** The slot of `id`, or -1. */
  slotOf(id: string): number {
    return this.tab[this.probe(this.load(id))]!;
  }

  /** The id in slot `s`, or undefined for a free slot. */
  idOf(s: number): string | undefined {
    const l = this.len[s];
    if (l === undefined || l === FREE) return undefined;
    const o = this.off[s]!;
    if (l > 0 && this.bytes[o] === UTF16) return this.bytes.toString('utf16le', o + 1, o + l);
    return this.bytes.toString('utf8', o, o + l);
  }

  /** Whether slot `s` holds an id. */
  has(s: number): boolean {
    return s < this.len.length && this.len[s] !== FREE;
  }

  /** Puts `id` (not present) into slot `s` (free). */
  add(id: string, s: number): void {
    const h = this.load(id);
    if ((this.n + 1) * 10 > (this.mask + 1) * 7) this.growTab();
    if (s >= this.len.length) this.growSlots(Math.max(s + 1, this.len.length * 2));
    if (this.used + this.scratchLen > this.bytes.length) this.growBytes(this.scratchLen);
    this.bytes.set(this.scratch.subarray(0, this.scratchLen), this.used);
    this.off[s] = this.used;
    this.len[s] = this.scratchLen;
    this.hash[s] = h;
    this.used += this.scratchLen;
    this.live += this.scratchLen;
    this.tab[this.probe(h)] = s;
    this.n++;
  }

  /** Frees slot `s` (holding an id). */
  remove(s: number): void {
    const h = this.hash[s]!;
    let i = h & this.mask;
    while (this.tab[i] !== s) i = (i + 1) & this.mask;
    this.deleteAt(i);
    this.live -= this.len[s]!;
    this.len[s] = FREE;
    this.n--;
  }

  /** Backward-shift deletion keeps linear probing correct without tombstones. */
  private deleteAt(i: number): void {
    const { tab, mask } = this;
    for (;;) {
      let j = i;
      for (;;) {
        j = (j + 1) & mask;
        if (tab[j] === EMPTY) {
          tab[i] = EMPTY;
          return;
        }
        const k = this.hash[tab[j]!]! & mask;
        // Entry j may move to i only if its home is not cyclically within (i, j].
        const within = i <= j ? i < k && k <= j : i < k || k <= j;
        if (!within) break;
      }
      tab[i] = tab[j]!;
      i = j;
    }
  }

  private growTab(): void {
    const cap = (this.mask + 1) * 2;
    const old = this.tab;
    this.tab = new Int32Array(cap).fill(EMPTY);
    this.mask = cap - 1;
    for (let i = 0; i < old.length; i++) {
      const s = old[i]!;
      if (s === EMPTY) continue;
      let d = this.hash[s]! & this.mask;
      while (this.tab[d] !== EMPTY) d = (d + 1) & this.mask;
      this.tab[d] = s;
    }
  }

  private growSlots(cap: number): void {
    const off = new Float64Array(cap);
    off.set(this.off);
    const len = new Int32Array(cap).fill(FREE);
    len.set(this.len);
    const hash = new Uint32Array(cap);
    hash.set(this.hash);
    [this.off, this.len, this.hash] = [off, len, hash];
  }

  /** Room for `more` bytes: the live ids packed first when most of the arena is dead. */
  private growBytes(more: number): void {
    const packing = this.live * 2 < this.used;
    let cap = Math.max(1 << 16, packing ? this.live * 2 : this.bytes.length * 2);
    while (cap < (packing ? this.live : this.used) + more) cap *= 2;
    const b = Buffer.alloc(cap);
    if (!packing) b.set(this.bytes.subarray(0, this.used));
    else this.used = this.packInto(b);
    this.bytes = b;
  }

  /** Copies the live ids into `b` in slot order, moving `off` to them; returns the bytes copied. */
  private packInto(b: Uint8Array): number {
    let o = 0;
    for (let s = 0; s < this.len.length; s++) {
      const l = this.len[s]!;
      if (l === FREE) continue;
      b.set(this.bytes.subarray(this.off[s]!, this.off[s]! + l), o);
      this.off[s] = o;
      o += l;
    }
    return o;
  }

  /** The index's arrays for slots below `slots`, the id bytes packed (a copy; the rest are views). */
  image(slots: number): IdTableImage {
    const b = Buffer.allocUnsafe(this.live);
    const o = this.packInto(b);
    // `off` now points into b: b becomes the arena (packed as a side effect).
    this.bytes = Buffer.concat([b.subarray(0, o)], Math.max(1 << 16, o * 2));
    this.used = o;
    return { bytes: b.subarray(0, o), len: this.len.subarray(0, slots), hash: this.hash.subarray(0, slots), tab: this.tab, count: this.n };
  }

  /** An index holding `img`'s ids; its arrays are taken, not copied (their length is the slot capacity: slots past the last hold -1 in `len`). */
  static fromImage(img: IdTableImage): IdTable {
    const t = new IdTable();
    t.len = img.len;
    t.hash = img.hash;
    t.off = new Float64Array(img.len.length);
    // Offsets from the lengths: the bytes were written in slot order.
    let o = 0;
    for (let s = 0; s < img.len.length; s++) {
      const l = img.len[s]!;
      if (l === FREE) continue;
      t.off[s] = o;
      o += l;
    }
    if (o !== img.bytes.length) throw new Error(`id index: lengths add up to ${o} bytes, ${img.bytes.length} given`);
    t.bytes = Buffer.from(img.bytes.buffer, img.bytes.byteOffset, img.bytes.byteLength);
    t.used = t.live = o;
    t.tab = img.tab;
    t.mask = img.tab.length - 1;
    t.n = img.count;
    return t;
  }
}
