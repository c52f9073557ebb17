/**
 * The storage interface of the online index. Stores only persist and look up: records by id and
 * document ids by band key. Candidate search and exact verification live in NearDupIndex, once.
 * @module
 */

import type { ClusterState } from './clusterState.js';

/** A document as a store returns it: its id and its encoded record (docs/formats.md). */
export interface StoredDoc {
  /** Document id. */
  id: string;
  /** Encoded record. Treat as read-only. */
  record: Uint8Array;
}

/** One write: a new or replaced document with its band keys. */
export interface PutEntry {
  /** Document id. */
  id: string;
  /** Encoded record. */
  record: Uint8Array;
  /** Its band keys (53-bit integers, see docs/formats.md); empty for a document without shingles. */
  keys: Float64Array;
  /** When the id is already stored: the keys of the stored version, to unlink. */
  oldKeys?: Float64Array;
  /**
   * When the document expires, in ms since the epoch (the record holds it too): the store files the
   * id in its expiry index. Absent: never; a replaced version's expiry is dropped.
   */
  expiresAt?: number;
  /**
   * The screen of the document's fingerprint set (src/similarity/setScreen.ts), given to stores
   * that keep screens ({@link NearDupStore.screens}) and ignored by the others.
   */
  screen?: Uint8Array;
}

/** What a lookup screens its candidates with ({@link NearDupStore.lookup}, for stores that keep {@link NearDupStore.screens}). */
export interface CandidateScreen {
  /**
   * Tests a candidate's screen against the query of list `list`: false rejects the candidate before
   * its record is read. Only a candidate that verification would reject may be rejected.
   */
  admits(list: number, screen: Uint8Array): boolean;
  /**
   * The screen of a candidate's record, for a candidate the store keeps none for (a file store's
   * documents folded from its log after a crash), which the store keeps from then on; undefined
   * when the record gives none. It must be the screen of the set verification reads from that record.
   */
  screenOf?(record: Uint8Array): Uint8Array | undefined;
}

/** One removal: a document id and the keys it is stored under. */
export interface RemoveEntry {
  /** Document id. */
  id: string;
  /** Its band keys, as given to {@link NearDupStore.put}. */
  keys: Float64Array;
}

/** Parameters a store must hold and check, so a reopened store is read with the same settings. */
export interface StoreManifest {
  /** Band keys per document (all documents with shingles have exactly this many). */
  keysPerDoc: number;
  /** The full index manifest as JSON-serializable data. */
  [k: string]: unknown;
}

/** What {@link NearDupStore.compact} did (`neardup index compact` prints it). */
export interface StoreCompaction {
  /** Log entries before (the rewritten part plus those appended meanwhile). */
  entriesBefore: number;
  /** Log entries after. */
  entriesAfter: number;
  /** Live documents written into the rewritten part. */
  documents: number;
  /** Bytes of the rewritten part before. */
  bytesBefore: number;
  /** Bytes of the rewritten part after. */
  bytesAfter: number;
}

/** A local file a store writes (see {@link NearDupStore.localFiles}). */
export interface StoreFile {
  /** The path as the store was given it. */
  path: string;
  /** A directory the store owns: every file in it is the store's. */
  dir?: boolean;
}

/**
 * A persistence backend. All methods may be called concurrently; a write resolves only once it is
 * durable for that store (committed transaction for SQLite, acknowledged by Redis).
 */
