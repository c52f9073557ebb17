/**
 * The file store (`file:DIR`, docs/stores.md): an embedded store for large indexes on local files.
 * A directory holds
 *   manifest.json  the index manifest, written once (atomically) when the store is created;
 *   records        the documents' records, appended back to back (`records.G` after compaction G);
 *   log            one frame per write batch (`log.G` after compaction G) (src/store/file/frames.ts): ids, band keys, where the
 *                  records are, expiries; the posting-log entry format shared with Redis' log layout;
 *   table          a checkpoint of the band table (src/store/file/checkpoint.ts), so open folds
 *                  only the frames written after it;
 *   lock           the process id of the one process that has the store open (src/store/file/lock.ts).
 * The band table (band key → documents, in typed arrays) and the expiry index live in memory and are
 * folded from the log when the store opens (src/store/log/replica.ts); a lookup reads candidates'
 * records from the records file. A write batch is acknowledged once its records and its frame are
 * on disk (both fdatasynced at once): a crash loses no acknowledged write, and the frame of a batch it
 * interrupted (cut short, or without its records) is cut off on the next open. Single adds reach
 * the store batched (the index's group commit), so one batch waits for one flush of the disk. `compact()` rewrites records and log with only the
 * live versions, as the next generation of files (src/store/file/compact.ts, manifest.ts).
 * Why this file is long: one class orders every write to the files (a batch refused or written
 * whole, records before frames, checkpoints, compaction's switch, reads in flight); its pieces live
 * in the modules beside it, and what is left shares the class's state.
 * @module
 */
