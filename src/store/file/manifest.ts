/**
 * The file store's `manifest.json` and the names of its data files. A compaction writes new data
 * files under the next generation's names beside the old ones, and switching the generation in
 * the manifest (one atomic rename) is what makes them the store: a crash before the rename leaves
 * the old generation, after it the new one; open deletes the other generation's files.
 *   generation 0: `records`, `log`; generation G > 0: `records.G`, `log.G`.
 * Formats: "neardup-file-store 4" (`generation` given) is written now: its log may hold frames of
 * version 3, whose put documents carry the screens of their sets (./frames.ts), and of version 2,
 * whose records are checked against the checksum in the frame when the log's last frame is opened,
 * since a batch's records and frame are synced together. A version that reads only the formats
 * before would take such a frame for a torn one and cut it off, so it must refuse the store
 * instead. Formats 1 (generation 0), 2 (G > 0) and 3 (frames up to version 2) are read; the store's
 * first write after open rewrites the manifest as format 4 ({@link FileStore}), before its first
 * frame of version 3.
 * @module
 */
import { existsSync, readdirSync } from 'node:fs';
import { open as openFile, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { StoreManifest } from '../types.js';

/** Format of manifest.json's `format` field, as written now. */
export const FILE_STORE_FORMAT = 'neardup-file-store 4';
/** The formats before, read: generation 0, a compacted store's, and frames without screens. */
const FIRST_FORMAT = 'neardup-file-store 1';
const COMPACTED_FORMAT = 'neardup-file-store 2';
const CHECKED_FORMAT = 'neardup-file-store 3';

/** A store's manifest and the generation of its data files. */
export interface StoredManifest {
  manifest: StoreManifest;
  generation: number;
  /** The format read (absent: {@link FILE_STORE_FORMAT}, as {@link writeManifest} writes). */
  format?: string;
}

/** The data files of `generation`. */
export function dataFiles(generation: number): { records: string; log: string } {
  return generation === 0 ? { records: 'records', log: 'log' } : { records: `records.${generation}`, log: `log.${generation}` };
}

/** The damaged manifest's error: the file named, never a bare JSON or TypeError message. */
function damaged(file: string, what: string): Error {
  return new Error(`${file}: ${what}: the file store's manifest is damaged; restore a backup`);
}

/** `manifest.json`'s text parsed: a JSON object, else an error naming the file. */
function parseManifestFile(file: string, text: string): { format?: string; manifest?: unknown; generation?: number } {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch (e) {
    throw damaged(file, `not JSON (${(e as Error).message})`);
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m)) throw damaged(file, 'not a JSON object');
  return m;
}

/** The index parameters of a manifest of a format read here: an object with a positive `keysPerDoc`, else an error naming the file. */
function params(file: string, inner: unknown): StoreManifest {
  const keys = (inner as { keysPerDoc?: unknown } | null | undefined)?.keysPerDoc;
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner) || !Number.isSafeInteger(keys) || (keys as number) <= 0)
    throw damaged(file, 'no index parameters ("manifest" with a positive "keysPerDoc")');
  return inner as StoreManifest;
}

/** The manifest in `dir`, or null when there is none (a new store). */
export async function readManifest(dir: string): Promise<StoredManifest | null> {
  const file = path.join(dir, 'manifest.json');
  if (!existsSync(file)) return null;
  const m = parseManifestFile(file, await readFile(file, 'utf8'));
  const g = m.generation;
  if (m.format === FILE_STORE_FORMAT && Number.isInteger(g) && g! >= 0) return { manifest: params(file, m.manifest), generation: g! };
  if (m.format === CHECKED_FORMAT && Number.isInteger(g) && g! >= 0) return { manifest: params(file, m.manifest), generation: g!, format: m.format };
  if (m.format === FIRST_FORMAT) return { manifest: params(file, m.manifest), generation: 0, format: m.format };
  if (m.format === COMPACTED_FORMAT && Number.isInteger(g) && g! > 0) return { manifest: params(file, m.manifest), generation: g!, format: m.format };
  throw new Error(`${file}: format "${m.format}", this version reads "${FILE_STORE_FORMAT}", "${CHECKED_FORMAT}", "${COMPACTED_FORMAT}" and "${FIRST_FORMAT}"`);
}

/** The most one write call is given: Node refuses a length of 2 GiB or more (a checkpoint array at ~5.6M documents). */
const WRITE_CHUNK = 1 << 30;

/**
 * Writes all of `b` at `f`'s position, in calls of at most `chunk` bytes (a write may also take
 * fewer bytes than asked).
 */
export async function writeAll(f: FileHandle, b: Uint8Array, chunk = WRITE_CHUNK): Promise<void> {
  for (let o = 0; o < b.length;) o += (await f.write(b, o, Math.min(chunk, b.length - o))).bytesWritten;
}

/** Writes all of `b` at byte `pos` of `f`, as {@link writeAll} does at the file's position. */
export async function writeAt(f: FileHandle, b: Uint8Array, pos: number, chunk = WRITE_CHUNK): Promise<void> {
  for (let o = 0; o < b.length;) o += (await f.write(b, o, Math.min(chunk, b.length - o), pos + o)).bytesWritten;
}

/**
 * Writes started and left to run while the caller goes on (packing the next chunk): each one's
 * rejection is kept for {@link done}, never left unheard in between.
 */
export class PendingWrites {
  private readonly writes: Promise<void>[] = [];

  /** Keeps `w`; returns it, for a caller that must await this one before reusing its buffer. */
  add(w: Promise<void>): Promise<void> {
    w.catch(() => undefined);
    this.writes.push(w);
    return w;
  }

  /** Once every write has ended (the file may be closed then): rejects with the first failure. */
  async done(): Promise<void> {
    await Promise.allSettled(this.writes);
    await Promise.all(this.writes);
  }
}

/**
 * Reads `into.length` bytes of `f` from byte `pos` into `into` (a read may give fewer bytes than
 * asked); fewer only where the file ends: returns how many were read.
 */
export async function readFull(f: FileHandle, into: Uint8Array, pos: number): Promise<number> {
  let o = 0;
  for (let n = -1; o < into.length && n !== 0; o += n) n = (await f.read(into, o, into.length - o, pos + o)).bytesRead;
  return o;
}

/** Syncs the directory, so that a rename or removal in it is on disk. */
export async function syncDir(dir: string): Promise<void> {
  const d = await openFile(dir, 'r');
  await d.sync().finally(() => d.close());
}

/** Written to a temporary file, synced, then renamed: a crash leaves the old state or the new. */
export async function writeManifest(dir: string, m: StoredManifest): Promise<void> {
  const tmp = path.join(dir, 'manifest.json.tmp');
  const body = { format: FILE_STORE_FORMAT, generation: m.generation, manifest: m.manifest };
  const f = await openFile(tmp, 'w');
  await f
    .writeFile(JSON.stringify(body) + '\n')
    .then(() => f.sync())
    .finally(() => f.close());
  await rename(tmp, path.join(dir, 'manifest.json'));
  await syncDir(dir);
}

/** Deletes data files of generations other than `generation` (left by a compaction a crash interrupted, before or after its switch). */
export async function removeOtherGenerations(dir: string, generation: number): Promise<void> {
  const keep = new Set(Object.values(dataFiles(generation)));
  const stale = readdirSync(dir).filter((f) => /^(records|log)(\.\d+)?$/.test(f) && !keep.has(f));
  for (const f of stale) await rm(path.join(dir, f), { force: true });
  if (stale.length > 0) await syncDir(dir);
}
