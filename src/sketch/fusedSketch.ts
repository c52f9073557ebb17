/**
 * The fused path of {@link TextSigner.sketch} (src/sketch/textSigner.ts): text → (sorted unique
 * fingerprint set, MinHash signature) in one pass, bit-identical to the definition
 * `set = createShingler(s).set(text); sig = createMinHasher(m).sign(set)`. For character shingles
 * without multiset:
 * - symbolizes the raw text with the fused normalizer (no normalized string is built),
 * - rolls the k-gram fingerprints into a reused buffer,
 * - premixes each fingerprint once for OPH: round 0 is done in the same pass, and the premixed
 *   values are kept, so the fill rounds for bins left empty (most ~300-shingle documents leave a
 *   few of 128 empty) hash each element once per round instead of twice,
 * - sorts with one bucket pass on the top bits (histogram taken in the same pass) and an insertion
 *   pass that also drops repeats: on uniformly distributed hashes the buckets hold a few values each,
 *   which beats a four-digit radix sort on a few hundred values. A bucket that is too full (heavy
 *   repetition, or crafted input) sends the document to the radix sort instead, so the worst case
 *   stays O(n).
 * Classic MinHash signs the finished set with the reference signer.
 * @module
 */
import type { Symbolizer } from '../text/symbolizer.js';
import { toSortedSet } from '../text/fingerprintSet.js';
import { ophFillRounds, ophParams, type MinHasher } from './minhash.js';
import { fingerprintsFromSymbols } from './kernels.js';
import { ROLL_BASE, rollPower } from '../text/symbols.js';
import { fmix32 } from '../hash/mix.js';

/** The sketch of one document: what the online index keeps and searches with. Both arrays are fresh (owned by the caller). */
export interface DocSketch {
  /** Sorted unique fingerprints (empty for a text without shingles). */
  set: Uint32Array;
  /** The signature, or null for a text without shingles. */
  sig: Uint32Array | null;
}

const EMPTY = 0xffffffff;
/** Slots per sort bucket (2^BUCKET_BITS); a fuller bucket sends the document to the radix sort. */
const BUCKET_BITS = 4;
const BUCKET = 1 << BUCKET_BITS;
/** At most 2^MAX_BITS sort buckets (1 MiB of slots): longer documents mostly take the radix sort. */
const MAX_BITS = 14;

/**
 * Writes the distinct values of sort buckets 0 .. `nb` − 1 to `u` in ascending order (bucket b holds
 * `counts[b]` values at `buckets[b·BUCKET ..]`, sorted here in place by insertion: a few values
 * each) and returns how many there are.
 */
function drainBuckets(counts: Int32Array, buckets: Uint32Array, nb: number, u: Uint32Array): number {
  let n = 0;
  for (let b = 0; b < nb; b++) {
    const c = counts[b]!;
    if (c === 0) continue;
    const base = b << BUCKET_BITS;
    if (c === 1) {
      u[n++] = buckets[base]!;
      continue;
    }
    const end = base + c;
    for (let i = base + 1; i < end; i++) {
      const v = buckets[i]!;
      let q = i - 1;
      while (q >= base && buckets[q]! > v) {
        buckets[q + 1] = buckets[q]!;
        q--;
      }
      buckets[q + 1] = v;
    }
    let prev = -1;
    for (let i = base; i < end; i++) {
      const v = buckets[i]!;
      if (v !== prev) u[n++] = prev = v;
    }
  }
  return n;
}

/**
 * The fused text → (set, signature) function for character shingles without multiset, over
 * `symbolizer` (whose normalization and shingle seed define the set) and `hasher`. The returned
 * function is not re-entrant: it reuses scratch buffers (and the symbolizer's).
 *
 * Why this function is long: the returned closure is the online index's per-document hot path, and
 * its state lives in the closure's constants and buffers. Split into a class with the rolling loop
 * in a method (fields read into locals once per document), the same 30,000 generated texts took
 * 1,455–1,668 ms against 1,166–1,257 ms (best of 7, alternated twice, quiet machine, 2026-11-30).
 */
