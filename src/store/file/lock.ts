/**
 * The file store's cross-process lock: a file `lock` in the store's directory, created exclusively
 * (O_CREAT|O_EXCL) and holding the owner's process id. One process at a time opens a store: its
 * band table lives in that process's memory and would not see another writer's appends. A lock
 * left by a process that died (kill -9) is taken over when that process id no longer runs.
 * @module
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { StoreUnavailableError } from '../errors.js';

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, under another user.
    return (e as { code?: string }).code === 'EPERM';
  }
}

/** Takes the lock of the store in `dir`; returns its release. Throws StoreUnavailableError while another live process holds it. */
export function takeDirLock(dir: string): () => void {
  const file = path.join(dir, 'lock');
  for (let attempt = 0;; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST' || attempt > 0) throw lockError(dir, file, e);
      const pid = Number(readFileSync(file, 'utf8').trim());
      // An empty or unreadable lock file: its writer died between creating and writing it.
      if (Number.isInteger(pid) && pid > 0 && running(pid)) throw lockError(dir, file, e, pid);
      rmSync(file, { force: true });
    }
  }
}

function lockError(dir: string, file: string, cause: unknown, pid?: number): Error {
  if (pid === undefined) return new StoreUnavailableError(`cannot lock file store ${dir}: ${(cause as Error).message}`, 1, { cause });
  const who = pid === process.pid ? 'this process (opened twice)' : `process ${pid}`;
  return new StoreUnavailableError(`file store ${dir} is in use by ${who}: one process at a time opens it (its lock is ${file})`, 1, { cause });
}
