/**
 * The chain of each posting deep in a long chain of a band table, for reading a document's keys
 * from the chains (`MemoryStore.keysOf`): a posting near its chain's head finds it by walking back,
 * one deep in a chain of thousands (many copies of one text) looks it up here. Built by two walks
 * of every chain, kept until the table's next write: a bitmap of the deep postings, a rank of its
 * words, and each deep posting's key table entry in rank order, ~2 bits per posting plus 4 bytes
 * per deep one. Why not a window of postings: `index check` asks in the store's scan order, which
 * for Redis is not slot order, and a window missed at every ask would walk every chain each time.
 * @module
 */

/** The table's arrays a {@link DeepPostings} is built from. */
export interface Chains {
  tHead: Int32Array;
  next: Int32Array;
  /** Postings in use (slots · keys per slot). */
  postings: number;
}

/** Set bits of a 32-bit word. */
function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** The key table entries of the postings at least `depth` links from their chain's head. */
export class DeepPostings {
  private constructor(
    private readonly bits: Uint32Array,
    private readonly rank: Uint32Array,
    private readonly entries: Int32Array,
  ) {}

  /** Walks every chain twice (each walk cut at `postings` links: a chain that loops is a broken table, which `index check` reports). */
  static build(c: Chains, depth: number): DeepPostings {
    const words = Math.ceil(c.postings / 32);
    const bits = new Uint32Array(words);
    let deep = 0;
    walk(c, depth, (p) => {
      bits[p >>> 5]! |= 1 << (p & 31);
      deep++;
    });
    const rank = new Uint32Array(words);
    for (let w = 0, r = 0; w < words; w++) {
      rank[w] = r;
      r += popcount(bits[w]!);
    }
    const entries = new Int32Array(deep);
    const d = new DeepPostings(bits, rank, entries);
    walk(c, depth, (p, h) => (entries[d.rankOf(p)] = h));
    return d;
  }

  private rankOf(p: number): number {
    return this.rank[p >>> 5]! + popcount(this.bits[p >>> 5]! & ((1 << (p & 31)) - 1));
  }

  /** The key table entry of deep posting `p`'s chain, or -1 when `p` is not deep. */
  entryOf(p: number): number {
    if (p < 0 || p >>> 5 >= this.bits.length || !(this.bits[p >>> 5]! & (1 << (p & 31)))) return -1;
    return this.entries[this.rankOf(p)]!;
  }
}

/** Calls `fn(posting, entry)` for each posting at least `depth` links from its chain's head. */
function walk(c: Chains, depth: number, fn: (p: number, h: number) => void): void {
  const { tHead, next, postings } = c;
  for (let h = 0; h < tHead.length; h++) {
    for (let q = tHead[h]!, i = 0; q >= 0 && q < postings && i < postings; q = next[q]!, i++) if (i >= depth) fn(q, h);
  }
}
