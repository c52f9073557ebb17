/**
 * The online index's document record (spec: docs/formats.md, "Document records"): what a store
 * keeps under each document id. Version byte, flags, then the fingerprint set (verify `exact`), the
 * signature (verify `estimate`), the metadata as UTF-8 JSON and the expiry (8 bytes, last). Readers for the hot path skip what
 * they do not need (metadata when verifying, the set when reading metadata). A REC_TEXT record
 * keeps no set: its set is the index's shingling of its metadata's `text`, which the reader
 * recomputes with the {@link SetOfText} it is given.
 * @module
 */
import { ByteReader, FORMAT_VERSION, FormatError, putFingerprintSet, putVarint, readFingerprintSet } from '../../sketch/format.js';

/** Record flag: the record holds the fingerprint set. */
export const REC_SET = 1;
/** Record flag: the record holds the signature. */
export const REC_SIG = 2;
/** Record flag: the record holds metadata (UTF-8 JSON). */
export const REC_META = 4;
/** Record flag: the record ends with its expiry (float64 LE, ms since the epoch). */
export const REC_EXPIRES = 8;
/** Record flag: the record holds the signature as 16-bit slots (an index with `signatureBits: 16`); never with REC_SIG. */
export const REC_SIG16 = 16;
/**
 * Record flag: the fingerprint set is not kept; it is the index's shingling of the metadata's `text`
 * (an index with `setSource: 'text'`). Always with REC_META, never with REC_SET.
 */
export const REC_TEXT = 32;
const KNOWN_FLAGS = 63;

/** The index's shingling (its manifest's): text → sorted unique fingerprint set, a fresh array. */
export type SetOfText = (text: string) => Uint32Array;

/** One indexed document as stored: what a store persists under the document's id. */
export interface IndexRecord {
  /** Sorted unique fingerprints (exact verification), when kept. */
  set?: Uint32Array;
  /** The MinHash signature (estimate verification), when kept. */
  signature?: Uint32Array;
  /** 16 when the signature is kept as 16-bit slots (REC_SIG16; every slot below 65536); absent for 32. */
  signatureBits?: 16;
  /** Caller metadata, any JSON value. */
  meta?: unknown;
  /** When the document expires, in ms since the epoch (absent: never). */
  expiresAt?: number;
  /**
   * True: the set is not written (REC_TEXT); `meta.text` must be the document's text, from which
   * readers recompute it. Decoding sets it for such records (and `set` too when given a shingler).
   */
  setFromText?: boolean;
}

const utf8 = new TextEncoder();
const utf8d = new TextDecoder('utf-8', { fatal: true });

/**
 * Encodes a document record: version, flags, then in order the fingerprint set (REC_SET),
 * the signature as varint numPerm + uint32 LE slots (REC_SIG), the metadata as varint byte length + UTF-8 JSON (REC_META).
 */
export function encodeRecord(rec: IndexRecord): Uint8Array {
  // Metadata first: JSON.stringify may run caller code (toJSON), which must not see the scratch in use.
  const metaJson = rec.meta === undefined ? undefined : JSON.stringify(rec.meta);
  // Its UTF-8 length, then written straight into the scratch below (no array of its own, no copy).
  // JSON.stringify escapes lone surrogates, so the length is exact.
  const metaLen = metaJson === undefined ? 0 : Buffer.byteLength(metaJson, 'utf8');
  const { signature, expiresAt } = rec;
  const fromText = rec.setFromText === true;
  if (fromText && typeof (rec.meta as { text?: unknown } | undefined)?.text !== 'string')
    throw new TypeError('a record whose set comes from its text needs metadata with a text');
  const set = fromText ? undefined : rec.set;
  const narrow = signature !== undefined && rec.signatureBits === 16;
  const need = 2 + (set ? 5 + set.length * 5 : 0) + (signature ? 5 + signature.length * 4 : 0) + (metaJson !== undefined ? 5 + metaLen : 0) + 8;
  // One reused scratch and one exact-size copy: cheaper than growing a fresh writer per record.
  if (recordScratch.length < need) recordScratch = new Uint8Array(Math.max(need, recordScratch.length * 2));
  const b = recordScratch;
  let o = 0;
  b[o++] = FORMAT_VERSION;
  b[o++] = (set ? REC_SET : 0) | (signature ? (narrow ? REC_SIG16 : REC_SIG) : 0) | (metaJson !== undefined ? REC_META : 0)
    | (expiresAt !== undefined ? REC_EXPIRES : 0)
    | (fromText ? REC_TEXT : 0);
  if (set) o = putFingerprintSet(b, o, set);
  if (narrow) {
    o = putVarint(b, o, signature.length);
    for (let i = 0; i < signature.length; i++) {
      const v = signature[i]!;
      if (v > 0xffff) throw new RangeError(`a 16-bit signature slot holds ${v}`);
      b[o] = v;
      b[o + 1] = v >>> 8;
      o += 2;
    }
  } else if (signature) {
    o = putVarint(b, o, signature.length);
    for (let i = 0; i < signature.length; i++) {
      const v = signature[i]!;
      b[o] = v;
      b[o + 1] = v >>> 8;
      b[o + 2] = v >>> 16;
      b[o + 3] = v >>> 24;
      o += 4;
    }
  }
  if (metaJson !== undefined) {
    o = putVarint(b, o, metaLen);
    o += utf8.encodeInto(metaJson, b.subarray(o, o + metaLen)).written;
  }
  if (expiresAt !== undefined) {
    new DataView(b.buffer, b.byteOffset, b.byteLength).setFloat64(o, checkExpiry(expiresAt), true);
    o += 8;
  }
  return b.slice(0, o);
}

