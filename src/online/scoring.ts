/**
 * Scoring candidates against a query document in the online index: exact Jaccard on the stored
 * fingerprint sets (verify `exact`) or the MinHash estimate on stored signatures (`estimate`),
 * the order of matches, and their metadata (decoded for returned matches only).
 * @module
 */
import { estimateJaccard, type MinHasher } from '../sketch/minhash.js';
import { jaccard, jaccardAtLeast } from '../similarity/jaccard.js';
import type { StoredDoc } from '../store/types.js';
import { ProbeTable, probeJaccardAtLeast } from '../similarity/probeSet.js';
import { screenOf } from '../similarity/setScreen.js';
import { readRecordMeta, readRecordSketch, recordSetText } from './records/record.js';
import type { TextSets } from './pipeline.js';
import type { IndexCounters, Match, OnlineVerify, Prepared } from './types.js';

/** Best first: higher similarity, then smaller id. */
export function byScore(a: Match, b: Match): number {
  return b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Adds a record's metadata to a match, when the record has some. */
export function withMeta(m: Match, record: Uint8Array): Match {
  // Metadata is decoded only for matches, never for rejected candidates; byte 1 holds the flags (REC_META = 4).
  if (record.length > 1 && record[1]! & 4) {
    const meta = readRecordMeta(record, `record of "${m.id}"`);
    if (meta !== undefined) m.meta = meta;
  }
  return m;
}

/** A scored candidate: its match (estimate and metadata not filled in yet) and its record. */
export interface Scored {
  m: Match;
  record: Uint8Array;
}

/** Options of {@link Scorer.score}. */
export interface ScoreOptions {
  /** The lowest score kept (≤ 0: every candidate, as topK wants). */
  min: number;
  /** Ids to leave out (a document's own, for its duplicates). */
  skip?: (id: string) => boolean;
  /** At most this many, best first (default all). */
  limit?: number;
  /** Whether the index's candidate and verified counters count them (default true). */
  counted?: boolean;
}

/** Scores candidates; one per index (it reuses a scratch buffer, so it is not re-entrant). */
export class Scorer {
  private scratch = new Uint32Array(4096);

  constructor(
    private readonly verify: OnlineVerify,
    private readonly hasher: MinHasher,
    private readonly counters: IndexCounters,
    /** The index's shingling, for records that keep their text instead of their set (setSource `text`). */
    private readonly texts: TextSets,
  ) {}

  /** The query's set, for probing the unsorted sets of records that keep their text (loaded once per {@link Scorer.rank}). */
  private readonly probe = new ProbeTable({ wasm: false });

  /**
   * Scores candidates against a prepared document; keeps those scoring at least `o.min` (`min` ≤ 0
   * keeps every candidate: topK), best first, at most `o.limit`, skipping ids `o.skip` accepts.
   * `o.counted` false leaves the candidate and verified counters alone (the index's own work).
   */
  score(p: Prepared, cands: StoredDoc[], o: ScoreOptions): Match[] {
    const { min, skip, limit = Infinity, counted = true } = o;
    const kept = this.rank(p, cands, { min, skip, counted });
    if (kept.length > limit) kept.length = limit;
    // Matches returned (topK keeps every candidate up to k: counting before the cut counted candidates).
    if (counted) this.counters.verified += kept.length;
    return this.finish(p, kept);
  }

  /**
   * The candidates scoring at least `min`, best first, with their records, without their estimates
   * and metadata (see {@link Scorer.finish}). Counts the candidates when `counted`.
   */
  rank(p: Prepared, cands: StoredDoc[], o: { min: number; skip?: ((id: string) => boolean) | undefined; counted?: boolean }): Scored[] {
    const { min, skip, counted = true } = o;
    if (!p.sig) return [];
    const exact = this.verify === 'exact';
    if (counted) this.counters.candidates += cands.length;
    const kept: Scored[] = [];
    let probed = false;
    for (const c of cands) {
      if (skip?.(c.id)) continue;
      const text = exact ? recordSetText(c.record) : undefined;
      if (text !== undefined) {
        // A record that keeps its text: its set unsorted, probed against the query's (the same
        // |A ∩ B|, so the same Jaccard value as the merge of sorted sets, at less than half the cost).
        // An add that keeps its own text has no sorted set yet (pipeline.ts, lazySketch): load it unsorted too.
        if (!probed) {
          if (p.text !== undefined) this.texts.distinct(p.text, this.probe);
          else this.probe.load(p.set);
        }
        probed = true;
        const similarity = probeJaccardAtLeast(this.probe, this.texts.distinct(text), min);
        if (similarity < 0 || similarity < min) continue;
        kept.push({ m: { id: c.id, similarity, estimate: NaN }, record: c.record });
        continue;
      }
      const r = readRecordSketch(c.record, this.scratch);
      if (r.set && r.set.length > this.scratch.length) this.scratch = new Uint32Array(r.set.length * 2);
      let similarity: number;
      let estimate = NaN;
      if (exact) {
        if (!r.set) continue;
        similarity = min > 0 ? jaccardAtLeast(p.set, r.set, min) : jaccard(p.set, r.set);
        if (similarity < 0 || similarity < min) continue;
      } else {
        if (!r.signature) continue;
        estimate = estimateJaccard(p.sig, r.signature);
        if (estimate < min) continue;
        similarity = estimate;
      }
      kept.push({ m: { id: c.id, similarity, estimate }, record: c.record });
    }
    kept.sort((a, b) => byScore(a.m, b.m));
    return kept;
  }

  /**
   * The screen (src/similarity/setScreen.ts) of the set a stored record is verified with: its
   * stored set, or the distinct set of its stored text; undefined for a record with neither.
   */
  screenOfRecord(record: Uint8Array): Uint8Array | undefined {
    const text = recordSetText(record);
    if (text !== undefined) return screenOf(this.texts.distinct(text));
    const { set } = readRecordSketch(record, undefined);
    return set ? screenOf(set) : undefined;
  }

  /** The matches of ranked candidates: estimates (one signature each, with verify exact) and metadata added. */
  finish(p: Prepared, kept: readonly Scored[]): Match[] {
    const exact = this.verify === 'exact';
    // Copies of one text (a re-posted ad) share their estimate: each distinct stored text is signed once.
    const byText = new Map<string, number>();
    for (const k of kept) {
      if (exact && p.sig) {
        const text = recordSetText(k.record);
        if (text !== undefined) k.m.estimate = this.textEstimate(p.sig, text, byText);
        else {
          const r = readRecordSketch(k.record, this.scratch);
          const sig = r.set ? this.hasher.sign(r.set) : null;
          k.m.estimate = sig ? estimateJaccard(p.sig, sig) : 0;
        }
      }
      withMeta(k.m, k.record);
    }
    return kept.map((k) => k.m);
  }

  /** The estimate of `sig` against a stored text's signature, from `seen` when that text was signed before. */
  private textEstimate(sig: Uint32Array, text: string, seen: Map<string, number>): number {
    let e = seen.get(text);
    if (e === undefined) {
      const s = this.texts.sign(text);
      e = s ? estimateJaccard(sig, s) : 0;
      seen.set(text, e);
    }
    return e;
  }
}
