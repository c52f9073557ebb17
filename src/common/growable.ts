/**
 * A typed array that grows as values are appended to it (doubling), for columns whose length is
 * known only at the end of a pass.
 * @module
 */

/** The typed arrays a {@link Growable} holds. */
export type GrowableArray = Uint32Array | Float64Array;

/** Values appended at the end of a typed array that doubles when full; `data[0 .. length)` are they. */
export class Growable<T extends GrowableArray> {
  /** The backing array (replaced when it grows: read it after appending). */
  data: T;
  /** How many values are meaningful. */
  length = 0;

  /** @param make makes an empty array of a given length, such as `(n) => new Uint32Array(n)`. */
  constructor(private readonly make: (n: number) => T, capacity = 1 << 12) {
    this.data = make(capacity);
  }

  /** Appends every value of `src`. */
  append(src: T): void {
    if (this.length + src.length > this.data.length) {
      const d = this.make(Math.max(this.length + src.length, this.data.length * 2));
      d.set(this.data.subarray(0, this.length) as ArrayLike<number>);
      this.data = d;
    }
    this.data.set(src as ArrayLike<number>, this.length);
    this.length += src.length;
  }
}
