/**
 * The in-memory band table a posting log is folded into (Redis log layout, file store). It reuses
 * the memory store's typed-array table; each document's "record" there is a fixed number of bytes
 * the store chooses (`extraBytes`: none for Redis, where the record lives on disk for the file store)
 * followed by its own key list, so a replacement or a removal unlinks exactly the keys that were linked.
 * @module
 */
import { MemoryStore } from '../memory/store.js';
import type { StoreManifest } from '../types.js';
import type { LogDoc, LogEntry } from './entry.js';

/** A document to fold: a log entry's document, with what the store keeps beside its keys. */
export interface ReplicaDoc extends LogDoc {
  /** `extraBytes` bytes kept before the keys (file store: where the record is). */
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
    const ids = e.docs.map((d) => d.id);
    const old = await this.table.get(ids);
    if (e.op === 'remove') {
      for (let i = 0; i < ids.length; i++) if (old[i]) await this.table.remove(ids[i]!, this.keysIn(old[i]!));
      return;
    }
    // Ids are unique within one entry (a batch holds each id once).
    await this.table.put(
      e.docs.map((d, i) => {
        const keys = d.keys ?? new Float64Array(0);
        const o = old[i];
        return {
          id: d.id,
          record: this.tableRecord(d, keys),
          keys,
          ...(o ? { oldKeys: this.keysIn(o) } : {}),
          ...(d.expiresAt === undefined ? {} : { expiresAt: d.expiresAt }),
        };
      }),
    );
  }

  private tableRecord(d: ReplicaDoc, keys: Float64Array): Uint8Array {
    const k = new Uint8Array(keys.buffer, keys.byteOffset, keys.byteLength);
    if (this.extraBytes === 0) return k;
    const r = new Uint8Array(this.extraBytes + k.length);
    r.set(d.extra!.subarray(0, this.extraBytes));
    r.set(k, this.extraBytes);
    return r;
  }

  /** Throws StoreFullError unless the table can take `docs` (before anything is written: src/store/memory/store.ts, checkRoom). */
  checkRoom(docs: { id: string; keys: Float64Array }[]): void {
    this.table.checkRoom(docs.map((d) => ({ id: d.id, bytes: this.extraBytes + d.keys.byteLength, keys: d.keys.length })));
  }

  /** The keys a document is indexed under here, or null. */
  async keysOf(id: string): Promise<Float64Array | null> {
    const [b] = await this.table.get([id]);
    return b ? this.keysIn(b) : null;
  }

  /** The bytes kept beside the keys, from a table record (a view). */
  extraIn(record: Uint8Array): Uint8Array {
    return record.subarray(0, this.extraBytes);
  }

  /** The keys in a table record. */
  keysIn(record: Uint8Array): Float64Array {
    // A copy: the table's arena offsets are not 8-byte aligned.
    return new Float64Array(record.slice(this.extraBytes).buffer);
  }
}
