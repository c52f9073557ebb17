/**
 * A growable uint32 buffer, for stage outputs whose length is known only at the end.
 * @module
 */

/** Appends uint32 values; `view()` is the filled part. */
export class U32Buf {
  private data: Uint32Array;
  /** Values appended. */
  length = 0;

  constructor(capacity = 1024) {
    this.data = new Uint32Array(Math.max(16, capacity));
  }

  /** Values it holds before growing. */
  get capacity(): number {
    return this.data.length;
  }

  /** Appends one value. */
  push(v: number): void {
    if (this.length === this.data.length) {
      const d = new Uint32Array(this.data.length * 2);
      d.set(this.data);
      this.data = d;
    }
    this.data[this.length++] = v;
  }

  /**
   * Makes room for `extra` more values and returns the backing array: write them at
   * [length, length + extra), then add `extra` to `length` (a loop of pushes checks room per value).
   */
  room(extra: number): Uint32Array {
    if (this.length + extra > this.data.length) {
      const d = new Uint32Array(Math.max(this.length + extra, this.data.length * 2));
      d.set(this.data.subarray(0, this.length));
      this.data = d;
    }
    return this.data;
  }

  /** The values appended so far (a view, valid until the next push). */
  view(): Uint32Array {
    return this.data.subarray(0, this.length);
  }
}

/**
 * Reorders parallel columns by a group number in [0, groups) (a stable counting sort). Returns the
 * reordered columns and `start`, where group g occupies [start[g], start[g + 1]).
 */
export function groupBy(group: Uint32Array, groups: number, columns: Uint32Array[]): { columns: Uint32Array[]; start: Float64Array } {
  const n = group.length;
  const start = new Float64Array(groups + 1);
  for (let i = 0; i < n; i++) start[group[i]! + 1]!++;
  for (let g = 0; g < groups; g++) start[g + 1]! += start[g]!;
  const fill = start.slice(0, groups);
  const at = new Uint32Array(n);
  for (let i = 0; i < n; i++) at[i] = fill[group[i]!]!++;
  const out = columns.map((c) => {
    const o = new Uint32Array(n);
    for (let i = 0; i < n; i++) o[at[i]!] = c[i]!;
    return o;
  });
  return { columns: out, start };
}
