/**
 * What the online index tells its observers after each write ({@link IndexObserver}): which
 * documents were added (with the near duplicates each had among the documents already indexed, and
 * whether it replaced an earlier version) or removed. Observers run under the index's write lock,
 * in write order, and the write resolves only after they did; the index's own clusters
 * (src/online/clusters.ts) are one such observer.
 * @module
 */

/** One document of an add event. */
export interface AddedDocument {
  /** Document id. */
  id: string;
  /** Ids of its near duplicates when it was added (documents indexed before it, batch included). */
  duplicates: string[];
  /** True when the id was already indexed: the earlier version was replaced. */
  replaced: boolean;
}

/** A change to the index. */
export type IndexChange =
  | { kind: 'add'; documents: AddedDocument[] }
  /** Documents were removed (one call of `remove` or `removeMany`: one store write). */
  | { kind: 'remove'; ids: string[] }
  /** Documents were written without near-duplicate search (a snapshot was loaded). */
  | { kind: 'bulk-load' };

/** A function told about every change; the write waits for the promise it returns. */
export type IndexObserver = (change: IndexChange) => void | Promise<void>;
