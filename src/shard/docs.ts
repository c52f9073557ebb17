/**
 * Reading the sign stage's `docs.bin`: each document's id (as `neardup dedup` prints it) and, in a
 * plain line-format shard, where its line lies, by (shard, doc), one shard's rows at a time.
 * @module
 */
import path from 'node:path';
import { ColumnFile } from './columns.js';
import { requireMarker, taskDir } from './commit.js';
import { taskOfShard, type JobSpec } from './job.js';
import type { Numbering } from './shardInput.js';

/** One shard's documents. */
export interface ShardDocs {
  /** Documents in the shard. */
  count: number;
  /** True when the shard was read in byte ranges: {@link start} and {@link length} place each line. */
  ranged: boolean;
  /** Byte offset of document d's line in the shard. */
  start(d: number): number;
  /** Bytes of document d's line, without its line break. */
  length(d: number): number;
  /** Document d's id: a string from the input, or its global row number (as `neardup dedup` prints them). */
  id(d: number): string | number;
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
  const ids = f.strings('id').range(a, b);
  const rowOffset = num.rowOffset[s]!;
  return {
    count: b - a,
    ranged: b > a && starts[0]! >= 0,
    start: (d) => starts[d]!,
    length: (d) => lengths[d]!,
    id: (d) => (explicit[d] ? ids[d]! : rowOffset + rows[d]!),
  };
}

/** The sign stage's document rows, each task's file opened when first needed and closed together. */
export class JobDocs {
  private files = new Map<number, ColumnFile>();
  private shards = new Map<number, ShardDocs>();
  constructor(
    private readonly workDir: string,
    private readonly job: JobSpec,
    private readonly num: Numbering,
  ) {}

  /** Shard `s`'s documents. */
  get(s: number): ShardDocs {
    let g = this.shards.get(s);
    if (g) return g;
    const t = taskOfShard(this.job, s);
    let f = this.files.get(t);
    if (!f) {
      requireMarker(this.workDir, this.job, 'sign', t);
      this.files.set(t, (f = ColumnFile.open(path.join(taskDir(this.workDir, 'sign', t), 'docs.bin'), 'docs', this.job.id)));
    }
    this.shards.set(s, (g = docsOf(this.job, this.num, f, s)));
    return g;
  }

  /** Forgets shard `s`'s rows (its file stays open). */
  drop(s: number): void {
    this.shards.delete(s);
  }

  /** Closes every file. */
  close(): void {
    for (const f of this.files.values()) f.close();
    this.files.clear();
    this.shards.clear();
  }
}
