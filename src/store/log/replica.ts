/**
 * The in-memory band table a posting log is folded into (Redis log layout, file store). It reuses
 * the memory store's typed-array table; each document's "record" there is a fixed number of bytes
 * the store chooses (`extraBytes`: none for Redis, where the record lives on disk for the file
 * store), and no keys: a replacement or a removal unlinks the postings by their links, and a
 * document's keys are read from the chains ({@link LogReplica.keysOf}). Why: 8 bytes per key per
 * document, 256 B at 32 keys, were most of the table's records.
 * @module
 */
import { MemoryStore } from '../memory/store.js';
import type { StoreManifest } from '../types.js';
import type { LogDoc, LogEntry } from './entry.js';

const NONE = new Uint8Array(0);

/** A document to fold: a log entry's document, with what the store keeps beside its keys. */
export interface ReplicaDoc extends LogDoc {
  /** What the table keeps for the document: at least `extraBytes` bytes (file store: where the record is, then a screen). */
  extra?: Uint8Array;
  /** When the document expires (ms since the epoch), for the table's expiry index. */
  expiresAt?: number;
}

/** A log entry whose documents carry what the table keeps beside their keys. */
export interface ReplicaEntry extends LogEntry {
  docs: ReplicaDoc[];
}

/** The in-memory band table of one process, folded from a log. */
export class LogReplica {
  /** Entries folded so far (the next entry to read is at this list index). */
  applied = 0;

  private constructor(
    /** Bytes kept before each document's keys. */
    readonly extraBytes: number,
    /** The table. */
    readonly table: MemoryStore,
  ) {}

  /** Creates an empty replica for documents of `keysPerDoc` keys, keeping `extraBytes` per document beside the keys. */
  static async create(manifest: StoreManifest, extraBytes = 0): Promise<LogReplica> {
    const table = new MemoryStore();
    await table.open(manifest);
    return new LogReplica(extraBytes, table);
  }

  /** A replica over a table restored from a checkpoint, which had folded `applied` entries. */
  static restored(table: MemoryStore, extraBytes: number, applied: number): LogReplica {
    const r = new LogReplica(extraBytes, table);
    r.applied = applied;
    return r;
  }

  /** Folds one entry into the table. */
  async apply(e: ReplicaEntry): Promise<void> {
    if (e.op === 'remove') {
      for (const d of e.docs) await this.table.remove(d.id);
      return;
    }
    // Ids are unique within one entry (a batch holds each id once).
    await this.table.put(
      e.docs.map((d) => ({
        id: d.id,
        record: this.extraBytes === 0 ? NONE : d.extra!,
        keys: d.keys ?? new Float64Array(0),
        ...(d.expiresAt === undefined ? {} : { expiresAt: d.expiresAt }),
      })),
    );
  }

  /** Throws StoreFullError unless the table can take `docs` (before anything is written: src/store/memory/store.ts, checkRoom). */
  checkRoom(docs: { id: string; keys: Float64Array; extra?: number }[]): void {
    this.table.checkRoom(docs.map((d) => ({ id: d.id, bytes: d.extra ?? this.extraBytes, keys: d.keys.length })));
  }

  /** The keys a document is indexed under here (read from the chains), or null. */
  keysOf(id: string): Float64Array | null {
    return this.table.keysOf(id);
  }

  /** The first `extraBytes` bytes kept for a document, from a table record (a view). */
  extraIn(record: Uint8Array): Uint8Array {
    return record.subarray(0, this.extraBytes);
  }
}
