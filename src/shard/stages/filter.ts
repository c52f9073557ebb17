/**
 * Stage 9, filter (one task per shard group, for `--output dedup` and `annotate`): rewrites the shard with
 * the cluster assignment, in the input's own format and compression, to the job's output directory
 * under the shard's relative name. `dedup` keeps each cluster's kept member (none with `--keep none`; with `--against`:
 * drops every corpus document with a reference match); `annotate` adds the tags (cluster,
 * cluster_size, duplicate_of, similarity, kept) as `neardup dedup --output annotate` does.
 * @module
 */
import path from 'node:path';
import { promises as fsp } from 'node:fs';
import { rewriteFile, type RowVerdict } from '../../io/write/rewrite.js';
import { groupAssignment, type GroupAssignment } from './components.js';
import { runPerShard } from '../files/perShard.js';
import type { JobSpec } from '../files/job.js';
import { checkShard } from '../files/shardIdentity.js';
import { numbering, type Numbering } from '../files/shardInput.js';

/** The filter task's marker. */
export interface FilterMarker {
  /** Records written. */
  written: number;
  /** The output shard, or undefined when none is written (a reference shard, or a skipped one). */
  output?: string;
  /** Its size in bytes: it is written into the output directory, not the task's (`job status`'s written counts it). */
  outputBytes?: number;
}

/** Runs filter task `t` (idempotent; every components task must have completed): rewrites each shard of its group. */
export function runFilter(workDir: string, job: JobSpec, t: number): Promise<object> {
  const num = numbering(workDir, job);
  let assigned: GroupAssignment | undefined;
  let k = 0;
  return runPerShard<FilterMarker>({ workDir, job, stage: 'filter', task: t }, (s) => {
    assigned ??= groupAssignment(workDir, job, t);
    // The group's rows are in shard order: shard s's are the next ones.
    const a = k;
    while (k < assigned.shard.length && assigned.shard[k] === s) k++;
    return filterShard({ workDir, job, num }, s, { all: assigned, from: a, to: k });
  }, async () => undefined);
}

/** What a filter task reads every shard of its group with: the work dir, the plan, the documents' numbering. */
interface FilterContext {
  workDir: string;
  job: JobSpec;
  num: Numbering;
}

/** Rewrites shard `s` from rows [from, to) of its group's assignment (the shard's rows). */
async function filterShard(ctx: FilterContext, s: number, rows: { all: GroupAssignment; from: number; to: number }): Promise<FilterMarker> {
  const { workDir, job, num } = ctx;
  const { all, from: a, to: b } = rows;
  {
    const shard = job.shards[s]!;
    if (shard.side !== 0 || num.markers[s]!.skipped || !job.output.dir) return { written: 0 };
    const docs = all.doc.subarray(a, b);
    const cluster = all.cluster.subarray(a, b);
    const rep = all.rep.subarray(a, b);
    const repIds = all.repId.slice(a, b);
    const size = all.size.subarray(a, b);
    const sim = all.sim.subarray(a, b);
    checkShard(workDir, job, s);
    const out = path.join(job.output.dir, shard.out);
    await fsp.mkdir(path.dirname(out), { recursive: true });
    const annotate = job.output.mode === 'annotate';
    const base = num.docOffset[s]!;
    // The io layer rewrites the shard in its own format and compression (Parquet with its schema),
    // atomically; the verdict is asked once per valid record, in order: record d is document d.
    let d = 0;
    let k = 0;
    const verdict = (): RowVerdict => {
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
    };
    const { written } = await rewriteFile(shard.path, out, { ...job.read }, {
      mode: annotate ? 'annotate' : 'dedup',
      verdict,
      tagPrefix: job.output.tagPrefix,
    });
    if (d !== num.markers[s]!.docs) throw new Error(`${shard.path} changed since it was signed (${d} documents now, ${num.markers[s]!.docs} then)`);
    return { written, output: out, outputBytes: (await fsp.stat(out)).size };
  }
}
