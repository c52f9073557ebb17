/**
 * The sketch layer's binary formats (spec: docs/formats.md): the byte reader and writer, unsigned
 * LEB128 varints, delta-coded fingerprint sets and signature blobs. Everything is little-endian;
 * nothing depends on the host. The online index's document records (src/online/records/record.ts) and index
 * snapshots (src/online/records/snapshotFormat.ts) are built from these pieces; `format` in the public API
 * (src/format.ts) gathers all of them.
 * @module
 */

/** Version byte of signature blobs, document records and index snapshots written by this code. */
export const FORMAT_VERSION = 1;

/**
 * Version of the signature definition (docs/formats.md, "Signatures, exactly": normalization,
 * shingles, hashes, seeds, OPH fill rounds, slot width) that this code computes. Any change to what
 * a text signs to is a new version: an index records the version its signatures follow (absent: 1)
 * and an index of another version is refused when opened, since its keys and signatures would no
 * longer match new ones. The known-answer vectors (test/fixtures/signature-kat.json) pin version 1.
 */
export const SIGNATURE_SPEC = 1;

/** Thrown when bytes do not follow the format; the message names what and where (byte offset). */
export class FormatError extends Error {
  override name = 'FormatError';
}

/** A growable byte buffer for writers. */
export class ByteWriter {
  /** The bytes written so far live in buf[0, length). */
  buf: Uint8Array;
  /** Bytes written. */
  length = 0;
  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }
  /** Makes room for `n` more bytes. */
  reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.length + n) cap *= 2;
    const b = new Uint8Array(cap);
    b.set(this.buf.subarray(0, this.length));
    this.buf = b;
  }
  /** Appends one byte. */
  u8(v: number): void {
    this.reserve(1);
    this.buf[this.length++] = v;
  }
  /** Appends a uint16 LE. */
  u16(v: number): void {
    this.reserve(2);
    this.buf[this.length++] = v & 0xff;
    this.buf[this.length++] = (v >>> 8) & 0xff;
  }
  /** Appends a uint32 LE. */
  u32(v: number): void {
    this.reserve(4);
    const b = this.buf;
    let o = this.length;
    b[o++] = v & 0xff;
    b[o++] = (v >>> 8) & 0xff;
    b[o++] = (v >>> 16) & 0xff;
    b[o++] = (v >>> 24) & 0xff;
    this.length = o;
  }
  /** Appends an unsigned LEB128 varint of a uint32 (1 to 5 bytes). */
  varint(v: number): void {
    this.reserve(5);
    const b = this.buf;
    let o = this.length;
    v >>>= 0;
    while (v >= 0x80) {
      b[o++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[o++] = v;
    this.length = o;
  }
  /** Appends raw bytes. */
  bytes(src: Uint8Array): void {
    this.reserve(src.length);
    this.buf.set(src, this.length);
    this.length += src.length;
  }
  /** A copy of the bytes written. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

/** A cursor over bytes for readers; every read checks bounds and throws a {@link FormatError}. */
export class ByteReader {
  /** Next byte to read. */
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
    readonly what = 'data',
  ) {
    this.pos = start;
  }
  private need(n: number): void {
    if (this.pos + n > this.end) throw new FormatError(`${this.what}: truncated at byte ${this.pos} (needs ${n} more)`);
  }
  /** Reads one byte. */
  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }
  /** Reads a uint16 LE. */
  u16(): number {
    this.need(2);
    const b = this.buf;
    const v = b[this.pos]! | (b[this.pos + 1]! << 8);
    this.pos += 2;
    return v;
  }
  /** Reads a uint32 LE. */
  u32(): number {
    this.need(4);
    const b = this.buf;
    const p = this.pos;
    this.pos += 4;
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  }
  /** Reads an unsigned LEB128 varint of at most 5 bytes whose value fits in 32 bits. */
  varint(): number {
    const b = this.buf;
    let v = 0;
    let shift = 0;
    const start = this.pos;
    for (;;) {
      if (this.pos >= this.end) throw new FormatError(`${this.what}: truncated varint at byte ${start}`);
      const x = b[this.pos++]!;
      if (shift === 28 && x > 0x0f) throw new FormatError(`${this.what}: varint at byte ${start} exceeds 32 bits`);
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return v;
      shift += 7;
    }
  }
  /** Reads `n` raw bytes (a view, no copy). */
  bytes(n: number): Uint8Array {
    this.need(n);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
}

/** Appends a fingerprint set: varint count, the first value, then the gaps between consecutive values. */
export function writeFingerprintSet(w: ByteWriter, set: Uint32Array): void {
  w.reserve(5 + set.length * 5);
  w.length = putFingerprintSet(w.buf, w.length, set);
}

/**
 * Writes a fingerprint set (as {@link writeFingerprintSet}) into `b` at `o` (room for
 * 5 + 5·set.length bytes) and returns the end offset. Varints unrolled by size: most gaps of a
 * few-hundred-element set take 4 bytes, and a Uint8Array store keeps the low 8 bits by itself.
 */
export function putFingerprintSet(b: Uint8Array, o: number, set: Uint32Array): number {
  const n = set.length;
  o = putVarint(b, o, n);
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const x = set[i]!;
    const v = (x - prev) >>> 0;
    prev = x;
    if (v < 0x80) b[o++] = v;
    else if (v < 0x4000) {
      b[o] = v | 0x80;
      b[o + 1] = v >>> 7;
      o += 2;
    } else if (v < 0x200000) {
      b[o] = v | 0x80;
      b[o + 1] = (v >>> 7) | 0x80;
      b[o + 2] = v >>> 14;
      o += 3;
    } else if (v < 0x10000000) {
      b[o] = v | 0x80;
      b[o + 1] = (v >>> 7) | 0x80;
      b[o + 2] = (v >>> 14) | 0x80;
      b[o + 3] = v >>> 21;
      o += 4;
    } else {
      b[o] = v | 0x80;
      b[o + 1] = (v >>> 7) | 0x80;
      b[o + 2] = (v >>> 14) | 0x80;
      b[o + 3] = (v >>> 21) | 0x80;
      b[o + 4] = v >>> 28;
      o += 5;
    }
  }
  return o;
}

