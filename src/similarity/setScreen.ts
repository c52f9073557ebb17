/**
 * A set's screen: a few bytes that bound from above, exactly, the Jaccard similarity of the set
 * with any other set's, so that a candidate that cannot reach a threshold is rejected without its
 * set (for the file store: without reading its record from the disk, docs/stores.md).
 *
 * The fingerprints are counted in 2^L buckets by their top L bits. Two sets share at most
 * min(a_i, b_i) fingerprints in bucket i, so |A ∩ B| ≤ U = Σ min(a_i, b_i) (and ≤ min(|A|, |B|)),
 * and J = I / (|A| + |B| − I) ≤ U / (|A| + |B| − U). Counts are kept in 4 bits above the set's
 * smallest count (its base), rounded up after a shift: stored c' = ⌈(c − base) / 2^s⌉, read back as
 * base + c' · 2^s ≥ c, so the bound stays an upper bound. L grows with the set, about 4
 * fingerprints a bucket, from 8 buckets up to 128 (72 bytes): two unrelated sets of n fingerprints
 * differ by about √(4nM/π) over M buckets, which must pass 0.22·n for a bound under 0.8 (M ≥ 0.04·n;
 * 64 buckets left two thirds of the unrelated candidates of 1,400 fingerprints admitted, 128 an eighth).
 * Two sets of other levels are compared at the coarser one (a bucket's count is the sum of its
 * two halves').
 * Why exact matters: the screen only spares work; a candidate it lets through is verified as before,
 * and one it rejects would have failed verification (the same float division, see {@link ScreenQuery.bound}).
 *   u8 L · u8 s · u32 |A| · u16 base (little-endian) · 2^L nibbles (bucket 2j in the low nibble of byte j)
 * @module
 */

/** Bytes of a screen at level `L`. */
const bytesAt = (L: number) => HEAD + (1 << (L - 1));
/** Bytes before the nibbles. */
const HEAD = 8;
/** The fewest and most bucket bits. */
const MIN_LEVEL = 3;
const MAX_LEVEL = 7;
/** Fingerprints per bucket the level aims at. */
const PER_BUCKET = 4;
/** The most bytes a screen takes. */
export const MAX_SCREEN_BYTES = bytesAt(MAX_LEVEL);

const counts = new Uint32Array(1 << MAX_LEVEL);

/** The screen of a set of distinct 32-bit fingerprints (sorted or not). */
export function screenOf(set: Uint32Array): Uint8Array {
  const n = set.length;
  let L = MIN_LEVEL;
  while (L < MAX_LEVEL && n > PER_BUCKET << L) L++;
  const B = 1 << L;
  counts.fill(0, 0, B);
  const down = 32 - L;
  for (let i = 0; i < n; i++) counts[set[i]! >>> down]!++;
  let most = 0;
  let least = n;
  for (let j = 0; j < B; j++) {
    if (counts[j]! > most) most = counts[j]!;
    if (counts[j]! < least) least = counts[j]!;
  }
  const base = Math.min(least, 0xffff);
  let s = 0;
  while (Math.ceil((most - base) / 2 ** s) > 15) s++;
  const out = new Uint8Array(bytesAt(L));
  const v = new DataView(out.buffer);
  out[0] = L;
  out[1] = s;
  v.setUint32(2, n, true);
  v.setUint16(6, base, true);
  for (let j = 0; j < B; j++) out[HEAD + (j >> 1)]! |= Math.ceil((counts[j]! - base) / 2 ** s) << ((j & 1) * 4);
  return out;
}

/** Whether `b` is a screen this module wrote (its level, shift and length hold together). */
export function isScreen(b: Uint8Array): boolean {
  return b.length >= HEAD && b[0]! >= MIN_LEVEL && b[0]! <= MAX_LEVEL && b[1]! < 32 && b.length === bytesAt(b[0]!);
}

/** The set size a screen was made of. */
function sizeOf(b: Uint8Array): number {
  return (b[2]! | (b[3]! << 8) | (b[4]! << 16) | (b[5]! << 24)) >>> 0;
}

/** The upper bounds of a screen's bucket counts at level `L` (at most its own): `into[0 .. 2^L)`. */
function boundsAt(b: Uint8Array, L: number, into: Float64Array): void {
  const own = b[0]!;
  const scale = 2 ** b[1]!;
  const base = b[6]! | (b[7]! << 8);
  const shift = own - L;
  into.fill(0, 0, 1 << L);
  for (let j = 0, B = 1 << own; j < B; j++) into[j >> shift]! += base + ((b[HEAD + (j >> 1)]! >> ((j & 1) * 4)) & 15) * scale;
}

/**
 * A query set's screen, against which candidates' screens are tested. Not re-entrant (scratch
 * arrays); one per query while its candidates are screened.
 */
export class ScreenQuery {
  private readonly n: number;
  private readonly level: number;
  /** The query's bucket bounds at each level up to its own (made when first needed). */
  private readonly mine: (Float64Array | undefined)[] = [];
  private readonly theirs = new Float64Array(1 << MAX_LEVEL);

  /** `screen`: the query set's ({@link screenOf}); `min`: the similarity a candidate must reach. */
  constructor(
    private readonly screen: Uint8Array,
    readonly min: number,
  ) {
    this.n = sizeOf(screen);
    this.level = screen[0]!;
  }

  /**
   * The upper bound of the Jaccard similarity of the query's set and the set `cand` screens:
   * U / (|A| + |B| − U), the division verification makes with |A ∩ B| in place of U (1 when both are empty).
   */
  bound(cand: Uint8Array): number {
    const na = this.n;
    const nb = sizeOf(cand);
    const L = Math.min(this.level, cand[0]!);
    const mine = (this.mine[L] ??= this.boundsOfMine(L));
    boundsAt(cand, L, this.theirs);
    let u = 0;
    for (let j = 0, B = 1 << L; j < B; j++) u += Math.min(mine[j]!, this.theirs[j]!);
    u = Math.min(u, na, nb);
    const union = na + nb - u;
    return union > 0 ? u / union : 1;
  }

  /** False only when the set `cand` screens cannot reach {@link ScreenQuery.min} with the query's (`cand` not a screen: true). */
  admits(cand: Uint8Array): boolean {
    if (!isScreen(cand)) return true;
    // The sizes alone first: J ≤ min(|A|, |B|) / max(|A|, |B|).
    const na = this.n;
    const nb = sizeOf(cand);
    const lo = Math.min(na, nb);
    const hi = Math.max(na, nb);
    if (hi > 0 && lo / hi < this.min) return false;
    return !(this.bound(cand) < this.min);
  }

  private boundsOfMine(L: number): Float64Array {
    const into = new Float64Array(1 << L);
    boundsAt(this.screen, L, into);
    return into;
  }
}

/** The upper bound {@link ScreenQuery.bound} gives for the sets screened by `a` and `b`. */
export function screenBound(a: Uint8Array, b: Uint8Array): number {
  return new ScreenQuery(a, 0).bound(b);
}
