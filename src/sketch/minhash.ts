/**
 * MinHash signatures: `classic` k-permutation MinHash and `oph`, one-permutation hashing whose
 * empty bins are filled by further hashing rounds (see {@link ophSigner}). A signature is a Uint32Array of `numPerm` slots;
 * the fraction of equal slots of two signatures estimates the Jaccard similarity of their sets.
 * @module
 */
import { fmix32, splitmix32, subSeed } from '../hash/mix.js';
import { classicFromPremixed } from './kernels.js';
import { ENGINE_DEFAULTS } from '../engine/options.js';
import type { MinHashMethod, MinHashOptions } from '../engine/config.js';
export type { MinHashMethod, MinHashOptions } from '../engine/config.js';

/** A configured MinHash signer. */
export interface MinHasher {
  /** Signature length. */
  readonly numPerm: number;
  /** The method. */
  readonly method: MinHashMethod;
  /** The seed. */
  readonly seed: number;
  /**
   * The signature of a fingerprint collection (repeats allowed, order irrelevant), or `null`
   * when it is empty: an empty document has no signature.
   */
  sign(fingerprints: Uint32Array): Uint32Array | null;
  /** Like {@link sign}, writing into `out` (length numPerm); returns false for an empty input. */
  signInto(fingerprints: Uint32Array, out: Uint32Array): boolean;
}

const EMPTY = 0xffffffff;

/** Default signature length. */
export const DEFAULT_NUM_PERM = ENGINE_DEFAULTS.numPerm;

/** Builds a {@link MinHasher}. Throws a RangeError for invalid options. */
export function createMinHasher(options: MinHashOptions = {}): MinHasher {
  const numPerm = options.numPerm ?? DEFAULT_NUM_PERM;
  const seed = (options.seed ?? ENGINE_DEFAULTS.seed) >>> 0;
  const method = options.method ?? ENGINE_DEFAULTS.method;
  if (!Number.isInteger(numPerm) || numPerm < 1 || numPerm > 65536) {
    throw new RangeError(`numPerm must be an integer from 1 to 65536, got ${numPerm}`);
  }
  if (method !== 'classic' && method !== 'oph') throw new RangeError(`unknown MinHash method "${String(method)}" (expected classic or oph)`);
  const signInto = method === 'classic' ? classicSigner(numPerm, seed) : ophSigner(numPerm, seed);
  return {
    numPerm,
    method,
    seed,
    signInto,
    sign(fps: Uint32Array): Uint32Array | null {
      const out = new Uint32Array(numPerm);
      return signInto(fps, out) ? out : null;
    },
  };
}

/** The hash parameters of a classic signer, derived from the seed (shared with the fast paths). */
export interface ClassicParams {
  /** Odd multipliers a_i. */
  a: Int32Array;
  /** XOR offsets b_i. */
  b: Int32Array;
  /** The premix seed: z = fmix32(fp XOR pre). */
  pre: number;
}

/** Derives the {@link ClassicParams} of `k` slots for `seed`. */
export function classicParams(k: number, seed: number): ClassicParams {
  const rnd = splitmix32(subSeed(seed, 2));
  const a = new Int32Array(k);
  const b = new Int32Array(k);
  for (let i = 0; i < k; i++) {
    a[i] = rnd() | 1;
    b[i] = rnd() | 0;
  }
  return { a, b, pre: subSeed(seed, 3) };
}

/**
 * Classic MinHash. Each fingerprint is premixed once (fmix32 with a seed), then permutation i is
 * the bijection z ↦ xorshift16(imul(z XOR b_i, a_i)) with a_i odd: one multiply per (shingle, slot).
 */
function classicSigner(k: number, seed: number): (fps: Uint32Array, out: Uint32Array) => boolean {
  const { a, b, pre } = classicParams(k, seed);
  let zs = new Int32Array(1024);
  return (fps, out) => {
    const n = fps.length;
    if (n === 0) return false;
    if (zs.length < n) zs = new Int32Array(Math.max(n, zs.length * 2));
    for (let j = 0; j < n; j++) zs[j] = fmix32((fps[j]! ^ pre) >>> 0) | 0;
    classicFromPremixed(zs, n, a, b, out);
    return true;
  };
}

/** The premix seed of an OPH signer: z = fmix32(fp XOR pre) (shared with the fast paths). */
export function ophParams(seed: number): { pre: number } {
  return { pre: subSeed(seed, 4) };
}

