/**
 * The verified rule's greedy walk (src/cluster/removal.ts `decideUnits`) out of core. A unit's
 * turn asks only its neighbours ranked before it (those ranked after are not kept yet), so each
 * pair is a row under its later-ranked end: (later rank, earlier rank, similarity), spilled to
 * bucket files by later rank and read back in rank order. At rank L's turn every earlier rank is
 * decided: L is kept unless some row's earlier end is kept, and then it duplicates the kept one
 * ranked first, at that row's similarity. Memory: a byte per unit for kept, the per-unit answers,
 * the rows per rank, and one bucket of rows; not the pairs.
 * @module
 */
import { mkdirSync, rmSync } from 'node:fs';
import type { UnitDecision } from '../../cluster/removal.js';
import { KeyBuckets } from './buckets.js';

/** Pairs read a chunk at a time, in one fixed order: ends (a[i], b[i]) at similarity sims[i] for i < n. */
export interface PairChunks {
  /** Pairs over all chunks. */
  count: number;
  /** Calls `each` per chunk, in order (the arrays are views reused by the next chunk). */
  forEach(each: (a: Int32Array, b: Int32Array, sims: Float64Array, n: number) => void): void;
}

/** What {@link walkOutOfCore} decides. */
export interface OutOfCoreWalk {
  /** Units 0..units−1. */
  units: number;
  /** The pairs; their ends are mapped to units by `unitOf` (absent: the ends are units). */
  pairs: PairChunks;
  unitOf?: Int32Array;
  /** Every unit in some pair, best first (as `decideUnits` takes it). */
  order: ArrayLike<number>;
  /** A directory of its own for the spill files (removed after). */
  dir: string;
  /** Most rows a bucket holds. */
  rows: number;
}

/** `decideUnits`' answer for the same pairs and order, with the pairs spilled (see the module comment). */
export function walkOutOfCore(o: OutOfCoreWalk): UnitDecision {
  const R = o.order.length;
  const rank = new Int32Array(o.units).fill(-1);
  for (let k = 0; k < R; k++) rank[o.order[k]!] = k;
  const unit = o.unitOf;
  const counts = new Int32Array(R);
  o.pairs.forEach((a, b, _s, n) => {
    for (let i = 0; i < n; i++) {
      const ra = rank[unit ? unit[a[i]!]! : a[i]!]!;
      const rb = rank[unit ? unit[b[i]!]! : b[i]!]!;
      counts[ra > rb ? ra : rb]!++;
    }
  });
  mkdirSync(o.dir, { recursive: true });
  const buckets = new KeyBuckets({ dir: o.dir, counts, rows: o.rows });
  try {
    o.pairs.forEach((a, b, sims, n) => {
      for (let i = 0; i < n; i++) {
        const ra = rank[unit ? unit[a[i]!]! : a[i]!]!;
        const rb = rank[unit ? unit[b[i]!]! : b[i]!]!;
        if (ra > rb) buckets.add(ra, rb, sims[i]!);
        else buckets.add(rb, ra, sims[i]!);
      }
    });
    buckets.finish();
    const via = new Int32Array(o.units).fill(-1);
    const similarity = new Float64Array(o.units).fill(NaN);
    const kept = new Uint8Array(R);
    buckets.forEach(({ from, to, start, y, v }) => {
      for (let L = from; L < to; L++) {
        // The kept neighbour ranked first; on equal ranks (a pair listed twice) the first row, as decideUnits.
        let bestE = R;
        let bestSim = NaN;
        for (let q = start[L - from]!; q < start[L - from + 1]!; q++) {
          const e = y[q]!;
          if (kept[e] && e < bestE) {
            bestE = e;
            bestSim = v[q]!;
          }
        }
        const u = o.order[L]!;
        if (bestE === R) {
          via[u] = u;
          kept[L] = 1;
        } else {
          via[u] = o.order[bestE]!;
          similarity[u] = bestSim;
        }
      }
    });
    return { via, similarity };
  } finally {
    buckets.remove();
    rmSync(o.dir, { recursive: true, force: true });
  }
}
