/**
 * The file store's backup: its manifest and the prefixes of its records and log that a moment's
 * lengths name, copied into a new directory. The files are append-only, so those prefixes are the
 * store as it was at that moment, whatever is written after.
 * @module
 */
import { constants, existsSync, mkdirSync } from 'node:fs';
import { copyFile, open as openFile } from 'node:fs/promises';
import path from 'node:path';

/** What a backup copies: the data files in use and how much of each. */
export interface BackupPoint {
  logEnd: number;
  recordsEnd: number;
  files: { records: string; log: string };
}

/** Copies the store in `dir` as it was at `from` into the new directory `dest`. */
export async function copyStoreFiles(dir: string, dest: string, from: BackupPoint): Promise<void> {
  if (existsSync(dest)) throw new Error(`backup: ${dest} exists already (give a new directory)`);
  mkdirSync(dest, { recursive: true });
  await copyPrefix(path.join(dir, 'manifest.json'), path.join(dest, 'manifest.json'), Infinity);
  await copyPrefix(path.join(dir, from.files.records), path.join(dest, from.files.records), from.recordsEnd);
  await copyPrefix(path.join(dir, from.files.log), path.join(dest, from.files.log), from.logEnd);
}

/**
 * Copies the first `bytes` bytes of `from` to the new file `to` and syncs it: the whole file is
 * copied (the file system may share its blocks) and cut back, since only appends follow that prefix.
 */
async function copyPrefix(from: string, to: string, bytes: number): Promise<void> {
  await copyFile(from, to, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
  const dst = await openFile(to, 'r+');
  try {
    if (bytes !== Infinity) await dst.truncate(bytes);
    await dst.sync();
  } finally {
    await dst.close();
  }
}
