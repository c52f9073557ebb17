/**
 * Reading the gather stage's outputs: the fingerprint sets and ids of candidate documents, by (shard, doc),
 * without loading more of a task's file than is asked for.
 * @module
 */
import path from 'node:path';
import { ColumnFile } from './columns.js';
import { requireMarker, taskDir } from './commit.js';
import { taskOfShard, type JobSpec } from './job.js';

/** One shard's gathered documents. */
export interface GatheredShard {
  /** Gathered document numbers, ascending. */
  docs: Uint32Array;
  /** Position of `doc` in {@link docs}, or -1. */
  indexOf(doc: number): number;
  /** The id at a position: a string for an id from the input, a number for a row number (as `neardup dedup` prints them). */
  id(i: number): string | number;
  /** The fingerprint set at a position (read from disk on each call). */
  set(i: number): Uint32Array;
}

/** Shard `s`'s rows of its gather task's open file. */
function gatheredOf(job: JobSpec, f: ColumnFile, s: number): GatheredShard {
  const k = s - job.groups[taskOfShard(job, s)]!;
  const ss = f.f64('sstart', k, k + 2);
  const a = ss[0]!;
  const b = ss[1]!;
  const docs = f.u32('doc', a, b);
  const explicit = f.u32('explicit', a, b);
  const ids = f.strings('id').range(a, b);
  const setStart = f.f64('setStart', a, b + 1);
  return {
    docs,
    indexOf(doc) {
      let lo = 0;
      let hi = docs.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        const v = docs[mid]!;
        if (v === doc) return mid;
        if (v < doc) lo = mid + 1;
        else hi = mid - 1;
      }
      return -1;
    },
    id(i) {
      const v = ids[i]!;
      return explicit[i] ? v : Number(v);
    },
    set: (i) => f.u32('set', setStart[i]!, setStart[i + 1]!),
  };
}

/** Gathered shards, their task files opened when first needed and closed together. */
export class GatheredShards {
  private files = new Map<number, ColumnFile>();
  private shards = new Map<number, GatheredShard>();
  constructor(
    private readonly workDir: string,
    private readonly job: JobSpec,
  ) {}

  /** Shard `s`'s gathered documents. */
  get(s: number): GatheredShard {
    let g = this.shards.get(s);
    if (g) return g;
    const t = taskOfShard(this.job, s);
    let f = this.files.get(t);
    if (!f) {
      requireMarker(this.workDir, this.job, 'gather', t);
      this.files.set(t, (f = ColumnFile.open(path.join(taskDir(this.workDir, 'gather', t), 'sets.bin'), 'sets', this.job.id)));
    }
    this.shards.set(s, (g = gatheredOf(this.job, f, s)));
    return g;
  }

  /** Closes every file. */
  close(): void {
    for (const f of this.files.values()) f.close();
    this.files.clear();
    this.shards.clear();
  }
}
