/**
 * Stage 6, filter (one task per shard, for `--output dedup` and `annotate`): rewrites the shard with
 * the cluster assignment, in the input's own format and compression, to the job's output directory
 * under the shard's relative name. `dedup` keeps each cluster's kept member (none with `--keep none`; with `--against`:
 * drops every corpus document with a reference match); `annotate` adds the tags (cluster,
 * cluster_size, duplicate_of, similarity, kept) as `neardup dedup --output annotate` does.
 * @module
 */
import path from 'node:path';
import { promises as fsp } from 'node:fs';
import { rewriteFile } from '../io/rewrite.js';
import { ColumnFile } from './columns.js';
import { requireMarker, taskDir } from './commit.js';
import { runPerShard } from './perShard.js';
import { checkShard, type JobSpec } from './job.js';
import { numbering, type Numbering } from './shardInput.js';

/** The filter task's marker. */
export interface FilterMarker {
  /** Records written. */
  written: number;
  /** The output shard, or undefined when none is written (a reference shard, or a skipped one). */
  output?: string;
  /** Its size in bytes: it is written into the output directory, not the task's (`job status`'s written counts it). */
  outputBytes?: number;
}

/** Runs filter task `t` (idempotent; the components task must have completed): rewrites each shard of its group. */
export function runFilter(workDir: string, job: JobSpec, t: number): Promise<object> {
  requireMarker(workDir, job, 'components', 0);
  const num = numbering(workDir, job);
  return runPerShard<FilterMarker>(workDir, job, 'filter', t, (s) => filterShard(workDir, job, num, s), async () => undefined);
}

async function filterShard(workDir: string, job: JobSpec, num: Numbering, s: number): Promise<FilterMarker> {
  {
    const shard = job.shards[s]!;
    if (shard.side !== 0 || num.markers[s]!.skipped || !job.output.dir) return { written: 0 };
    const f = ColumnFile.open(path.join(taskDir(workDir, 'components', 0), 'assign.bin'), 'assignment', job.id);
    let docs: Uint32Array, cluster: Int32Array, rep: Float64Array, repIds: string[], size: Int32Array, sim: Float64Array;
    try {
      const st = f.f64('sstart');
      const a = st[s]!;
      const b = st[s + 1]!;
      docs = f.u32('doc', a, b);
      cluster = f.i32('cluster', a, b);
      rep = f.f64('rep', a, b);
      repIds = f.strings('repId').range(a, b);
      size = f.i32('size', a, b);
      sim = f.f64('sim', a, b);
    } finally {
      f.close();
    }
    checkShard(workDir, job, s);
    const out = path.join(job.output.dir, shard.out);
    await fsp.mkdir(path.dirname(out), { recursive: true });
    const annotate = job.output.mode === 'annotate';
    const base = num.docOffset[s]!;
    // The io layer rewrites the shard in its own format and compression (Parquet with its schema),
    // atomically; the verdict is asked once per valid record, in order: record d is document d.
    let d = 0;
    let k = 0;
    const written = await rewriteFile(shard.path, out, { ...job.read }, annotate ? 'annotate' : 'dedup', () => {
      const hit = k < docs.length && docs[k] === d;
      const own = base + d;
      const dup = hit && rep[k] !== own && rep[k]! >= 0;
      const v = hit
        ? {
            keep: !job.against && rep[k] === own,
            cluster: cluster[k]! >= 0 ? cluster[k]! : undefined,
            clusterSize: size[k]! >= 0 ? size[k]! : undefined,
            duplicateOf: dup ? repIds[k] : undefined,
            similarity: dup && !Number.isNaN(sim[k]!) ? sim[k]! : undefined,
          }
        : { keep: true };
      if (hit) k++;
      d++;
      return v;
    }, undefined, job.output.tagPrefix);
    if (d !== num.markers[s]!.docs) throw new Error(`${shard.path} changed since it was signed (${d} documents now, ${num.markers[s]!.docs} then)`);
    return { written, output: out, outputBytes: (await fsp.stat(out)).size };
  }
}