/**
 * One-permutation hashing: z = fmix32(fp XOR seed'); the bin is ⌊z·k / 2^32⌋ and the bin keeps its
 * smallest z. A document long enough to fill every bin (the common case: a few hundred shingles at
 * k = 128) needs nothing more, so the hot path is one mix per shingle.
 *
 * Bins left empty are filled by further rounds, as in fast similarity sketching (Dahlgaard, Knudsen
 * and Thorup, 2017): in round t = 1, 2, … every element is rehashed, h_t = fmix32(z XOR t·C), and
 * offered to bin ⌊h_t·k / 2^32⌋ (for t < k) or to bin t − k (for k ≤ t < 2k, which guarantees that
 * every bin is filled by round 2k − 1). An earlier round always beats a later one, and within a round
 * the smaller hash wins; rounds stop once no bin is empty. Unlike copying values between bins
 * (densification), each bin gets its own draw, which keeps the estimator's variance at or below that
 * of classic MinHash even for documents of a handful of shingles.
 */
function ophSigner(k: number, seed: number): (fps: Uint32Array, out: Uint32Array) => boolean {
  const { pre } = ophParams(seed);
  const scale = k / 4294967296;
  let zs = new Uint32Array(256);
  return (fps, out) => {
    const n = fps.length;
    if (n === 0) return false;
    out.fill(EMPTY);
    if (zs.length < n) zs = new Uint32Array(Math.max(n, zs.length * 2));
    for (let j = 0; j < n; j++) {
      let z = (fps[j]! ^ pre) | 0;
      z ^= z >>> 16;
      z = Math.imul(z, 0x85ebca6b);
      z ^= z >>> 13;
      z = Math.imul(z, 0xc2b2ae35);
      z = (z ^ (z >>> 16)) >>> 0;
      zs[j] = z; // kept for the fill rounds
      const bin = (z * scale) | 0;
      if (z < out[bin]!) out[bin] = z;
    }
    // A bin is empty iff it still holds EMPTY (z = 2^32−1 exactly would also look empty; it then
    // takes part in the fill rounds like an empty bin, which is harmless and vanishingly rare).
    let empty = 0;
    for (let i = 0; i < k; i++) if (out[i] === EMPTY) empty++;
    if (empty === 0) return true;
    ophFillRounds(zs, n, out, empty);
    return true;
  };
}

// Round numbers go up to 2k − 1: 32 bits (16 wrapped past k = 32768, and round 65535 then read as
// empty, so signatures of more than 32768 slots strayed from the definition on short documents).
let fillRound = new Int32Array(128);

/**
 * The fill rounds of {@link ophSigner}: offers the premixed values z = fmix32(fp XOR pre) in
 * zs[0..m) to the `empty` bins of `out` still holding 0xffffffff, round after round, until none is
 * empty. Shared with the fused path (src/sketch/fusedSketch.ts), which has the premixed values at hand.
 */
export function ophFillRounds(zs: Uint32Array, m: number, out: Uint32Array, empty: number): void {
  const k = out.length;
  if (fillRound.length < k) fillRound = new Int32Array(k);
  const round = fillRound;
  const scale = k / 4294967296;
  for (let i = 0; i < k; i++) round[i] = out[i] === EMPTY ? -1 : 0;
  for (let t = 1; empty > 0; t++) {
    const salt = Math.imul(t, 0x9e3779b9);
    const late = t >= k; // rounds k … 2k−1 offer every element to bin t − k
    for (let j = 0; j < m; j++) {
      let h = zs[j]! ^ salt;
      h ^= h >>> 16;
      h = Math.imul(h, 0x85ebca6b);
      h ^= h >>> 13;
      h = Math.imul(h, 0xc2b2ae35);
      h = (h ^ (h >>> 16)) >>> 0;
      const bin = late ? t - k : (h * scale) | 0;
      const r = round[bin]!;
      if (r === -1) {
        round[bin] = t;
        out[bin] = h;
        empty--;
      } else if (r === t && h < out[bin]!) {
        out[bin] = h;
      }
    }
  }
}

/** The MinHash estimate of Jaccard similarity: the fraction of equal slots of two signatures. */
export function estimateJaccard(a: Uint32Array, b: Uint32Array): number {
  if (a.length !== b.length) throw new RangeError(`signature lengths differ: ${a.length} vs ${b.length}`);
  let eq = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) eq++;
  return eq / a.length;
}
