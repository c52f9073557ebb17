/**
 * The objects a process's tasks copied from a work dir in object storage, kept in a local directory
 * and hard-linked into each task's spool: a process that runs many tasks (a `--local` task process,
 * a BullMQ worker) copies each intermediate file and shard once, not once per task that reads it.
 * What it caches never changes (an attempt's files, shards checked against the plan's identity).
 * Bounded by NEARDUP_S3_CACHE_BYTES (default 2 GiB): the oldest copies go first. Removed when the
 * process exits.
 * @module
 */
import { mkdtempSync, promises as fsp, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { removeOnSignal } from '../../io/write/output.js';
import { ownTempDir } from '../../io/read/inputStamps.js';

const DEFAULT_BYTES = 2 * 2 ** 30;

function budget(): number {
  const n = Number(process.env.NEARDUP_S3_CACHE_BYTES);
  return Number.isFinite(n) && n >= 0 ? n : DEFAULT_BYTES;
}

/** Local copies of immutable objects, by key; see the module comment. */
export class ObjectCache {
  private dir: string | undefined;
  /** Key → its copy and size, oldest first (a Map keeps insertion order). */
  private readonly entries = new Map<string, Promise<{ file: string; bytes: number }>>();
  private bytes = 0;

  private root(): string {
    if (!this.dir) {
      const dir = ownTempDir(mkdtempSync(path.join(process.env.NEARDUP_S3_SPOOL ?? tmpdir(), 'neardup-cache-')));
      removeOnSignal(dir);
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      this.dir = dir;
    }
    return this.dir;
  }

  /**
   * Puts the object `key` at `file`: linked from the cache when it holds it, else `fetch`ed into the
   * cache first (one fetch per key at a time). A failed fetch is not cached.
   */
  async place(key: string, file: string, fetch: (to: string) => Promise<void>): Promise<void> {
    let entry = this.entries.get(key);
    if (!entry) {
      const to = path.join(this.root(), createHash('sha256').update(key).digest('hex').slice(0, 32));
      entry = (async () => {
        await fetch(to);
        const bytes = (await fsp.stat(to)).size;
        this.bytes += bytes;
        return { file: to, bytes };
      })();
      this.entries.set(key, entry);
      entry.catch(() => this.entries.delete(key));
    }
    const { file: cached } = await entry;
    await fsp.link(cached, file).catch(() => fsp.copyFile(cached, file));
    await this.evict(key);
  }

  /** Drops the oldest copies (not `keep`) while the cache is over its budget. */
  private async evict(keep: string): Promise<void> {
    const most = budget();
    for (const [key, entry] of this.entries) {
      if (this.bytes <= most) return;
      if (key === keep) continue;
      const e = await entry.catch(() => undefined);
      if (!e || this.entries.get(key) !== entry) continue;
      this.entries.delete(key);
      this.bytes -= e.bytes;
      await fsp.rm(e.file, { force: true });
    }
  }
}
