/**
 * The pairs of a sample job counted for the whole job: Horvitz–Thompson estimates over the sampled
 * pairs (with k of S units drawn uniformly without replacement, a pair within one unit is seen with
 * probability k/S and a pair across two with k(k−1)/(S(S−1))), each with a delete-one-unit
 * jackknife standard error; and the sample's verified pairs read for the clustered-documents model.
 * @module
 */
import path from 'node:path';
import { ColumnFile } from '../files/columns.js';
import { taskDir } from '../files/commit.js';
import type { JobSpec } from '../files/job.js';
import { numbering } from '../files/shardInput.js';

/**
 * Horvitz–Thompson weights of a sampled pair with k of `units` units drawn uniformly without
 * replacement: 1 / P(the pair is seen), for a pair within one unit and for one across two.
 */
export function pairWeights(k: number, S: number): { same: number; cross: number } {
  if (k >= S) return { same: 1, cross: 1 };
  return { same: S / k, cross: k > 1 ? (S * (S - 1)) / (k * (k - 1)) : Infinity };
}

/** A count estimated from a sample, with its standard error. */
export interface Estimated {
  estimate: number;
  stdError: number;
}

/**
 * The Horvitz–Thompson count of pairs from those seen in a sample of k of `units` units (pair i
 * joins drawn units a[i] and b[i], numbered 0..k−1), with a delete-one-unit jackknife standard
 * error: the pairs of one unit come and go together, so the units, not the pairs, are the
 * independent draws.
 */
export function estimatePairs(a: ArrayLike<number>, b: ArrayLike<number>, units: number, k: number): Estimated {
  const same = new Float64Array(k);
  const cross = new Float64Array(k);
  let S = 0;
  let C = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) {
      same[a[i]!]!++;
      S++;
    } else {
      cross[a[i]!]!++;
      cross[b[i]!]!++;
      C++;
    }
  }
  const w = pairWeights(k, units);
  const estimate = w.same * S + (C > 0 ? w.cross * C : 0);
  if (k >= units || k < 3) return { estimate, stdError: k >= units ? 0 : Infinity };
  // Leave unit u out: the same estimator over the other k − 1 drawn units.
  const w1 = pairWeights(k - 1, units);
  let mean = 0;
  const loo = new Float64Array(k);
  for (let u = 0; u < k; u++) mean += loo[u] = w1.same * (S - same[u]!) + w1.cross * (C - cross[u]!);
  mean /= k;
  let ss = 0;
  for (let u = 0; u < k; u++) ss += (loo[u]! - mean) ** 2;
  return { estimate, stdError: Math.sqrt(((k - 1) / k) * ss) };
}

/** The pairs of column files (shardA, shardB: units of the sample job), estimated for the whole job. */
export function pairsOf(files: readonly { file: string; kind: string }[], plan: string, units: number, k: number): Estimated {
  const as: Uint32Array[] = [];
  const bs: Uint32Array[] = [];
  for (const { file, kind } of files) {
    const f = ColumnFile.open(file, kind, plan);
    try {
      as.push(f.u32('shardA'));
      bs.push(f.u32('shardB'));
    } finally {
      f.close();
    }
  }
  const join = (xs: Uint32Array[]): Uint32Array => {
    const out = new Uint32Array(xs.reduce((n, x) => n + x.length, 0));
    let o = 0;
    for (const x of xs) out.set(x, (o += x.length) - x.length);
    return out;
  };
  return estimatePairs(join(as), join(bs), units, k);
}

/** The verified pairs of the sample job: each end's unit (its shard of the sample job) and document number across the sample. */
export function verifiedEnds(dir: string, job: JobSpec, tasks: number): { ua: Uint32Array; da: Float64Array; ub: Uint32Array; db: Float64Array } {
  const { docOffset } = numbering(dir, job);
  const parts: { ua: Uint32Array; a: Uint32Array; ub: Uint32Array; b: Uint32Array }[] = [];
  for (let t = 0; t < tasks; t++) {
    const f = ColumnFile.open(path.join(taskDir(dir, 'verify', t), 'pairs.bin'), 'verified', job.id);
    try {
      parts.push({ ua: f.u32('shardA'), a: f.u32('docA'), ub: f.u32('shardB'), b: f.u32('docB') });
    } finally {
      f.close();
    }
  }
  const n = parts.reduce((x, p) => x + p.a.length, 0);
  const out = { ua: new Uint32Array(n), da: new Float64Array(n), ub: new Uint32Array(n), db: new Float64Array(n) };
  let i = 0;
  for (const p of parts) {
    for (let r = 0; r < p.a.length; r++, i++) {
      out.ua[i] = p.ua[r]!;
      out.ub[i] = p.ub[r]!;
      out.da[i] = docOffset[p.ua[r]!]! + p.a[r]!;
      out.db[i] = docOffset[p.ub[r]!]! + p.b[r]!;
    }
  }
  return out;
}
