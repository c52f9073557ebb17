/**
 * Typed arrays on resizable `ArrayBuffer`s, for the large arrays of `neardup spans` that grow or
 * shrink. V8 maps such a buffer's pages itself, outside `malloc`: growing it keeps its contents in
 * place (no copy, no old array left for the garbage collector), and shrinking it gives the pages
 * back at once. A plain typed array grown by doubling leaves its old copy in `malloc`'s heap, where
 * glibc keeps it when freed (its threshold for mapping a block alone rises to the largest freed,
 * up to 32 MiB): on the 50.9 MB corpus of 100-byte windows about 25 MB of such holes stayed
 * resident through pass 1 and pass 2.
 * @module
 */

/** The typed arrays kept here. */
type Typed = Int32Array | Uint32Array | Uint16Array | Uint8Array;
type Ctor<T extends Typed> = { new(b: ArrayBuffer, at: number, n: number): T; new(n: number): T; BYTES_PER_ELEMENT: number };

/** The largest resizable buffer V8 makes (4 GiB); a larger array is a plain one. */
const MOST_BYTES = 2 ** 32;

/** What ES2024 adds to `ArrayBuffer` (this build's library is ES2022). */
interface Resizable {
  readonly resizable: boolean;
  readonly maxByteLength: number;
  resize(bytes: number): void;
}
const Buffers = ArrayBuffer as unknown as new(bytes: number, o: { maxByteLength: number }) => ArrayBuffer;
/** Whether this runtime has resizable buffers (Node 20 has). */
const HAS = typeof (ArrayBuffer.prototype as unknown as Partial<Resizable>).resize === 'function';

/** `a`'s buffer when it is resizable and `a` starts it. */
function resizable(a: Typed): Resizable | undefined {
  const b = a.buffer as unknown as Resizable;
  return b.resizable && a.byteOffset === 0 ? b : undefined;
}

/** An array of `n` zeros that can grow in place to `most` elements (and shrink). */
export function mapped<T extends Typed>(ctor: Ctor<T>, n: number, most = n): T {
  const e = ctor.BYTES_PER_ELEMENT;
  const max = Math.min(MOST_BYTES, Math.max(n, most) * e);
  if (!HAS || n * e > max) return new ctor(n);
  return new ctor(new Buffers(n * e, { maxByteLength: max }), 0, n);
}

/**
 * `a`, or `a` with room for at least `n` elements, `most` when its buffer has room (twice `a`
 * unless told): in place when its buffer can grow, else a copy.
 */
export function grown<T extends Typed>(a: T, n: number, most = 2 * a.length): T {
  if (n <= a.length) return a;
  const want = Math.max(n, most);
  const b = resizable(a);
  const e = a.BYTES_PER_ELEMENT;
  if (b) {
    const bytes = Math.min(b.maxByteLength, want * e);
    if (bytes >= n * e) {
      b.resize(bytes);
      return new (a.constructor as Ctor<T>)(a.buffer as ArrayBuffer, 0, bytes / e);
    }
  }
  const x = mapped(a.constructor as Ctor<T>, want, 4 * want);
  x.set(a);
  return x;
}

/** `a` cut to its first `n` elements, the rest of its pages given back when its buffer can shrink. */
export function shrunk<T extends Typed>(a: T, n: number): T {
  if (n >= a.length) return a;
  const b = resizable(a);
  if (b) {
    b.resize(n * a.BYTES_PER_ELEMENT);
    return new (a.constructor as Ctor<T>)(a.buffer as ArrayBuffer, 0, n);
  }
  return a.slice(0, n) as T;
}

/**
 * An array over all of buffer `b` (its old contents kept, to be overwritten), grown in place as
 * far as its buffer allows ({@link grown}): memory already touched, taken over for another use.
 * Undefined when `b` is not resizable.
 */
export function takenOver<T extends Typed>(ctor: Ctor<T>, b: ArrayBuffer): T | undefined {
  const r = b as unknown as Resizable;
  if (!HAS || !r.resizable) return undefined;
  return new ctor(b, 0, Math.floor(b.byteLength / ctor.BYTES_PER_ELEMENT));
}