export function createFusedSketch(symbolizer: Symbolizer, k: number, hasher: MinHasher): (text: string) => DocSketch {
  const numPerm = hasher.numPerm;
  const oph = hasher.method === 'oph';
  const { pre } = ophParams(hasher.seed);
  // Power-of-two numPerm ≥ 2: the bin ⌊z·numPerm / 2^32⌋ is z >>> shift, the same integer.
  const shift = numPerm >= 2 && (numPerm & (numPerm - 1)) === 0 ? 32 - Math.log2(numPerm) : 0;
  const scale = numPerm / 4294967296;
  const bk = rollPower(k);
  let fps = new Uint32Array(4096);
  let zs = new Uint32Array(4096);
  let uniq = new Uint32Array(4096);
  const one = new Uint32Array(1);
  const counts = new Int32Array(1 << MAX_BITS);
  const buckets = new Uint32Array((1 << MAX_BITS) << BUCKET_BITS);

  return (text) => {
    const { syms, count } = symbolizer.symbols(text);
    if (count === 0) return { set: new Uint32Array(0), sig: null };
    if (zs.length < count + 1) zs = new Uint32Array(Math.max(count + 1, zs.length * 2));
    const m = count <= k ? 1 : count - k + 1;
    // Buckets of BUCKET slots on the top `bits` bits of the fingerprint, about two values per
    // bucket: the fingerprints go straight to their bucket in the pass that computes them.
    const bits = Math.min(MAX_BITS, Math.max(1, 31 - Math.clz32(m) - 1));
    const nb = 1 << bits;
    const hs = 32 - bits;
    counts.fill(0, 0, nb);
    const sig = new Uint32Array(numPerm);
    if (oph) sig.fill(EMPTY);
    let crowded = false;
    if (count <= k) {
      fingerprintsFromSymbols(syms, count, k, one);
      const f = one[0]!;
      counts[f >>> hs] = 1;
      buckets[(f >>> hs) << BUCKET_BITS] = f;
      if (oph) {
        const z = fmix32((f ^ pre) >>> 0);
        zs[0] = z;
        sig[(z * scale) | 0] = z;
      }
    } else {
      // Window k-1 enters with no symbol leaving: one extra step before the rolling loop.
      let h = 0;
      for (let i = 0; i < k; i++) h = (Math.imul(h, ROLL_BASE) + syms[i]!) | 0;
      for (let i = k, j = 0;; i++, j++) {
        let f = h ^ (h >>> 16);
        f = Math.imul(f, 0x85ebca6b);
        f ^= f >>> 13;
        f = Math.imul(f, 0xc2b2ae35);
        f = (f ^ (f >>> 16)) >>> 0;
        const b = f >>> hs;
        const c = counts[b]!;
        if (c === BUCKET) crowded = true;
        else {
          buckets[(b << BUCKET_BITS) + c] = f;
          counts[b] = c + 1;
        }
        if (oph) {
          let z = f ^ pre;
          z ^= z >>> 16;
          z = Math.imul(z, 0x85ebca6b);
          z ^= z >>> 13;
          z = Math.imul(z, 0xc2b2ae35);
          z = (z ^ (z >>> 16)) >>> 0;
          zs[j] = z;
          const bin = shift ? z >>> shift : (z * scale) | 0;
          if (z < sig[bin]!) sig[bin] = z;
        }
        if (i === count) break;
        h = (Math.imul(h, ROLL_BASE) + syms[i]! - Math.imul(syms[i - k]!, bk)) | 0;
      }
    }
    let set: Uint32Array;
    if (crowded) {
      // Heavy repetition, a huge document or crafted input: the radix sort, O(n) whatever the values.
      if (fps.length < m) fps = new Uint32Array(Math.max(m, fps.length * 2));
      fingerprintsFromSymbols(syms, count, k, fps);
      set = toSortedSet(fps.subarray(0, m)).slice();
    } else {
      // Buckets in order; each sorted by insertion (a few values), repeats dropped.
      const u = uniq.length >= m ? uniq : (uniq = new Uint32Array(Math.max(m, uniq.length * 2)));
      const n = drainBuckets(counts, buckets, nb, u);
      set = u.slice(0, n);
    }
    if (!oph) return { set, sig: hasher.sign(set) };
    let empty = 0;
    for (let i = 0; i < numPerm; i++) if (sig[i] === EMPTY) empty++;
    if (empty > 0) {
      ophFillRounds(zs, m, sig, empty);
    }
    return { set, sig };
  };
}
