/**
 * Reading the sign stage's `docs.bin`: each document's id (as `neardup dedup` prints it) and, in a
 * plain line-format shard, where its line lies, by (shard, doc), one shard's rows at a time.
 * @module
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { ColumnFile } from './columns.js';
import { taskDir } from './commit.js';
import { keepNeedsValues, parseKeepPolicy } from '../../cluster/keepPolicy.js';
import { ShardFiles } from './perShard.js';
import { taskOfShard, type JobSpec } from './job.js';
import type { Numbering } from './shardInput.js';
import { recordWhere } from '../../io/read/record.js';

/** One shard's documents. */
export interface ShardDocs {
  /** True when the shard was read in byte ranges: {@link start} and {@link length} place each line. */
  ranged: boolean;
  /** Byte offset of document d's line in the shard. */
  start(d: number): number;
  /** Bytes of document d's line, without its line break. */
  length(d: number): number;
  /** Document d's id: a string from the input, or its global row number (as `neardup dedup` prints them). */
  id(d: number): string | number;
  /** What the job's keep policy ranks document d by (only with a policy that ranks by a value). */
  key(d: number): number;
  /** The exact remainder of an integer key beyond 2^53 (keepPolicy.ts's KeepValue). */
  keyLo(d: number): number;
  /** 0 when {@link key} is a value, 1 when the field is missing, 2 when it is not a number or an ISO date. */
  keyStatus(d: number): number;
  /**
   * Where document d is in its shard, for a message (only with a policy that ranks by a value): its
   * 1-based line, or its Parquet row group and row, as the one-process reader names it.
   */
  where(d: number): { line: number | undefined; position: string | undefined };
  /** About what the view holds in memory. */
  bytes: number;
}

/** Shard `s`'s rows of its sign task's open docs file. */
function docsOf(job: JobSpec, num: Numbering, f: ColumnFile, s: number): ShardDocs {
  const k = s - job.groups[taskOfShard(job, s)]!;
  const ss = f.f64('sstart', k, k + 2);
  const a = ss[0]!;
  const b = ss[1]!;
  const rows = f.u32('row', a, b);
  const explicit = f.u32('explicit', a, b);
  const starts = f.f64('start', a, b);
  const lengths = f.u32('length', a, b);
  const ids = f.strings('id').lazy(a, b);
  const rowOffset = num.rowOffset[s]!;
  const keyed = job.keep !== undefined && keepNeedsValues(parseKeepPolicy(job.keep));
  const keys = keyed ? f.f64('key', a, b) : undefined;
  const keysLo = keyed ? f.f64('keyLo', a, b) : undefined;
  const status = keyed ? f.u32('keyStatus', a, b) : undefined;
  const lines = keyed ? f.u32('line', a, b) : undefined;
  const rowGroups = keyed ? f.u32('rowGroup', a, b) : undefined;
  const none = (): never => {
    throw new Error(`${job.shards[s]!.path}: its sign task recorded no keep values`);
  };
  return {
    ranged: b > a && starts[0]! >= 0,
    start: (d) => starts[d]!,
    length: (d) => lengths[d]!,
    id: (d) => (explicit[d] ? ids(d) : rowOffset + rows[d]!),
    key: keys ? (d) => keys[d]! : none,
    keyLo: keysLo ? (d) => keysLo[d]! : none,
    keyStatus: status ? (d) => status[d]! : none,
    where: lines && rowGroups ? (d) => recordWhere({ line: lines[d]!, rowGroup: rowGroups[d]! > 0 ? rowGroups[d]! - 1 : undefined }) : none,
    // row, explicit, start, length (and key, keyLo, keyStatus, line, rowGroup), then the ids' bytes and offsets.
    bytes: (b - a) * (keyed ? 48 : 20) + ids.bytes,
  };
}

/**
 * Shard views kept between the tasks of a process (a `--local` task process or a worker runs many):
 * each verify task touches nearly every shard, and reading every shard's rows again per task was
 * 32× the docs files' bytes on the 1M bench, with their checksums. A view is keyed by its file's
 * identity (path, inode, size, modification time) and the job, so a sign task run again is read again.
 */
const kept = new Map<string, ShardDocs>();
let keptBytes = 0;
/** What the kept views may hold; past it the least recently used go (a corpus too big for it is read per task, as before). */
let docsCacheBytes = 256 << 20;

function keepView(key: string, view: ShardDocs): void {
  kept.set(key, view);
  keptBytes += view.bytes;
  evict();
}

function evict(): void {
  for (const [k, v] of kept) {
    if (keptBytes <= docsCacheBytes) break;
    kept.delete(k);
    keptBytes -= v.bytes;
  }
}

/**
 * The kept views' count and bytes, and their limit; `limit` sets a new one (evicting at once).
 * @internal For tests.
 */
export function docsCache(limit?: number): { views: number; bytes: number; limit: number } {
  if (limit !== undefined) {
    docsCacheBytes = limit;
    evict();
  }
  return { views: kept.size, bytes: keptBytes, limit: docsCacheBytes };
}

/** Per-shard views of the sign stage's docs files (as {@link ShardFiles}). */
export type JobDocs = Pick<ShardFiles<ShardDocs>, 'get' | 'drop' | 'close'>;

/** The sign stage's document rows, each task's file opened when first needed and closed together. */
export function jobDocs(workDir: string, job: JobSpec, num: Numbering): JobDocs {
  const files = new ShardFiles({ workDir, job, stage: 'sign' }, { name: 'docs.bin', kind: 'docs' }, (f, s) => docsOf(job, num, f, s));
  const mine = new Map<number, ShardDocs>();
  const keys = new Map<number, string>();
  return {
    get(s: number): ShardDocs {
      let v = mine.get(s);
      if (v) return v;
      const file = path.join(taskDir(workDir, 'sign', taskOfShard(job, s)), 'docs.bin');
      let key: string | undefined;
      try {
        const st = statSync(file);
        key = `${file}\u0000${s}\u0000${job.id}\u0000${num.rowOffset[s]}\u0000${st.ino}\u0000${st.size}\u0000${st.mtimeMs}`;
      } catch {
        // Not there: ShardFiles names the missing task.
      }
      const hit = key === undefined ? undefined : kept.get(key);
      if (hit) {
        // Most recently used last.
        kept.delete(key!);
        kept.set(key!, hit);
        v = hit;
      } else {
        v = files.get(s);
        if (key !== undefined) keepView(key, v);
      }
      mine.set(s, v);
      if (key !== undefined) keys.set(s, key);
      return v;
    },
    drop(s: number): void {
      // Let go of the kept view too: a reader that drops a shard is done with it (decide, whose
      // giant component touches every shard, held ~60 B per document of the corpus in them).
      const key = keys.get(s);
      const v = key === undefined ? undefined : kept.get(key);
      if (v !== undefined && v === mine.get(s)) {
        kept.delete(key!);
        keptBytes -= v.bytes;
      }
      keys.delete(s);
      mine.delete(s);
      files.drop(s);
    },
    close(): void {
      mine.clear();
      keys.clear();
      files.close();
    },
  };
}
