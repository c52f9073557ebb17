/**
 * Compaction of the file store (`neardup index compact --store file:DIR`): the live version of
 * every document is written to the next generation's data files (src/store/file/manifest.ts),
 * records back to back and one put frame per batch, then synced. The caller switches the manifest
 * to that generation and moves its table's record places to the new file ({@link relocate}).
 * Documents go in the table's slot order, the order {@link relocate} walks again.
 * @module
 */
import { open as openFile } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { LogReplica } from '../log/replica.js';
import { encodeFrame, type FrameDoc } from './frames.js';
import { dataFiles, syncDir, writeAll } from './manifest.js';
import { LOCATOR_BYTES, locator, placeOf } from './replay.js';

/** Documents per frame of the compacted log. */
const BATCH_DOCS = 1000;
/** Record bytes per frame, at most (a frame is also written out when its records reach this). */
const BATCH_BYTES = 8 << 20;

/** What to compact. */
export interface CompactSource {
  /** The store's directory. */
  dir: string;
  /** The generation to write. */
  generation: number;
  /** The table, folded up to the end of the log. */
  replica: LogReplica;
  /** A document's record, from its table record. */
  read: (tableRecord: Uint8Array) => Uint8Array;
}

/** The files written. */
export interface Compacted {
  /** Each live document's record offset in the new records file, in slot order. */
  offsets: Float64Array;
  frames: number;
  logBytes: number;
  recordsBytes: number;
}

/** Writes generation `src.generation`'s records and log from the live documents, and syncs them. */
export async function writeCompacted(src: CompactSource): Promise<Compacted> {
  const names = dataFiles(src.generation);
  // 'w': files of this generation left by an interrupted compaction are overwritten.
  const records = await openFile(path.join(src.dir, names.records), 'w');
  const log = await openFile(path.join(src.dir, names.log), 'w');
  try {
    const table = src.replica.table;
    const expiry = new Map(table.image().expiry);
    const offsets = new Float64Array(await table.size());
    const out = { frames: 0, logBytes: 0, recordsBytes: 0 };
    let docs: FrameDoc[] = [];
    let recs: Uint8Array[] = [];
    let batchBytes = 0;
    const flush = async () => {
      if (docs.length === 0) return;
      const bytes = Buffer.concat(recs);
      const frame = encodeFrame('put', docs, out.recordsBytes, crc32(bytes));
      await writeAll(records, bytes);
      await writeAll(log, frame);
      out.recordsBytes += batchBytes;
      out.logBytes += frame.length;
      out.frames++;
      docs = [];
      recs = [];
      batchBytes = 0;
    };
    let i = 0;
    for (const d of table.live()) {
      const rec = src.read(d.record);
      offsets[i++] = out.recordsBytes + batchBytes;
      // The screens stay in the table, which the checkpoint after the switch keeps (./screenHeals.ts).
      docs.push({ id: d.id, keys: src.replica.keysOf(d.id)!, recordBytes: rec.length, expiresAt: expiry.get(d.id) });
      recs.push(rec);
      batchBytes += rec.length;
      if (docs.length >= BATCH_DOCS || batchBytes >= BATCH_BYTES) await flush();
    }
    await flush();
    await records.sync();
    await log.sync();
    await syncDir(src.dir);
    return { offsets, ...out };
  } finally {
    await records.close();
    await log.close();
  }
}

/**
 * Points every document's table record at its place in the compacted records file, in the order
 * {@link writeCompacted} wrote them. Synchronous: no lookup runs between the first place changed
 * and the last. Table records are views into the table's arena, so they are changed in place.
 */
export function relocate(replica: LogReplica, offsets: Float64Array): void {
  let i = 0;
  for (const d of replica.table.live()) {
    const { len } = placeOf(replica.extraIn(d.record));
    replica.extraIn(d.record).set(locator(offsets[i++]!, len).subarray(0, LOCATOR_BYTES));
  }
}
