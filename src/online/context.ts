/**
 * What the online index's search and write steps (src/online/queries.ts, insert.ts,
 * containmentQuery.ts) work with: the index's parts, gathered once by `NearDupIndex`.
 * @module
 */
import type { NearDupStore } from '../store/types.js';
import type { MinHasher } from '../sketch/minhash.js';
import type { KeyMaker } from './keys/keys.js';
import type { Preparer } from './preparer.js';
import type { Scorer } from './scoring.js';
import type { IndexCounters, IndexManifest } from './types.js';
import type { IndexChange } from './events.js';

/** The parts of one open index. */
export interface IndexContext {
  readonly manifest: IndexManifest;
  /** The store as searches see it: expired documents hidden (src/online/expiry.ts, liveView). */
  readonly store: NearDupStore;
  /** The store itself (writes need the stored version of a replaced document, expired or not). */
  readonly raw: NearDupStore;
  /** The index's clock, ms since the epoch. */
  now(): number;
  /** Signs stored fingerprint sets (records of verify `exact` hold no signature). */
  readonly hasher: MinHasher;
  readonly keyMaker: KeyMaker;
  readonly scorer: Scorer;
  readonly preparer: Preparer;
  /** Candidates examined per lookup at most. */
  readonly maxCandidates: number;
  readonly counters: IndexCounters;
  /** Tells the observers about a change (src/online/events.ts); the write waits for them. */
  notify(change: IndexChange): Promise<void>;
}