/** `at` when it is a usable expiry (a finite number of ms since the epoch), else a RangeError. */
function checkExpiry(at: number): number {
  if (typeof at !== 'number' || !Number.isFinite(at)) throw new RangeError(`expiresAt must be a finite number of ms since the epoch, got ${String(at)}`);
  return at;
}

/**
 * The record `bytes` with its expiry set to `at` (ms since the epoch), or removed when `at` is
 * undefined: a new array (the expiry is the record's last section, so the others are copied as they are).
 */
export function withExpiry(bytes: Uint8Array, at: number | undefined): Uint8Array {
  const has = bytes.length > 1 && (bytes[1]! & REC_EXPIRES) !== 0;
  const body = has ? bytes.subarray(0, bytes.length - 8) : bytes;
  if (at === undefined) {
    const out = body.slice();
    if (out.length > 1) out[1] = out[1]! & ~REC_EXPIRES;
    return out;
  }
  const out = new Uint8Array(body.length + 8);
  out.set(body);
  out[1] = out[1]! | REC_EXPIRES;
  new DataView(out.buffer).setFloat64(body.length, checkExpiry(at), true);
  return out;
}

/** A record's expiry in ms since the epoch, or undefined when it has none; reads only its last 8 bytes. */
export function recordExpiresAt(bytes: Uint8Array): number | undefined {
  if (bytes.length < 10 || !(bytes[1]! & REC_EXPIRES)) return undefined;
  return new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 8, 8).getFloat64(0, true);
}

let recordScratch = new Uint8Array(4096);

/** The parsed header of a record, with the reader left at the first section. */
function recordReader(bytes: Uint8Array, what: string): { r: ByteReader; flags: number } {
  // The expiry, when present, is the last 8 bytes: the sections before it end there.
  const expiring = bytes.length > 1 && (bytes[1]! & REC_EXPIRES) !== 0;
  if (expiring && bytes.length < 10) throw new FormatError(`${what}: truncated expiry`);
  const r = new ByteReader(bytes, 0, expiring ? bytes.length - 8 : bytes.length, what);
  const version = r.u8();
  if (version !== FORMAT_VERSION) throw new FormatError(`${what}: unsupported record version ${version}`);
  const flags = r.u8();
  if (flags & ~KNOWN_FLAGS) throw new FormatError(`${what}: unknown record flags 0x${flags.toString(16)}`);
  if (flags & REC_SIG && flags & REC_SIG16) throw new FormatError(`${what}: both a 32-bit and a 16-bit signature`);
  if (flags & REC_TEXT && (flags & REC_SET || !(flags & REC_META))) throw new FormatError(`${what}: a set from the text needs metadata and no set`);
  return { r, flags };
}

/**
 * Decodes a whole record. `what` names it in errors (for example the document id). A REC_TEXT
 * record gets its `set` from `setOfText` when given (else only `setFromText`, its text checked).
 */
export function decodeRecord(bytes: Uint8Array, what = 'record', setOfText?: SetOfText): IndexRecord {
  const { r, flags } = recordReader(bytes, what);
  const rec: IndexRecord = {};
  if (flags & REC_SET) rec.set = readFingerprintSet(r).slice();
  if (flags & REC_SIG) {
    const n = r.varint();
    const sig = new Uint32Array(n);
    for (let i = 0; i < n; i++) sig[i] = r.u32();
    rec.signature = sig;
  }
  if (flags & REC_SIG16) {
    rec.signature = readSig16(r);
    rec.signatureBits = 16;
  }
  if (flags & REC_META) rec.meta = parseMeta(r, what);
  if (r.pos !== r.end) throw new FormatError(`${what}: ${r.end - r.pos} trailing bytes`);
  if (flags & REC_EXPIRES) rec.expiresAt = recordExpiresAt(bytes);
  if (flags & REC_TEXT) {
    rec.setFromText = true;
    const text = storedTextOf(rec.meta, what);
    if (setOfText) rec.set = setOfText(text);
  }
  return rec;
}

