/**
 * A band table and the log it was folded from, for checkpoint tests: a checkpoint is read only
 * beside the log it was written after (the checksum of the log's last bytes), so a table written
 * to a checkpoint needs its log beside it.
 */
import { writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { LogReplica } from '../../../src/store/log/replica.js';
import { encodeFrame, type Frame } from '../../../src/store/file/frames.js';
import { LOCATOR_BYTES, replicaDocs } from '../../../src/store/file/replay.js';
import { readCheckpoint, writeCheckpoint, type CheckpointAt } from '../../../src/store/file/checkpoint.js';
import type { StoreManifest } from '../../../src/store/types.js';
import type { MemoryStore } from '../../../src/store/memory/store.js';

/** A document to put: its id, keys, record length and expiry. */
export interface LoggedDoc {
  id: string;
  keys?: Float64Array;
  recordBytes?: number;
  expiresAt?: number;
}

/** A replica whose every write is also appended to a log, as the file store's frames. */
export class LoggedTable {
  frames: Buffer[] = [];
  recordsEnd = 0;

  private constructor(readonly manifest: StoreManifest, readonly rep: LogReplica) {}

  static async create(manifest: StoreManifest): Promise<LoggedTable> {
    return new LoggedTable(manifest, await LogReplica.create(manifest, LOCATOR_BYTES));
  }

  get table(): MemoryStore {
    return this.rep.table;
  }

  /** Puts `docs` (one frame). */
  async put(docs: LoggedDoc[]): Promise<void> {
    const fd = docs.map((d) => ({ id: d.id, keys: d.keys ?? new Float64Array(0), recordBytes: d.recordBytes ?? 1, expiresAt: d.expiresAt }));
    const frame: Frame = {
      entry: { op: 'put', docs: fd },
      recordsAt: this.recordsEnd,
      recordBytes: fd.map((d) => d.recordBytes),
      expiresAt: fd.map((d) => d.expiresAt),
      screens: fd.map(() => undefined),
    };
    this.frames.push(encodeFrame('put', fd, this.recordsEnd));
    this.recordsEnd += fd.reduce((a, d) => a + d.recordBytes, 0);
    await this.rep.apply({ op: 'put', docs: replicaDocs(frame) });
  }

  /** Removes `ids` (one frame). */
  async remove(ids: string[]): Promise<void> {
    this.frames.push(encodeFrame('remove', ids.map((id) => ({ id })), this.recordsEnd));
    await this.rep.apply({ op: 'remove', docs: ids.map((id) => ({ id })) });
  }

  get log(): Buffer {
    return Buffer.concat(this.frames);
  }

  /** Writes the log as `dir/log` and the table's checkpoint as `dir/table`; returns where it stands. */
  async write(dir: string): Promise<CheckpointAt> {
    const log = this.log;
    writeFileSync(path.join(dir, 'log'), log);
    const at = { logEnd: log.length, recordsEnd: this.recordsEnd, applied: this.frames.length, generation: 0 };
    await writeCheckpoint(dir, this.table, { ...at, keyOffset: LOCATOR_BYTES, logTail: crc32(log.subarray(Math.max(0, log.length - 4096))) });
    return at;
  }
}

/** Reads the checkpoint in `dir` against its log `dir/log`. */
export async function readWithLog(dir: string, manifest: StoreManifest): ReturnType<typeof readCheckpoint> {
  const log: FileHandle = await open(path.join(dir, 'log'), 'r');
  try {
    const logSize = (await log.stat()).size;
    return await readCheckpoint(dir, { manifest, logSize, generation: 0, keyOffset: LOCATOR_BYTES, log });
  } finally {
    await log.close();
  }
}
