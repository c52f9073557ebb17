/**
 * Stage 6, filter (one task per shard, for `--output dedup` and `annotate`): rewrites the shard with
 * the cluster assignment, in the input's own format and compression, to the job's output directory
 * under the shard's relative name. `dedup` keeps each cluster's representative (with `--against`:
 * drops every corpus document with a reference match); `annotate` adds the cluster and
 * duplicate_of fields as `neardup dedup --output annotate` does.
 * @module
 */
import path from 'node:path';
import { promises as fsp } from 'node:fs';
import { openOutput, type OutputSink } from '../io/output.js';
import { annotateHeader, annotateRecord } from '../io/write.js';
import { ColumnFile } from './columns.js';
import { commitTask, requireMarker, taskDir } from './commit.js';
import type { JobSpec } from './job.js';
import { numbering, openShard } from './shardInput.js';

/** The filter task's marker. */
export interface FilterMarker {
  /** Records written. */
  written: number;
  /** The output shard, or undefined when none is written (a reference shard, or a skipped one). */
  output?: string;
}

/** Runs filter task `s` (idempotent; the components task must have completed). */
export function runFilter(workDir: string, job: JobSpec, s: number): Promise<FilterMarker> {
  return commitTask<FilterMarker>(workDir, 'filter', s, async () => {
    requireMarker(workDir, 'components', 0);
    const num = numbering(workDir, job);
    const shard = job.shards[s]!;
    if (shard.side !== 0 || num.markers[s]!.skipped || !job.output.dir) return { written: 0 };
    const f = ColumnFile.open(path.join(taskDir(workDir, 'components', 0), 'assign.bin'), 'assignment');
    let docs: Uint32Array, cluster: Int32Array, rep: Float64Array, repIds: string[];
    try {
      const st = f.f64('sstart');
      const a = st[s]!;
      const b = st[s + 1]!;
      docs = f.u32('doc', a, b);
      cluster = f.i32('cluster', a, b);
      rep = f.f64('rep', a, b);
      const ids = f.strings('repId');
      repIds = [];
      for (let i = a; i < b; i++) repIds.push(ids.get(i));
    } finally {
      f.close();
    }
    const out = path.join(job.output.dir, shard.out);
    await fsp.mkdir(path.dirname(out), { recursive: true });
    const input = await openShard(job, s, true);
    const layout = { format: input.format, delimiter: input.delimiter, columns: undefined as readonly string[] | undefined };
    const annotate = job.output.mode === 'annotate';
    const base = num.docOffset[s]!;
    let sink: OutputSink | undefined = await openOutput(out);
    let written = 0;
    try {
      let headerDone = false;
      const header = async (): Promise<void> => {
        if (headerDone) return;
        headerDone = true;
        layout.columns = input.header?.columns;
        if (annotate) await sink!.write(annotateHeader(layout, input.header?.raw));
        else if (input.header) await sink!.write(input.header.raw + '\n');
      };
      let d = 0;
      let k = 0;
      for await (const r of input.records) {
        await header();
        const hit = k < docs.length && docs[k] === d;
        const own = base + d;
        if (annotate) {
          const c = hit ? cluster[k]! : -1;
          const dup = hit && rep[k] !== own ? repIds[k] : undefined;
          await sink.write(annotateRecord(layout, r.raw!, c >= 0 ? c : undefined, dup));
          written++;
        } else if (!hit || (!job.against && rep[k] === own)) {
          await sink.write(r.raw! + '\n');
          written++;
        }
        if (hit) k++;
        d++;
      }
      await header();
      if (d !== num.markers[s]!.docs) throw new Error(`${shard.path} changed since it was signed (${d} documents now, ${num.markers[s]!.docs} then)`);
      await sink.close();
      sink = undefined;
    } finally {
      await sink?.abort();
    }
    return { written, output: out };
  });
}