/** The `text` of a REC_TEXT record's metadata; a FormatError when it has none. */
function storedTextOf(meta: unknown, what: string): string {
  const text = meta !== null && typeof meta === 'object' ? (meta as { text?: unknown }).text : undefined;
  if (typeof text !== 'string') throw new FormatError(`${what}: its fingerprint set comes from its stored text, and its metadata holds no text`);
  return text;
}

/** The set of a REC_TEXT record: its metadata's text shingled by `setOfText` (a FormatError without one). */
function setFromStoredText(r: ByteReader, flags: number, what: string, setOfText: SetOfText | undefined): Uint32Array {
  if (!setOfText) throw new FormatError(`${what}: its fingerprint set comes from its stored text, and no shingler was given to recompute it`);
  skipSketch(r, flags, what);
  return setOfText(storedTextOf(parseMeta(r, what), what));
}

/** The text a REC_TEXT record keeps instead of its set (its metadata's `text`), else undefined. */
export function recordSetText(bytes: Uint8Array, what = 'record'): string | undefined {
  if (bytes.length < 2 || !(bytes[1]! & REC_TEXT)) return undefined;
  const { r, flags } = recordReader(bytes, what);
  skipSketch(r, flags, what);
  return storedTextOf(parseMeta(r, what), what);
}

/**
 * Hot-path view of a record for verification: the fingerprint set decoded into `scratch` (no
 * allocation when it fits) and the signature as a fresh array, skipping the metadata. A REC_TEXT
 * record's set is recomputed from its metadata's text by `setOfText` (a fresh array).
 */
export function readRecordSketch(bytes: Uint8Array, scratch: Uint32Array | undefined, setOfText?: SetOfText): { set?: Uint32Array; signature?: Uint32Array } {
  const { r, flags } = recordReader(bytes, 'record');
  const out: { set?: Uint32Array; signature?: Uint32Array } = {};
  if (flags & REC_TEXT) {
    out.set = setFromStoredText(r, flags, 'record', setOfText);
    return out;
  }
  if (flags & REC_SET) out.set = readFingerprintSet(r, scratch);
  if (flags & REC_SIG) {
    const n = r.varint();
    const sig = new Uint32Array(n);
    for (let i = 0; i < n; i++) sig[i] = r.u32();
    out.signature = sig;
  }
  if (flags & REC_SIG16) out.signature = readSig16(r);
  return out;
}

/** Only the metadata of a record (undefined when none), skipping the other sections without decoding them. */
export function readRecordMeta(bytes: Uint8Array, what = 'record'): unknown {
  const { r, flags } = recordReader(bytes, what);
  if (!(flags & REC_META)) return undefined;
  skipSketch(r, flags, what);
  return parseMeta(r, what);
}

/** The metadata section at `r`: varint byte length, UTF-8 JSON. */
function parseMeta(r: ByteReader, what: string): unknown {
  const text = utf8d.decode(r.bytes(r.varint()));
  try {
    return JSON.parse(text);
  } catch {
    throw new FormatError(`${what}: metadata is not valid JSON`);
  }
}

/** Moves `r` past the set and signature sections without decoding them. */
function skipSketch(r: ByteReader, flags: number, what: string): void {
  if (flags & REC_SET) {
    // Skip n varints: count the bytes that end one (high bit clear).
    let n = r.varint();
    let p = r.pos;
    while (n > 0 && p < r.end) if (r.buf[p++]! < 0x80) n--;
    if (n > 0) throw new FormatError(`${what}: truncated fingerprint set`);
    r.pos = p;
  }
  if (flags & REC_SIG) r.bytes(r.varint() * 4);
  if (flags & REC_SIG16) r.bytes(r.varint() * 2);
}

/**
 * The encoded set and signature sections of a record, undecoded, with the flags that say which
 * are there: equal for two records exactly when their sets and signatures are (the encoding is
 * canonical). A REC_TEXT record's set is recomputed by `setOfText` and encoded as REC_SET's section.
 */
export function recordSketchBytes(bytes: Uint8Array, what = 'record', setOfText?: SetOfText): { kinds: number; bytes: Uint8Array } {
  const { r, flags } = recordReader(bytes, what);
  if (flags & REC_TEXT) {
    const set = setFromStoredText(r, flags, what, setOfText);
    const b = new Uint8Array(5 + set.length * 5);
    return { kinds: REC_SET, bytes: b.subarray(0, putFingerprintSet(b, 0, set)) };
  }
  skipSketch(r, flags, what);
  return { kinds: flags & (REC_SET | REC_SIG | REC_SIG16), bytes: bytes.subarray(2, r.pos) };
}

/** A REC_SIG16 section: varint numPerm, then u16 LE slots, widened to a Uint32Array. */
function readSig16(r: ByteReader): Uint32Array {
  const n = r.varint();
  const sig = new Uint32Array(n);
  for (let i = 0; i < n; i++) sig[i] = r.u16();
  return sig;
}
