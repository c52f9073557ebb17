/**
 * Screening candidates before their records are read (stores that keep screens, such as the file
 * store: `NearDupStore.screens`). Each query's screen (src/similarity/setScreen.ts) is tested
 * against each candidate's kept one; a candidate whose set cannot reach the threshold is rejected
 * unread, and counted as a candidate all the same, so the index's counters and answers are those
 * of the unscreened lookup. Only threshold searches by exact Jaccard screen: topK keeps candidates
 * below the threshold, estimates are not bounded by sets, and a metadata filter decides which
 * candidates are counted from the records themselves.
 * @module
 */
import type { CandidateScreen, NearDupStore } from '../../store/types.js';
import { ScreenQuery } from '../../similarity/setScreen.js';

/**
 * What decides whether an index's lookups screen: its store, its verification, the counter
 * rejections are counted in, and the scorer, which makes the screen of a candidate the store kept
 * none for from the set it verifies with.
 */
export interface ScreenHost {
  readonly store: Pick<NearDupStore, 'screens'>;
  readonly manifest: { readonly verify: string };
  readonly counters: { candidates: number };
  readonly scorer: { screenOfRecord(record: Uint8Array): Uint8Array | undefined };
}

/** A query document as screening sees it: its set's screen, and its metadata filter (none screens). */
export interface ScreenedQuery {
  screen?: Uint8Array | undefined;
  filter?: unknown;
}

/** The screen of lookups for `prepared` (one key list each, in order) at similarity `min`, or undefined when none applies. */
export function candidateScreen(ctx: ScreenHost, prepared: readonly ScreenedQuery[], min: number): CandidateScreen | undefined {
  if (!ctx.store.screens || ctx.manifest.verify !== 'exact' || !(min > 0)) return undefined;
  const queries: (ScreenQuery | null)[] = [];
  return {
    admits(list, screen) {
      let q = queries[list];
      if (q === undefined) {
        const p = prepared[list]!;
        q = queries[list] = p.screen && !p.filter ? new ScreenQuery(p.screen, min) : null;
      }
      if (q === null || q.admits(screen)) return true;
      ctx.counters.candidates++;
      return false;
    },
    screenOf: (record) => ctx.scorer.screenOfRecord(record),
  };
}