/** Writes an unsigned LEB128 varint of a uint32 into `b` at `o`; returns the end offset. */
export function putVarint(b: Uint8Array, o: number, v: number): number {
  v >>>= 0;
  while (v >= 0x80) {
    b[o++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  b[o++] = v;
  return o;
}

/** Encodes a sorted unique fingerprint set (delta + varint). Throws a RangeError if it is not sorted unique. */
export function encodeFingerprintSet(set: Uint32Array): Uint8Array {
  for (let i = 1; i < set.length; i++) {
    if (set[i]! <= set[i - 1]!) throw new RangeError(`fingerprint set must be sorted and unique (index ${i})`);
  }
  const w = new ByteWriter(set.length * 4 + 5);
  writeFingerprintSet(w, set);
  return w.finish();
}

/**
 * Reads a fingerprint set into `out` (grown when too small) and returns it trimmed to the set.
 * The returned array may be `out` itself (a subarray): copy it to keep it past the next call.
 */
export function readFingerprintSet(r: ByteReader, out?: Uint32Array): Uint32Array {
  const n = r.varint();
  if (n > r.end - r.pos) throw new FormatError(`${r.what}: fingerprint count ${n} exceeds the remaining ${r.end - r.pos} bytes`);
  const dst = out && out.length >= n ? out : new Uint32Array(Math.max(n, out ? out.length * 2 : 0));
  const b = r.buf;
  let p = r.pos;
  const end = r.end;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    // Unrolled LEB128 in int32 arithmetic; the 5th byte (bits 28-31) is added as a double.
    if (p + 5 > end) return slowFingerprintTail(r, dst, i, p, prev, n);
    let x = b[p++]!;
    let v = x & 0x7f;
    if (x >= 0x80) {
      x = b[p++]!;
      v |= (x & 0x7f) << 7;
      if (x >= 0x80) {
        x = b[p++]!;
        v |= (x & 0x7f) << 14;
        if (x >= 0x80) {
          x = b[p++]!;
          v |= (x & 0x7f) << 21;
          if (x >= 0x80) {
            x = b[p++]!;
            if (x > 0x0f) throw new FormatError(`${r.what}: fingerprint varint at byte ${p - 5} exceeds 32 bits`);
            v = v + x * 268435456;
          }
        }
      }
    }
    const cur = prev + v;
    if (cur > 0xffffffff || (i > 0 && v === 0)) throw new FormatError(`${r.what}: fingerprint set not strictly increasing at element ${i}`);
    dst[i] = cur;
    prev = cur;
  }
  r.pos = p;
  return dst.subarray(0, n);
}

/**
 * The last few elements, near the end of the buffer, with a bounds check per byte.
 * Why these parameters: the tail of decoding one fingerprint set, called once per set read; it takes over the caller's running state (position, previous value).
 */
function slowFingerprintTail(r: ByteReader, dst: Uint32Array, from: number, p: number, prev: number, n: number): Uint32Array {
  r.pos = p;
  for (let i = from; i < n; i++) {
    const v = r.varint();
    const cur = prev + v;
    if (cur > 0xffffffff || (i > 0 && v === 0)) throw new FormatError(`${r.what}: fingerprint set not strictly increasing at element ${i}`);
    dst[i] = cur;
    prev = cur;
  }
  return dst.subarray(0, n);
}

/** Decodes a fingerprint set encoded by {@link encodeFingerprintSet}. */
export function decodeFingerprintSet(bytes: Uint8Array): Uint32Array {
  const r = new ByteReader(bytes, 0, bytes.length, 'fingerprint set');
  const s = readFingerprintSet(r).slice();
  if (r.pos !== bytes.length) throw new FormatError(`fingerprint set: ${bytes.length - r.pos} trailing bytes`);
  return s;
}

/** A signature with the MinHash parameters needed to compare it. */
export interface SignatureBlob {
  /** MinHash method. */
  method: 'classic' | 'oph';
  /** MinHash seed. */
  seed: number;
  /** The slots. */
  signature: Uint32Array;
}

const SIG_MAGIC = [0x4e, 0x44, 0x53, 0x47]; // "NDSG"
const METHOD_CODE = { classic: 0, oph: 1 } as const;

/** Encodes a signature blob: "NDSG", version, method, 2 reserved bytes, seed, numPerm, the slots (all LE). */
export function encodeSignature(blob: SignatureBlob): Uint8Array {
  const w = new ByteWriter(16 + blob.signature.length * 4);
  for (const c of SIG_MAGIC) w.u8(c);
  w.u8(FORMAT_VERSION);
  w.u8(METHOD_CODE[blob.method]);
  w.u16(0);
  w.u32(blob.seed >>> 0);
  w.u32(blob.signature.length);
  for (const v of blob.signature) w.u32(v);
  return w.finish();
}

/** Decodes a signature blob. Throws a {@link FormatError} naming the problem. */
export function decodeSignature(bytes: Uint8Array): SignatureBlob {
  const r = new ByteReader(bytes, 0, bytes.length, 'signature');
  for (let i = 0; i < 4; i++) if (r.u8() !== SIG_MAGIC[i]) throw new FormatError('signature: bad magic (expected "NDSG")');
  const version = r.u8();
  if (version !== FORMAT_VERSION) throw new FormatError(`signature: unsupported version ${version} (this reader knows ${FORMAT_VERSION})`);
  const m = r.u8();
  if (m > 1) throw new FormatError(`signature: unknown method code ${m} at byte 5`);
  r.u16();
  const seed = r.u32();
  const n = r.u32();
  if (n * 4 !== r.end - r.pos) throw new FormatError(`signature: numPerm ${n} does not match the ${r.end - r.pos} remaining bytes`);
  const signature = new Uint32Array(n);
  for (let i = 0; i < n; i++) signature[i] = r.u32();
  return { method: m === 0 ? 'classic' : 'oph', seed, signature };
}
