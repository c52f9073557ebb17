/**
 * Reading the gather stage's outputs: the texts of candidate documents of sequentially read shards,
 * by (shard, doc), without loading more of a task's file than is asked for.
 * @module
 */
import type { ColumnFile } from './columns.js';
import { ShardFiles } from './perShard.js';
import { taskOfShard, type JobSpec } from './job.js';

/** One shard's gathered documents. */
export interface GatheredShard {
  /** Gathered document numbers, ascending. */
  docs: Uint32Array;
  /** The texts of documents `want` (ascending, each gathered), in that order. */
  texts(want: ArrayLike<number>): string[];
}

/** Shard `s`'s rows of its gather task's open file. */
function gatheredOf(job: JobSpec, f: ColumnFile, s: number): GatheredShard {
  const k = s - job.groups[taskOfShard(job, s)]!;
  const ss = f.f64('sstart', k, k + 2);
  const a = ss[0]!;
  const b = ss[1]!;
  const docs = f.u32('doc', a, b);
  const text = f.strings('text');
  return {
    docs,
    texts(want) {
      const out: string[] = new Array<string>(want.length);
      // Both ascending: one merge, reading runs of consecutive rows at once.
      let i = 0;
      for (let j = 0; j < want.length;) {
        while (i < docs.length && docs[i]! < want[j]!) i++;
        if (docs[i] !== want[j]) throw new Error(`gather output of shard ${s} lacks document ${want[j]!}: the job directory is inconsistent`);
        let e = i + 1;
        let m = j + 1;
        while (m < want.length && e < docs.length && docs[e] === want[m]) {
          e++;
          m++;
        }
        const run = text.range(a + i, a + e);
        for (let x = 0; x < run.length; x++) out[j + x] = run[x]!;
        i = e;
        j = m;
      }
      return out;
    },
  };
}

/** Gathered shards, their task files opened when first needed and closed together. */
export function gatheredShards(workDir: string, job: JobSpec): ShardFiles<GatheredShard> {
  return new ShardFiles({ workDir, job, stage: 'gather' }, { name: 'texts.bin', kind: 'texts' }, (f, s) => gatheredOf(job, f, s));
}
