/**
 * A growable uint32 buffer, for stage outputs whose length is known only at the end.
 * @module
 */
import { grown, mapped } from '../../common/roomArrays.js';

/** Appends uint32 values; `view()` is the filled part. */
export class U32Buf {
  private data: Uint32Array;
  /** Values appended. */
  length = 0;

  constructor(capacity = 1024) {
    // With room to grow in place (src/common/roomArrays.ts): a doubled copy left the old one for the
    // collector, and a spans job's columns of millions of rows peaked at twice their size.
    this.data = mapped(Uint32Array, Math.max(16, capacity), 1 << 24);
  }

  /** Values it holds before growing. */
  get capacity(): number {
    return this.data.length;
  }

  /** Appends one value. */
  push(v: number): void {
    if (this.length === this.data.length) this.data = grown(this.data, this.length + 1);
    this.data[this.length++] = v;
  }

  /**
   * Makes room for `extra` more values and returns the backing array: write them at
   * [length, length + extra), then add `extra` to `length` (a loop of pushes checks room per value).
   */
  room(extra: number): Uint32Array {
    if (this.length + extra > this.data.length) this.data = grown(this.data, this.length + extra);
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
  // One group: the columns are in its order already (a copy was as large as them all).
  if (groups === 1) return { columns, start: Float64Array.of(0, n) };
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
