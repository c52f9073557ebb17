/**
 * Reading the gather stage's outputs: the fingerprint sets and ids of candidate documents, by (shard, doc),
 * without loading more of a shard's file than is asked for.
 * @module
 */
import { ColumnFile } from './columns.js';
import type { JobSpec } from './job.js';
import { shardFile, shardMarker } from './perShard.js';

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
  close(): void;
}

/** Opens shard `s`'s gathered sets. `loadIds` reads every id at once (for outputs that need many). */
export function openGathered(workDir: string, job: JobSpec, s: number, loadIds = true): GatheredShard {
  shardMarker(workDir, job, 'gather', s);
  const f = ColumnFile.open(shardFile(workDir, job, 'gather', s, 'sets.bin'), 'sets', job.id);
  const docs = f.u32('doc');
  const explicit = f.u32('explicit');
  const idCol = f.strings('id');
  const ids = loadIds ? idCol.all() : undefined;
  const setStart = f.f64('setStart');
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
      const v = ids ? ids[i]! : idCol.get(i);
      return explicit[i] ? v : Number(v);
    },
    set: (i) => f.u32('set', setStart[i]!, setStart[i + 1]!),
    close: () => f.close(),
  };
}

/** Lazily opened gathered shards, closed together. */
export class GatheredShards {
  private open = new Map<number, GatheredShard>();
  constructor(
    private readonly workDir: string,
    private readonly job: JobSpec,
  ) {}

  /** Shard `s`'s gathered documents. */
  get(s: number): GatheredShard {
    let g = this.open.get(s);
    if (!g) this.open.set(s, (g = openGathered(this.workDir, this.job, s)));
    return g;
  }

  /** Closes every file. */
  close(): void {
    for (const g of this.open.values()) g.close();
    this.open.clear();
  }
}
