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
import { jaccard } from '../similarity/jaccard.js';
import { maxContainment } from '../similarity/containment.js';
import type { SetMeasure } from '../similarity/prefixJoin.js';

/** The similarity of two fingerprint sets under `measure`. */
export function setSimilarity(a: Uint32Array, b: Uint32Array, measure: SetMeasure = 'jaccard'): number {
  return measure === 'containment' ? maxContainment(a, b).score : jaccard(a, b);
}

interface KeptState {
  set?: Uint32Array;
  /** Members not yet given their similarity. */
  remaining: number;
  pending: [number, Uint32Array][];
}

/**
 * Computes the similarity of listed documents to their kept members from texts fed in document
 * order. {@link wants} says which documents' texts to feed; `onSimilarity` gets each listed
 * document's value once both texts were seen.
 */
export class KeptSimilarity {
  private readonly kept = new Map<number, KeptState>();
  private readonly keptOf = new Map<number, number>();
  private readonly setOf: (text: string) => Uint32Array;

  constructor(shingle: ShingleOptions | undefined, private readonly measure: SetMeasure | undefined, private readonly onSimilarity: (doc: number, similarity: number) => void) {
    const sh = createShingler(shingle);
    this.setOf = (t) => sh.set(t);
  }

  /** Asks for document `doc`'s similarity to document `kept` (doc ≠ kept). */
  add(doc: number, kept: number): void {
    this.keptOf.set(doc, kept);
    let k = this.kept.get(kept);
    if (!k) this.kept.set(kept, (k = { remaining: 0, pending: [] }));
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

  private done(keptDoc: number, k: KeptState, doc: number, set: Uint32Array): void {
    this.onSimilarity(doc, setSimilarity(set, k.set!, this.measure));
    this.keptOf.delete(doc);
    if (--k.remaining === 0) this.kept.delete(keptDoc);
  }
}
