/**
 * Many signatures packed in one Uint32Array, row i at [i·numPerm, (i+1)·numPerm).
 * Documents without shingles have no signature: `present[i] = 0` and their row is unused.
 * @module
 */

/** A growable, packed collection of signatures. */
export class SignatureMatrix {
  /** Slots per signature. */
  readonly numPerm: number;
  /** Packed rows. */
  data: Uint32Array;
  /** 1 where document i has a signature. */
  present: Uint8Array;
  /** Number of rows (documents). */
  count = 0;

  constructor(numPerm: number, expected = 1024) {
    this.numPerm = numPerm;
    this.data = new Uint32Array(numPerm * Math.max(1, expected));
    this.present = new Uint8Array(Math.max(1, expected));
  }

  /** Reserves the next row and returns its index; write it through {@link row}. */
  push(): number {
    if (this.count === this.present.length) {
      const cap = this.present.length * 2;
      const d = new Uint32Array(cap * this.numPerm);
      d.set(this.data);
      this.data = d;
      const p = new Uint8Array(cap);
      p.set(this.present);
      this.present = p;
    }
    return this.count++;
  }

  /** A view of row i (no copy). */
  row(i: number): Uint32Array {
    return this.data.subarray(i * this.numPerm, (i + 1) * this.numPerm);
  }

  /** The fraction of equal slots of rows i and j. */
  estimate(i: number, j: number): number {
    const k = this.numPerm;
    const d = this.data;
    let eq = 0;
    for (let x = i * k, y = j * k, end = x + k; x < end; x++, y++) if (d[x] === d[y]) eq++;
    return eq / k;
  }
}