import { mkdirSync, existsSync } from 'node:fs';
import { open as openFile, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { LogReplica } from '../log/replica.js';
import { faultHooks } from '../../common/faults.js';
import type { CandidateScreen, NearDupStore, PutEntry, RemoveEntry, StoreCompaction, StoredDoc, StoreFile, StoreManifest } from '../types.js';
import { relocate, writeCompacted } from './compact.js';
import { dataFiles, readManifest, removeOtherGenerations, writeAll, writeManifest, type StoredManifest } from './manifest.js';
import { encodeFrame } from './frames.js';
import { takeDirLock } from './lock.js';
import { fileStoreDirProblem } from './dir.js';
import { copyStoreFiles } from './backup.js';
import { LOCATOR_BYTES, placeOf, replay, tableRecord } from './replay.js';
import { CHECKPOINT_FILE, logTail, readCheckpoint, writeCheckpointFile } from './checkpoint.js';
import { RecordReads } from './recordReads.js';
import { ScreenHeals } from './screenHeals.js';

/** The most bytes of a screen a table record keeps (src/similarity/setScreen.ts makes at most 72). */
const MAX_SCREEN_BYTES = 255;

/** Log growth (bytes) below which no checkpoint is written before close. */
const CHECKPOINT_MIN_LOG = 64 << 20;

export { FILE_STORE_FORMAT } from './manifest.js';

/** A store in a directory of local files. */
export class FileStore implements NearDupStore {
  readonly kind = 'file';
  /** Each document's screen is kept in the band table, and lookups screen candidates before reading their records. */
  readonly screens = true;
  private replica: LogReplica | null = null;
  private log: FileHandle | null = null;
  private records: FileHandle | null = null;
  private release: (() => void) | null = null;
  /** The manifest and the generation of the data files in use. */
  private stored: StoredManifest | null = null;
  private logEnd = 0;
  private recordsEnd = 0;
  private tornBytes = 0;
  /** Log bytes the checkpoint on disk covers. */
  private checkpointed = 0;
  /** The last checkpoint's failure ('' after one that worked), and the log length it failed at. */
  private checkpointError = '';
  private checkpointRetryFrom = 0;
  /** The last checkpoint's commit (sync and rename) while it runs outside the writes (never rejects); null once it has ended. */
  private committing: Promise<void> | null = null;
  /** Checkpoints put in place since open, and their milliseconds: writing the files (inside writes), and the commits. */
  private checkpointsDone = { count: 0, writeMs: 0, commitMs: 0 };
  /** Log frames folded at open (after the checkpoint). */
  private foldedAtOpen = 0;
  /** Candidates whose screens rejected them before their records were read, since open. */
  private screenedOut = 0;
  /** Screens made by lookups for documents folded from the log without one, till the next write puts them in the table. */
  private readonly heals = new ScreenHeals();
  /** Screens put into the table since the last checkpoint (close writes one to keep them). */
  private healedUnsaved = 0;
  private readonly reads: RecordReads;
  /** Backups copying files now (a compaction waits for them). */
  private readonly copying = new Set<Promise<void>>();
  /** Writes, one at a time, in call order. */
  private chain: Promise<unknown> = Promise.resolve();
  /** A write that failed half-way leaves the files ahead of the table: later writes refuse until reopened. */
  private broken: Error | null = null;

  constructor(readonly dir: string) {
    this.reads = new RecordReads(`file store ${dir}`);
  }

  /** Whether `dir` holds a file store. */
  localFiles(): StoreFile[] {
    return [{ path: this.dir, dir: true }];
  }

  async exists(): Promise<boolean> {
    return existsSync(path.join(this.dir, 'manifest.json'));
  }

  async open(manifest: StoreManifest): Promise<StoreManifest | null> {
    if (this.replica) throw new Error(`file store ${this.dir} is open already`);
    const problem = fileStoreDirProblem(this.dir);
    if (problem) throw new RangeError(problem);
    mkdirSync(this.dir, { recursive: true });
    this.release = takeDirLock(this.dir);
    try {
      const stored = await readManifest(this.dir);
      if (!stored) await writeManifest(this.dir, { manifest, generation: 0 });
      this.stored = stored ?? { manifest, generation: 0 };
      await this.openFiles();
      return stored?.manifest ?? null;
    } catch (e) {
      await this.close();
      throw e;
    }
  }

  private async openFiles(): Promise<void> {
    const { manifest, generation } = this.stored!;
    // Files of another generation: a compaction a crash interrupted before or after its switch.
    await removeOtherGenerations(this.dir, generation);
    const files = dataFiles(generation);
    // 'a+': appends always go to the end; reads are positioned.
    this.log = await openFile(path.join(this.dir, files.log), 'a+');
    this.records = await openFile(path.join(this.dir, files.records), 'a+');
    const logSize = (await this.log.stat()).size;
    const cp = await readCheckpoint(this.dir, { manifest, logSize, generation, keyOffset: LOCATOR_BYTES, log: this.log });
    const replica = cp ? LogReplica.restored(cp.table, LOCATOR_BYTES, cp.at.applied) : await LogReplica.create(manifest, LOCATOR_BYTES);
    // A checkpoint that does not fit the log is of no use again: gone, the next one replaces it.
    if (!cp) await rm(path.join(this.dir, CHECKPOINT_FILE), { force: true });
    const start = cp?.at ?? { logEnd: 0, recordsEnd: 0 };
    // The key table's growth slices wait for the adds after the open: the fold only links.
    replica.table.holdGrowth(true);
    const r = await replay({ log: this.log, logSize, records: this.records, where: `file store ${this.dir}`, start }, replica).finally(() =>
      replica.table.holdGrowth(false)
    );
    this.checkpointed = cp ? cp.at.logEnd : 0;
    this.foldedAtOpen = replica.applied - (cp?.at.applied ?? 0);
    this.logEnd = r.logEnd;
    this.recordsEnd = r.recordsEnd;
    this.tornBytes = r.tornBytes;
    this.replica = replica;
  }

  private get table(): LogReplica {
    if (!this.replica) throw new Error(`file store ${this.dir} is not open`);
    return this.replica;
  }

  /** Runs `fn` after every earlier write; a failure marks the store broken (its files may be ahead of its table). */
  private write<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(async () => {
      if (this.broken) throw new Error(`file store ${this.dir}: an earlier write failed (${this.broken.message}); reopen the store`);
      try {
        return await fn();
      } catch (e) {
        if (e instanceof Unchanged) throw e.error;
        this.broken = e as Error;
        throw e;
      }
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Before the first frame of version 2 in a store of an earlier format: its manifest rewritten as the format now, which a version that would cut such a frame off refuses. */
  private async upgradeFormat(): Promise<void> {
    if (this.stored!.format === undefined) return;
    const { manifest, generation } = this.stored!;
    await writeManifest(this.dir, { manifest, generation });
    this.stored = { manifest, generation };
  }

  /** Appends `bytes` at the end of `file` and waits until they are on disk. */
  private async append(file: FileHandle, bytes: Buffer): Promise<void> {
    await writeAll(file, bytes);
    await file.datasync();
  }

  /**
   * The records and the frame that refers to them, synced at once: one disk flush's wait, not two.
   * A crash may leave the frame on disk without its records, unacknowledged: the frame's checksum of
   * them tells the next open to cut it off (./replay.ts).
   */
  async put(entries: PutEntry[]): Promise<void> {
    if (entries.length === 0) return;
    return this.write(async () => {
      // A batch the table cannot take is refused before its records and frame are written: once in the log, every open would fail on it.
      const at = this.recordsEnd;
      const recs = Buffer.concat(entries.map((e) => e.record));
      let frame: Buffer;
      try {
        // First: the screens take room in the table's arena, which the batch's check then counts.
        this.applyHeals();
        checkScreens(entries);
        this.table.checkRoom(entries.map((e) => ({ id: e.id, keys: e.keys, extra: LOCATOR_BYTES + (e.screen?.length ?? 0) })));
        // The screens go to the table alone (./screenHeals.ts): the frame carries none.
        const docs = entries.map((e) => ({ id: e.id, keys: e.keys, recordBytes: e.record.length, expiresAt: e.expiresAt }));
        frame = encodeFrame('put', docs, at, crc32(recs));
      } catch (e) {
        throw new Unchanged(e as Error);
      }
      await this.upgradeFormat();
      await Promise.all([this.append(this.records!, recs), this.append(this.log!, frame)]);
      this.recordsEnd += recs.length;
      this.logEnd += frame.length;
      let o = at;
      const rep = this.table;
      await rep.apply({
        op: 'put',
        docs: entries.map((e) => {
          const extra = tableRecord(o, e.record.length, e.screen);
          o += e.record.length;
          return { id: e.id, keys: e.keys, extra, ...(e.expiresAt === undefined ? {} : { expiresAt: e.expiresAt }) };
        }),
      });
      rep.applied++;
      // The batch is durable and applied from here on: a checkpoint that fails does not fail it.
      await this.checkpointIfDue();
    });
  }

  /**
   * A checkpoint once the log has grown by an eighth since the last (at least 64 MiB) and the key
   * table is not doubling (src/store/memory/keyTable.ts). One that fails
   * (a full disk) leaves the log, which holds everything, and the store as they were: it is kept in
   * {@link stats} (`checkpointError`) and tried again after as much log again. A put that takes one
   * waits for its file to be written, not for its commit.
   */
  private async checkpointIfDue(): Promise<void> {
    // A table still doubling would finish at once for the image: wait until it has, a few adds on.
    // The last checkpoint's commit still running: this one is due again at the next write.
    if (this.table.table.growing || this.committing) return;
    const every = faultHooks().fileStoreCheckpointEvery?.() ?? Math.max(CHECKPOINT_MIN_LOG, this.checkpointed / 8);
    if (this.logEnd - Math.max(this.checkpointed, this.checkpointRetryFrom) < every) return;
    try {
      await this.checkpoint({ wait: false });
    } catch (e) {
      this.checkpointFailed(e as Error, this.logEnd);
    }
  }

  /**
   * Writes the table's checkpoint, inside a write (no fold runs meanwhile), to a temporary file;
   * then syncs it and puts it in place, outside the writes unless `wait` (close and compaction):
   * at 10^7 documents the sync is seconds of the disk's time, which the next writes need not wait
   * for (bench/RESULTS.md). Taken when the log has grown by an eighth since the last one (at least
   * 64 MiB) and at close: its cost is spread over the adds, and a crash leaves at most that much log
   * to fold on the next open.
   */
  private async checkpoint(o: { wait: boolean }): Promise<void> {
    await this.committing;
    this.applyHeals();
    await faultHooks().fileStoreCheckpoint?.();
    const at = { logEnd: this.logEnd, recordsEnd: this.recordsEnd, applied: this.table.applied, generation: this.stored!.generation };
    const t0 = performance.now();
    const file = await writeCheckpointFile(this.dir, this.table.table, { ...at, keyOffset: LOCATOR_BYTES, logTail: await logTail(this.log!, this.logEnd) });
    const t1 = performance.now();
    const healed = this.healedUnsaved;
    this.healedUnsaved = 0;
    const commit = file.commit().then(
      () => {
        const c = this.checkpointsDone;
        this.checkpointsDone = { count: c.count + 1, writeMs: c.writeMs + (t1 - t0), commitMs: c.commitMs + (performance.now() - t1) };
        this.checkpointed = at.logEnd;
        this.checkpointError = '';
      },
      (e: unknown) => {
        this.healedUnsaved += healed;
        this.checkpointFailed(e as Error, at.logEnd);
        if (o.wait) throw e;
      },
    );
    const ended = () => void (this.committing = null);
    this.committing = commit.then(ended, ended);
    if (o.wait) await commit;
  }

  /** A checkpoint that failed (a full disk) leaves the log, which holds everything: kept in {@link stats}, and tried again after as much log again. */
  private checkpointFailed(e: Error, logEnd: number): void {
    this.checkpointError = e.message;
    this.checkpointRetryFrom = logEnd;
  }

  /** Puts the screens lookups made into the table (inside a write). */
  private applyHeals(): void {
    if (this.heals.size > 0) this.healedUnsaved += this.heals.apply(this.table);
  }

  async removeMany(entries: RemoveEntry[]): Promise<boolean[]> {
    return this.write(async () => {
      const rep = this.table;
      const present = await rep.table.get(entries.map((e) => e.id));
      const seen = new Set<string>();
      const removed = entries.map((e, i) => present[i] !== null && !seen.has(e.id) && seen.add(e.id) !== undefined);
      const docs = entries.filter((_, i) => removed[i]).map((e) => ({ id: e.id }));
      if (docs.length === 0) return removed;
      const frame = encodeFrame('remove', docs, this.recordsEnd);
      await this.upgradeFormat();
      this.applyHeals();
      await this.append(this.log!, frame);
      this.logEnd += frame.length;
      await rep.apply({ op: 'remove', docs });
      rep.applied++;
      return removed;
    });
  }

  async remove(id: string, keys: Float64Array): Promise<boolean> {
    return (await this.removeMany([{ id, keys }]))[0]!;
  }

  /** The record a table entry points at, read from the records file (the page cache keeps hot ones). */
  private readRecord(tableRecord: Uint8Array): Uint8Array {
    return this.reads.one(this.records!, placeOf(this.table.extraIn(tableRecord)));
  }

  /** The records table entries point at; their places are taken now, before any await (a compaction moves them). */
  private readRecords(tableRecords: Uint8Array[]): Promise<Uint8Array[]> {
    return this.reads.many(this.records!, tableRecords.map((r) => placeOf(this.table.extraIn(r))));
  }

  async lookup(queries: Float64Array[], limit: number, now?: number, screen?: CandidateScreen): Promise<StoredDoc[][]> {
    let lists = await this.table.table.lookup(queries, limit, now);
    // After the limit, as without a screen: the candidates left are those verification would see, less the hopeless.
    if (screen) lists = lists.map((l, q) => l.filter((d) => this.admitted(screen, q, d)));
    const at = new Map<string, number>(); // each document read once, however many lists found it
    const tableRecords: Uint8Array[] = [];
    for (const l of lists) for (const d of l) if (!at.has(d.id)) at.set(d.id, tableRecords.push(d.record) - 1);
    const recs = await this.readRecords(tableRecords);
    if (screen?.screenOf) this.healFrom(screen.screenOf, { at, tableRecords, recs });
    return lists.map((l) => l.map((d) => ({ id: d.id, record: recs[at.get(d.id)!]! })));
  }

  /** Whether `screen` lets candidate `d` of list `q` through (one without a screen, kept or made: yes). */
  private admitted(screen: CandidateScreen, q: number, d: StoredDoc): boolean {
    const kept = this.heals.screenFor(d.id, d.record);
    if (kept === undefined || screen.admits(q, kept)) return true;
    this.screenedOut++;
    return false;
  }

  /** Makes the screens of the candidates just read that have none (./screenHeals.ts). */
  private healFrom(
    screenOf: (record: Uint8Array) => Uint8Array | undefined,
    read: { at: Map<string, number>; tableRecords: Uint8Array[]; recs: Uint8Array[] },
  ): void {
    for (const [id, k] of read.at) {
      if (!this.heals.wants(id, read.tableRecords[k]!)) continue;
      const s = screenOf(read.recs[k]!);
      if (s && s.length <= MAX_SCREEN_BYTES) this.heals.add(id, read.tableRecords[k]!, s);
    }
  }

  async get(ids: string[]): Promise<(Uint8Array | null)[]> {
    const found = await this.table.table.get(ids);
    const recs = await this.readRecords(found.filter((t) => t !== null));
    let k = 0;
    return found.map((t) => (t ? recs[k++]! : null));
  }

  async size(): Promise<number> {
    return this.table.table.size();
  }

  async expiredIds(now: number, limit: number): Promise<string[]> {
    return this.table.table.expiredIds(now, limit);
  }

  async countExpired(now: number): Promise<number> {
    return this.table.table.countExpired(now);
  }

  async *scan(): AsyncIterable<StoredDoc> {
    for await (const d of this.table.table.scan()) yield { id: d.id, record: this.readRecord(d.record) };
  }

  async hasPostings(id: string, keys: Float64Array): Promise<boolean[]> {
    // Key j of the document is posting j: on the chain of keys[j].
    const have = this.table.keysOf(id);
    return Array.from(keys, (k, j) => have?.[j] === k);
  }

  /**
   * The directory lock taken at open already keeps every other process out, so a write section
   * needs nothing more (the index serializes its own writes).
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async stats(): Promise<Record<string, number | string>> {
    const t = await this.table.table.stats();
    return {
      logEntries: this.table.applied,
      logBytes: this.logEnd,
      recordsFileBytes: this.recordsEnd,
      tornBytesCutAtOpen: this.tornBytes,
      framesFoldedAtOpen: this.foldedAtOpen,
      checkpointLogBytes: this.checkpointed,
      checkpointError: this.checkpointError,
      checkpointsSinceOpen: this.checkpointsDone.count,
      checkpointWriteMs: Math.round(this.checkpointsDone.writeMs),
      checkpointCommitMs: Math.round(this.checkpointsDone.commitMs),
      candidatesScreenedOut: this.screenedOut,
      screensMadeByLookups: this.heals.healed + this.heals.size,
      distinctKeys: t.distinctKeys as number,
      tableBytes: (t.keyTableSlots as number) * 12 + (t.postingBytes as number) + (t.arenaBytes as number),
    };
  }

  /** The table's postings, and the files against the table: every record inside the records file, the files as long as the store wrote them. */
  async checkStore(): Promise<{ errors: string[]; warnings: string[] }> {
    await this.chain;
    const errors = this.table.table.postingErrors();
    const logSize = (await this.log!.stat()).size;
    const recSize = (await this.records!.stat()).size;
    if (logSize !== this.logEnd) errors.push(`log has ${logSize} bytes, the store wrote ${this.logEnd}`);
    if (recSize !== this.recordsEnd) errors.push(`records file has ${recSize} bytes, the store wrote ${this.recordsEnd}`);
    let live = 0;
    for await (const d of this.table.table.scan()) {
      const { at, len } = placeOf(this.table.extraIn(d.record));
      const end = at + len;
      live += len;
      if (end > recSize) errors.push(`document ${d.id}: its record ends at byte ${end}, past the records file (${recSize} bytes)`);
    }
    const dead = this.recordsEnd - live;
    const warnings = dead > live && dead > 1 << 20 ? [`${dead} bytes of the records file hold replaced or removed versions (${live} live)`] : [];
    return { errors, warnings };
  }

  /**
   * A consistent copy in the new directory `dest`, taken while the store is in use: the files only
   * grow, so the manifest and the first bytes of log and records (as far as written when the backup
   * starts) are a store as it was then. Writes wait only while those lengths are read.
   */
  async backup(dest: string): Promise<void> {
    // Registered inside a write: a compaction (a write) waits for the copies before it deletes their files.
    const { job } = await this.write(async () => {
      const job = copyStoreFiles(this.dir, dest, { logEnd: this.logEnd, recordsEnd: this.recordsEnd, files: dataFiles(this.stored!.generation) });
      this.copying.add(job);
      const done = () => this.copying.delete(job);
      job.then(done, done);
      return { job };
    });
    // Awaited outside the write: writes go on while the files are copied.
    await job;
  }

  /**
   * Rewrites records and log with only the live versions, as the next generation of files: written
   * and synced beside the old ones, then the manifest is switched to them (one atomic rename), then
   * the old ones are deleted. A crash at any point leaves the old store or the new one. Writes wait
   * until it is done (it runs as one write); lookups go on, on the old files until the switch.
   */
  async compact(): Promise<StoreCompaction> {
    return this.write(async () => {
      const rep = this.table;
      const before = { entries: rep.applied, bytes: this.logEnd + this.recordsEnd };
      const generation = this.stored!.generation + 1;
      // Before the records move: a screen a lookup made names the place it was made for.
      this.applyHeals();
      // The last checkpoint of this generation in place before its files go.
      await this.committing;
      await Promise.allSettled(this.copying);
      // Until the switch the store is as it was: a failure leaves it usable (the new files are deleted at the next open).
      const out = await writeCompacted({ dir: this.dir, generation, replica: rep, read: (r) => this.readRecord(r) }).catch((e: unknown) => {
        throw new Unchanged(e as Error);
      });
      await faultHooks().fileStoreCompact?.('written');
      await writeManifest(this.dir, { manifest: this.stored!.manifest, generation });
      await faultHooks().fileStoreCompact?.('switched');
      const files = dataFiles(generation);
      const log = await openFile(path.join(this.dir, files.log), 'a+');
      const records = await openFile(path.join(this.dir, files.records), 'a+');
      // No await from here to the handles' swap: a lookup reads old places in the old file or new in the new.
      const old = [this.log!, this.records!];
      [this.log, this.records] = [log, records];
      relocate(rep, out.offsets);
      this.stored = { manifest: this.stored!.manifest, generation };
      [this.logEnd, this.recordsEnd, this.checkpointed, rep.applied] = [out.logBytes, out.recordsBytes, 0, out.frames];
      // Lookups that took their places before the swap read the old file: they finish first.
      await this.reads.settled();
      for (const f of old) await f.close();
      await removeOtherGenerations(this.dir, generation);
      await this.checkpoint({ wait: true });
      return {
        entriesBefore: before.entries,
        entriesAfter: out.frames,
        documents: out.offsets.length,
        bytesBefore: before.bytes,
        bytesAfter: out.logBytes + out.recordsBytes,
      };
    });
  }

  /** Writes a checkpoint when the log has grown since the last, then releases the files and the lock. */
  async close(): Promise<void> {
    await this.chain;
    await this.committing;
    try {
      if (this.replica && !this.broken && (this.logEnd > this.checkpointed || this.heals.size + this.healedUnsaved > 0)) await this.checkpoint({ wait: true });
    } finally {
      await this.reads.settled();
      await this.log?.close();
      await this.records?.close();
      this.log = this.records = null;
      this.replica = null;
      this.release?.();
      this.release = null;
    }
  }
}

/** Refuses a batch whose screens are longer than a table record keeps ({@link MAX_SCREEN_BYTES}). */
function checkScreens(entries: PutEntry[]): void {
  for (const e of entries) {
    const n = e.screen?.length ?? 0;
    if (n > MAX_SCREEN_BYTES) throw new RangeError(`screen of document ${e.id} has ${n} bytes, the store keeps at most ${MAX_SCREEN_BYTES}`);
  }
}

/** A write's failure that left the files and the table as they were: the store stays usable. */
class Unchanged {
  constructor(readonly error: Error) {}
}