export interface NearDupStore {
  /** `memory`, `sqlite`, `redis` or `postgres`. */
  readonly kind: string;
  /**
   * Opens the store for an index with `manifest`. A fresh store records it and returns null; an
   * existing one returns the manifest it was created with (the index checks compatibility).
   */
  open(manifest: StoreManifest): Promise<StoreManifest | null>;
  /**
   * Optional: the local files the store writes (a file store's directory, a SQLite database and its
   * journals), so that no output of the index is written over them. Stores on a server have none.
   */
  localFiles?(): StoreFile[];
  /**
   * For each key list, the distinct stored documents that have at least one of the keys, at most
   * `limit` of them per list. With `now` (ms since the epoch), documents whose expiry is at or before
   * `now` are left out before the limit is applied (through the expiry index), so that expired but
   * unpurged documents never take the places of live ones.
   */
  lookup(queries: Float64Array[], limit: number, now?: number, screen?: CandidateScreen): Promise<StoredDoc[][]>;
  /**
   * True when the store keeps each document's {@link PutEntry.screen} beside its keys, and `lookup`
   * tests the kept screens of the candidates it found (at most `limit` per list, as without a screen)
   * with `screen` before reading their records. Stores without it ignore both.
   */
  readonly screens?: boolean;
  /** Inserts or replaces documents, atomically per document. */
  put(entries: PutEntry[]): Promise<void>;
  /** Records by id (null when absent). */
  get(ids: string[]): Promise<(Uint8Array | null)[]>;
  /** Removes a document and its keys; false when absent. */
  remove(id: string, keys: Float64Array): Promise<boolean>;
  /**
   * Removes documents and their keys in one write (one transaction, statement, MULTI or pipeline,
   * not one round trip per document); for each entry, false when it was absent (or repeated).
   */
  removeMany(entries: RemoveEntry[]): Promise<boolean[]>;
  /** Number of stored documents (expired ones not yet purged included). */
  size(): Promise<number>;
  /**
   * Up to `limit` ids whose expiry is at or before `now` (ms since the epoch), earliest first as
   * far as the store's expiry index keeps them in order; found through that index, not by a scan.
   * Removing a document (remove, removeMany, put without `expiresAt`) drops it from the index.
   */
  expiredIds(now: number, limit: number): Promise<string[]>;
  /** How many stored documents have an expiry at or before `now` (from the expiry index). */
  countExpired(now: number): Promise<number>;
  /**
   * Optional: gives the space freed by removals back (SQLite: `PRAGMA incremental_vacuum` on a
   * file with incremental auto-vacuum); called after a purge of expired documents.
   */
  reclaim?(): Promise<void>;
  /** Every stored document, in no particular order. */
  scan(): AsyncIterable<StoredDoc>;
  /** Store-specific counters for /v1/stats (bytes, buckets, …). */
  stats(): Promise<Record<string, number | string>>;
  /**
   * Optional store-level consistency checks beyond what the index can see through this interface
   * (orphaned postings, SQLite integrity). Errors are inconsistencies; warnings are harmless leftovers.
   */
  checkStore?(): Promise<{ errors: string[]; warnings: string[] }>;
  /**
   * Optional: for each key, whether the document `id` is in its posting list (used by `index check`;
   * without it the check looks each key up, which fetches whole buckets).
   */
  hasPostings?(id: string, keys: Float64Array): Promise<boolean[]>;
  /**
   * Optional: where the index keeps its clusters (src/store/clusterState.ts), shared by every
   * process using this store. Without it the index keeps them in its own memory.
   */
  clusterState?(): ClusterState;
  /**
   * Optional: runs `fn` (the index's lookups, then its write) while no other process writes to the
   * store, so that documents added at once by several processes see each other as if added one
   * after the other. Stores shared by several processes implement it (SQLite: BEGIN IMMEDIATE;
   * Redis: a lock key); the memory store has one writer and does not need it.
   */
  exclusive?<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Optional: rewrites the store's write log without replaced and removed versions, while it is in
   * use (`neardup index compact`; the Redis store in the log layout). A store of a kind that has a
   * log but whose configuration has none (Redis, sets layout) throws a RangeError saying so.
   */
  compact?(): Promise<StoreCompaction>;
  /**
   * Optional: a consistent copy of the store, taken while it is in use, written to the new file
   * `dest` (`neardup index backup`; the SQLite store, with SQLite's online backup API).
   */
  backup?(dest: string): Promise<void>;
  /**
   * Optional: whether the store holds an index already, without creating anything (stores on a
   * server: Redis, PostgreSQL; commands that read a store refuse one that holds none).
   */
  exists?(): Promise<boolean>;
  /** Releases connections and file handles. Writes already acknowledged are kept. */
  close(): Promise<void>;
}
