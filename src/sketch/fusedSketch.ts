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
 */
export function createFusedSketch(symbolizer: Symbolizer, k: number, hasher: MinHasher): (text: string) => DocSketch {
  const sketcher = new FusedSketcher(symbolizer, k, hasher);
  return (text) => sketcher.sketch(text);
}

/** The scratch buffers and parameters of {@link createFusedSketch}'s function. */
class FusedSketcher {
  private readonly numPerm: number;
  private readonly oph: boolean;
  private readonly pre: number;
  /** Power-of-two numPerm ≥ 2: the bin ⌊z·numPerm / 2^32⌋ is z >>> shift, the same integer. */
  private readonly shift: number;
  private readonly scale: number;
  private readonly bk: number;
  private fps = new Uint32Array(4096);
  private zs = new Uint32Array(4096);
  private uniq = new Uint32Array(4096);
  private readonly one = new Uint32Array(1);
  private readonly counts = new Int32Array(1 << MAX_BITS);
  private readonly buckets = new Uint32Array((1 << MAX_BITS) << BUCKET_BITS);

  constructor(private readonly symbolizer: Symbolizer, private readonly k: number, private readonly hasher: MinHasher) {
    const numPerm = hasher.numPerm;
    this.numPerm = numPerm;
    this.oph = hasher.method === 'oph';
    this.pre = ophParams(hasher.seed).pre;
    this.shift = numPerm >= 2 && (numPerm & (numPerm - 1)) === 0 ? 32 - Math.log2(numPerm) : 0;
    this.scale = numPerm / 4294967296;
    this.bk = rollPower(k);
  }

  sketch(text: string): DocSketch {
    const { syms, count } = this.symbolizer.symbols(text);
    if (count === 0) return { set: new Uint32Array(0), sig: null };
    const k = this.k;
    if (this.zs.length < count + 1) this.zs = new Uint32Array(Math.max(count + 1, this.zs.length * 2));
    const m = count <= k ? 1 : count - k + 1;
    // Buckets of BUCKET slots on the top `bits` bits of the fingerprint, about two values per
    // bucket: the fingerprints go straight to their bucket in the pass that computes them.
    const bits = Math.min(MAX_BITS, Math.max(1, 31 - Math.clz32(m) - 1));
    const nb = 1 << bits;
    this.counts.fill(0, 0, nb);
    const sig = new Uint32Array(this.numPerm);
    if (this.oph) sig.fill(EMPTY);
    const crowded = count <= k ? this.whole(syms, count, 32 - bits, sig) : this.roll(syms, count, 32 - bits, sig);
    let set: Uint32Array;
    if (crowded) {
      // Heavy repetition, a huge document or crafted input: the radix sort, O(n) whatever the values.
      if (this.fps.length < m) this.fps = new Uint32Array(Math.max(m, this.fps.length * 2));
      fingerprintsFromSymbols(syms, count, k, this.fps);
      set = toSortedSet(this.fps.subarray(0, m)).slice();
    } else {
      // Buckets in order; each sorted by insertion (a few values), repeats dropped.
      const u = this.uniq.length >= m ? this.uniq : (this.uniq = new Uint32Array(Math.max(m, this.uniq.length * 2)));
      set = u.slice(0, drainBuckets(this.counts, this.buckets, nb, u));
    }
    if (!this.oph) return { set, sig: this.hasher.sign(set) };
    let empty = 0;
    for (let i = 0; i < sig.length; i++) if (sig[i] === EMPTY) empty++;
    if (empty > 0) ophFillRounds(this.zs, m, sig, empty);
    return { set, sig };
  }

  /** A text of at most k symbols: its one fingerprint to its bucket (and bin). Never crowded. */
  private whole(syms: Int32Array, count: number, hs: number, sig: Uint32Array): boolean {
    fingerprintsFromSymbols(syms, count, this.k, this.one);
    const f = this.one[0]!;
    this.counts[f >>> hs] = 1;
    this.buckets[(f >>> hs) << BUCKET_BITS] = f;
    if (this.oph) {
      const z = fmix32((f ^ this.pre) >>> 0);
      this.zs[0] = z;
      sig[(z * this.scale) | 0] = z;
    }
    return false;
  }

  /**
   * The k-gram fingerprints of `count` > k symbols rolled into their sort buckets and, for OPH,
   * premixed into `zs` and round 0 of the bins; true when a bucket overflowed (crowded).
   */
  private roll(syms: Int32Array, count: number, hs: number, sig: Uint32Array): boolean {
    const { k, bk, counts, buckets, zs, oph, pre, shift, scale } = this;
    let crowded = false;
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
    return crowded;
  }
}
