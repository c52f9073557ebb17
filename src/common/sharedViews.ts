/**
 * Typed arrays over SharedArrayBuffers sent to a worker thread as their buffer, offset and length,
 * and made again on the other side. Why: Node 20 and 24 (V8's structured clone) send a view's
 * length modulo 2^32 bytes, so a Float64Array over a 4 GiB SharedArrayBuffer arrived with length 0
 * and every write to it was lost without an error; the buffer itself arrives whole. The file store's
 * key table reaches 4 GiB at 2^29 entries (~10^7 documents).
 * @module
 */

const VIEWS = {
  Uint8Array,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;

type ViewName = keyof typeof VIEWS;

/** A shared view as sent: its constructor's name, its buffer, its byte offset and its length. */
interface SentView {
  sharedView: ViewName;
  buffer: SharedArrayBuffer;
  byteOffset: number;
  length: number;
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && (Object.getPrototypeOf(v) === Object.prototype || Array.isArray(v));

const nameOf = (v: ArrayBufferView): ViewName | undefined => (Object.keys(VIEWS) as ViewName[]).find((n) => Object.getPrototypeOf(v) === VIEWS[n].prototype);

/**
 * `value` with every typed array over a SharedArrayBuffer (in plain objects and arrays, at any
 * depth) replaced by what {@link fromThread} makes it again from; anything else as it is.
 */
export function toThread<T>(value: T): unknown {
  if (ArrayBuffer.isView(value) && value.buffer instanceof SharedArrayBuffer) {
    const sharedView = nameOf(value);
    if (!sharedView) throw new TypeError(`cannot send a ${value.constructor.name} over a SharedArrayBuffer to a thread`);
    const length = (value as unknown as { length: number }).length;
    return { sharedView, buffer: value.buffer, byteOffset: value.byteOffset, length } satisfies SentView;
  }
  if (!isPlain(value)) return value;
  if (Array.isArray(value)) return value.map(toThread);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toThread(v)]));
}

/** What {@link toThread} sent, with its shared views made again over the same memory. */
export function fromThread<T>(value: unknown): T {
  if (!isPlain(value)) return value as T;
  if (Array.isArray(value)) return value.map((v) => fromThread(v)) as T;
  const v = value as Partial<SentView>;
  if (typeof v.sharedView === 'string' && v.buffer instanceof SharedArrayBuffer && v.sharedView in VIEWS) {
    return new VIEWS[v.sharedView](v.buffer as unknown as ArrayBuffer, v.byteOffset, v.length) as T;
  }
  return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, fromThread(x)])) as T;
}
