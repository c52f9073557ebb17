/**
 * Each clustered document's similarity to its cluster's kept member, for the `similarity` tag and
 * the `--removed` audit. The kept member is often not a verified partner of a document (components
 * are transitive, and a keep policy may pick any member), so the similarity is computed here from
 * the two shingle sets, the same sets verification uses: exact Jaccard, or with `--measure
 * containment` the smaller set's containment in the larger. One pass over the texts in document
 * order; memory holds the kept members' sets (until their cluster is done) and the sets of members
 * met before their kept member.
 * @module
 */
import { createShingler, type ShingleOptions } from '../text/shingler.js';
import { intersectionSize64, jaccard } from '../similarity/jaccard.js';
import { maxContainment } from '../similarity/containment.js';
import type { SetMeasure } from '../similarity/prefixJoin.js';
import { createSet64 } from '../text/fingerprint64.js';

/** A sorted set of distinct fingerprints: 32-bit, or 64-bit with `--fingerprint-bits 64`. */
export type FingerprintSet = Uint32Array | BigUint64Array;

/** The similarity of two fingerprint sets of one width under `measure`. */
export function setSimilarity(a: FingerprintSet, b: FingerprintSet, measure: SetMeasure = 'jaccard'): number {
  if (a instanceof Uint32Array && b instanceof Uint32Array) return measure === 'containment' ? maxContainment(a, b).score : jaccard(a, b);
  if (!(a instanceof BigUint64Array && b instanceof BigUint64Array)) throw new TypeError('setSimilarity: sets of two widths');
  // An empty set scores 0, as in jaccard and maxContainment.
  if (a.length === 0 || b.length === 0) return 0;
  const n = intersectionSize64(a, b);
  return measure === 'containment' ? n / Math.min(a.length, b.length) : n / (a.length + b.length - n);
}

interface KeptState {
  set?: FingerprintSet;
  /** Members not yet given their similarity. */
  remaining: number;
  pending: [number, FingerprintSet][];
}

/**
 * Computes the similarity of listed documents to their kept members from texts fed in document
 * order. {@link wants} says which documents' texts to feed; `onSimilarity` gets each listed
 * document's value once both texts were seen.
 */
export class KeptSimilarity {
  private readonly kept = new Map<number, KeptState>();
  private readonly keptOf = new Map<number, number>();
  private readonly setOf: (text: string) => FingerprintSet;

  /** `bits`: the run's fingerprint width, so that a tag equals the verified pair's similarity. */
  constructor(
    shingle: ShingleOptions | undefined,
    private readonly measure: SetMeasure | undefined,
    private readonly onSimilarity: (doc: number, similarity: number) => void,
    bits: 32 | 64 = 32,
  ) {
    if (bits === 64) this.setOf = createSet64(shingle);
    else {
      const sh = createShingler(shingle);
      this.setOf = (t) => sh.set(t);
    }
  }

  /** Asks for document `doc`'s similarity to document `kept` (doc ≠ kept). */
  add(doc: number, kept: number): void {
    this.keptOf.set(doc, kept);
    let k = this.kept.get(kept);
    if (!k) this.kept.set(kept, k = { remaining: 0, pending: [] });
    k.remaining++;
  }

  /** Whether document `doc`'s text is needed. */
  wants(doc: number): boolean {
    return this.keptOf.has(doc) || this.kept.has(doc);
  }

  /** The number of similarities asked for. */
  get size(): number {
    return this.keptOf.size;
  }

  /** Feeds a wanted document's text (documents in ascending order). */
  feed(doc: number, text: string): void {
    const set = this.setOf(text);
    const own = this.kept.get(doc);
    if (own) {
      own.set = set;
      for (const [d, s] of own.pending) this.done(doc, own, d, s);
      own.pending = [];
    }
    const kept = this.keptOf.get(doc);
    if (kept === undefined) return;
    const k = this.kept.get(kept)!;
    if (k.set) this.done(kept, k, doc, set);
    else k.pending.push([doc, set]);
  }

  private done(keptDoc: number, k: KeptState, doc: number, set: FingerprintSet): void {
    this.onSimilarity(doc, setSimilarity(set, k.set!, this.measure));
    this.keptOf.delete(doc);
    if (--k.remaining === 0) this.kept.delete(keptDoc);
  }
}
