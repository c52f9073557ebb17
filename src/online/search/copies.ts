/**
 * Copies in the answers of `topK`: documents the index cannot tell apart count once. Two indexed
 * documents are copies when their records hold the same fingerprint set (verify `exact`: the same
 * text after normalization and shingling) or, with verify `estimate`, the same signature. Copies
 * score the same against any query, so the k most similar *distinct* texts are ranked once each,
 * and each hit lists its copies. The hit is the copy with the smallest id (the stores keep no order
 * of insertion; an online cluster is named by its smallest member id the same way).
 * @module
 */
import { recordSketchBytes, type SetOfText } from '../records/record.js';

/**
 * What two records must share to be copies: their encoded fingerprint set and signature, read
 * without decoding them (the encoding is canonical), as a string key. A record that keeps its text
 * instead of its set (setSource `text`) has its set recomputed by `setOfText` and encoded the same way.
 */
export function copyKey(record: Uint8Array, setOfText?: SetOfText): string {
  const { kinds, bytes } = recordSketchBytes(record, 'record', setOfText);
  return String.fromCharCode(kinds) + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** A ranked candidate as grouping needs it: its id, score and record. */
export interface RankedCandidate {
  m: { id: string; similarity: number };
  record: Uint8Array;
}

/** One distinct text of a topK answer: its first copy (the hit) and the others, by id. */
export interface CopyGroup<T extends RankedCandidate> {
  hit: T;
  copies: T[];
}

/**
 * The first `k` distinct texts of candidates ranked best first (ties by id), each with its copies.
 * Copies have equal scores, so a group's members lie in one run of equal similarity: keys are
 * compared only within a run, and only for runs with two or more candidates.
 */
export function groupCopies<T extends RankedCandidate>(ranked: readonly T[], k: number, setOfText?: SetOfText): CopyGroup<T>[] {
  const groups: CopyGroup<T>[] = [];
  let i = 0;
  while (i < ranked.length) {
    let j = i + 1;
    while (j < ranked.length && ranked[j]!.m.similarity === ranked[i]!.m.similarity) j++;
    if (groups.length >= k) break;
    if (j - i === 1) groups.push({ hit: ranked[i]!, copies: [] });
    else {
      // The run's groups in order of their first (smallest) id; past k, only copies of kept groups.
      const byKey = new Map<string, CopyGroup<T>>();
      for (let x = i; x < j; x++) {
        const key = copyKey(ranked[x]!.record, setOfText);
        const g = byKey.get(key);
        if (g) g.copies.push(ranked[x]!);
        else if (groups.length < k) {
          const ng = { hit: ranked[x]!, copies: [] };
          byKey.set(key, ng);
          groups.push(ng);
        }
      }
    }
    i = j;
  }
  return groups;
}
