/**
 * The first step of the batch pipeline ({@link dedup}): sign each text and fold identical documents
 * into one group, so LSH and verification see each distinct document once. Rows of the signature
 * matrix are per group, not per document.
 * @module
 */
import type { TextSigner } from '../sketch/textSigner.js';
import { SignatureMatrix } from '../sketch/signatureMatrix.js';
import { ProbeTable, setHash } from '../similarity/probeSet.js';
import { murmur3Words } from '../hash/murmur3.js';
import { CopyFinder, HashIndex, type CopyGroups } from './copyGroups.js';
import type { VerifyMode } from './options.js';

/** Seed of the content hashes that find identical documents. */
const SET_SEED = 0x5e7c0b1e;

/**
 * Signatures of a corpus, one row per group of identical documents, and the groups' fingerprint
 * sets built on demand. Documents are identical when their fingerprint sets are equal (with
 * verify `exact`), or their signatures (otherwise: equal signatures give equal estimates against
 * every document).
 */
export class SignedGroups {
  /** One signature per group. */
  readonly sigs: SignatureMatrix;
  /** Indices of documents without shingles. */
  readonly empty: number[] = [];
  /** Documents added. */
  docs = 0;
  /** UTF-16 code units of text added. */
  chars = 0;
  /** Time spent building fingerprint sets, so far (ms). */
  shingleMs = 0;
  /** Time spent signing and grouping, without the sets' time (ms). */
  signMs = 0;

  /** Each group's first text: its set is built from it when needed. */
  private readonly repText: string[] = [];
  /**
   * Fingerprint sets are built only when needed (to tell apart documents with equal signatures, and
   * to verify candidates), from the group's first text: most documents never need theirs. They are
   * unsorted (no sort: compared and intersected through probe tables).
   */
  private readonly sets: (Uint32Array | undefined)[] = [];
  private readonly copies: CopyFinder;
  // Equal signatures first (cheap, from the signature alone); only documents whose signature was
  // seen before need their set, to tell exact copies from near-identical documents. Keying the
  // groups on the signature alone would chain every near-identical document under one hash.
  private readonly bySignature: HashIndex;
  private readonly bySet = new HashIndex(64);
  private setIndexedOf: Uint8Array;
  /** Equal sets: same size and every value of one found in the other (both are distinct). */
  private readonly eqTable = new ProbeTable();

  constructor(
    private readonly signer: TextSigner,
    private readonly verify: VerifyMode,
    expected: number,
  ) {
    this.sigs = new SignatureMatrix(signer.numPerm, expected);
    this.copies = new CopyFinder(expected);
    this.bySignature = new HashIndex(expected);
    this.setIndexedOf = new Uint8Array(Math.max(16, expected));
  }

  /** The fingerprint set of group `g` (built on first use, timed as shingling). */
  setOf(g: number): Uint32Array {
    let s = this.sets[g];
    if (!s) {
      const a = performance.now();
      s = this.sets[g] = this.signer.distinct(this.repText[g]!);
      this.shingleMs += performance.now() - a;
    }
    return s;
  }

  /** Signs the next document and places it in its group (a new one unless it is a copy). */
  add(text: string): void {
    const a = performance.now();
    const shingled = this.shingleMs;
    const sigs = this.sigs;
    const i = sigs.push();
    const row = sigs.row(i);
    this.repText[i] = text;
    let g = i;
    if (this.signer.signInto(text, row)) {
      sigs.present[i] = 1;
      const h = murmur3Words(row, SET_SEED);
      const c = this.bySignature.find(h, (x) => sameWords(sigs.row(x), row));
      if (c === -1) this.bySignature.insert(h, i);
      else if (this.verify !== 'exact') g = c; // equal signatures: equal estimates against every document
      else {
        this.indexSet(c);
        const own = this.setOf(i);
        const x = this.bySet.find(setHash(own, SET_SEED), (y) => this.sameSet(this.setOf(y), own));
        if (x === -1) this.indexSet(i);
        else g = x;
      }
    } else {
      sigs.present[i] = 0;
      this.empty.push(this.docs);
    }
    if (g === i) this.copies.startGroup();
    else {
      this.copies.join(g);
      sigs.count--;
      this.repText.length = i;
      this.sets.length = Math.min(this.sets.length, i);
    }
    this.signMs += performance.now() - a - (this.shingleMs - shingled);
    this.chars += text.length;
    this.docs++;
  }

  /** The groups of identical documents (call once every document is added). */
  groups(): CopyGroups {
    return this.copies.result();
  }

  private indexSet(g: number): void {
    if (g >= this.setIndexedOf.length) {
      const x = new Uint8Array(Math.max(g + 1, this.setIndexedOf.length * 2));
      x.set(this.setIndexedOf);
      this.setIndexedOf = x;
    }
    if (this.setIndexedOf[g]) return;
    this.setIndexedOf[g] = 1;
    this.bySet.insert(setHash(this.setOf(g), SET_SEED), g);
  }

  private sameSet(x: Uint32Array, y: Uint32Array): boolean {
    if (x.length !== y.length) return false;
    this.eqTable.load(x);
    return this.eqTable.countIn(y, 0) === y.length;
  }
}

/** Equal word arrays. */
function sameWords(x: Uint32Array, y: Uint32Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
