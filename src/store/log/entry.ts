/**
 * The entry format of the posting logs (docs/stores.md): the Redis store's `log` layout keeps every
 * write as one binary entry of a Redis list, the file store (src/store/file) as the payload of one
 * frame of its log file. Each process folds the entries into an in-memory band table
 * (LogReplica, src/store/log/replica.ts).
 *
 * Entry format (all integers little-endian; varint = unsigned LEB128):
 *   u8 version (1) · u8 op (1 = put, 2 = remove) · varint n · n × document
 *   document (put):    varint idBytes · id (UTF-8) · varint keyCount · keyCount × u64 key
 *   document (remove): varint idBytes · id (UTF-8)
 * A put replaces any earlier version of the same id; its keys are the document's band and forest keys
 * (53-bit integers, docs/formats.md).
 * @module
 */

/** Version byte of a log entry. */
export const LOG_ENTRY_VERSION = 1;

/** A document of a log entry. */
export interface LogDoc {
  /** Document id. */
  id: string;
  /** Its keys (empty for a document without shingles); absent in a remove entry. */
  keys?: Float64Array;
}

/** A decoded log entry. */
export interface LogEntry {
  op: 'put' | 'remove';
  docs: LogDoc[];
}

const OP_PUT = 1;
const OP_REMOVE = 2;
const TWO32 = 4294967296;

function varintSize(n: number): number {
  let s = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    s++;
  }
  return s;
}

function writeVarint(b: Buffer, o: number, n: number): number {
  while (n >= 128) {
    b[o++] = (n & 127) | 128;
    n = Math.floor(n / 128);
  }
  b[o++] = n;
  return o;
}

/** Encodes a put (or, without keys, a remove) entry. */
export function encodeLogEntry(op: 'put' | 'remove', docs: LogDoc[]): Buffer {
  // Sized first (ids' UTF-8 lengths), then written in place: no buffer per id, byte stores for the keys.
  const idLen = new Array<number>(docs.length);
  let size = 2 + varintSize(docs.length);
  for (let i = 0; i < docs.length; i++) {
    const n = Buffer.byteLength(docs[i]!.id, 'utf8');
    idLen[i] = n;
    size += varintSize(n) + n;
    if (op === 'put') {
      const k = docs[i]!.keys?.length ?? 0;
      size += varintSize(k) + 8 * k;
    }
  }
  const b = Buffer.allocUnsafe(size);
  b[0] = LOG_ENTRY_VERSION;
  b[1] = op === 'put' ? OP_PUT : OP_REMOVE;
  let o = writeVarint(b, 2, docs.length);
  for (let i = 0; i < docs.length; i++) {
    o = writeVarint(b, o, idLen[i]!);
    o += b.write(docs[i]!.id, o, 'utf8');
    if (op !== 'put') continue;
    const keys = docs[i]!.keys;
    const k = keys?.length ?? 0;
    o = writeVarint(b, o, k);
    for (let j = 0; j < k; j++) {
      const key = keys![j]!;
      const lo = key % TWO32;
      const hi = (key - lo) / TWO32;
      b[o] = lo;
      b[o + 1] = lo >>> 8;
      b[o + 2] = lo >>> 16;
      b[o + 3] = lo >>> 24;
      b[o + 4] = hi;
      b[o + 5] = hi >>> 8;
      b[o + 6] = hi >>> 16;
      b[o + 7] = hi >>> 24;
      o += 8;
    }
  }
  return b;
}

/** Decodes a log entry; throws an Error naming the entry on malformed bytes. */
export function decodeLogEntry(b: Buffer, where: string): LogEntry {
  let o = 0;
  const fail = (why: string): never => {
    throw new Error(`${where}: malformed log entry (${why})`);
  };
  const varint = (): number => {
    let n = 0;
    let mul = 1;
    for (;;) {
      if (o >= b.length) fail('truncated varint');
      const x = b[o++]!;
      n += (x & 127) * mul;
      if (x < 128) return n;
      mul *= 128;
      if (mul > 2 ** 49) fail('varint too long');
    }
  };
  if (b.length < 2) fail('too short');
  if (b[0] !== LOG_ENTRY_VERSION) fail(`version ${b[0]}, this version reads ${LOG_ENTRY_VERSION}`);
  const opByte = b[1]!;
  if (opByte !== OP_PUT && opByte !== OP_REMOVE) fail(`unknown op ${opByte}`);
  o = 2;
  const n = varint();
  const docs: LogDoc[] = [];
  for (let i = 0; i < n; i++) {
    const len = varint();
    if (o + len > b.length) fail('truncated id');
    const id = b.toString('utf8', o, o + len);
    o += len;
    if (opByte === OP_PUT) {
      const k = varint();
      if (o + 8 * k > b.length) fail('truncated keys');
      const keys = new Float64Array(k);
      for (let j = 0; j < k; j++, o += 8) keys[j] = b.readUInt32LE(o + 4) * TWO32 + b.readUInt32LE(o);
      docs.push({ id, keys });
    } else docs.push({ id });
  }
  if (o !== b.length) fail(`${b.length - o} trailing bytes`);
  return { op: opByte === OP_PUT ? 'put' : 'remove', docs };
}
