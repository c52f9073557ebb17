/**
 * Stage 4, gather (one task per group of shards): for the shards sign read sequentially (compressed,
 * Parquet, CSV, …: their lines cannot be read again by offset), reads them once more and keeps the
 * texts of their documents that are in some candidate pair, so verification reads only those. A
 * plain line-format shard needs nothing here: verification reads its lines in place.
 *
 * Output `gather/NNNNN/texts.bin` (kind `texts`): columns doc (uint32, ascending per shard) and text
 * (string), with sstart (float64, shards of the task + 1: the task's k-th shard has rows
 * [sstart[k], sstart[k+1])).
 * @module
 */
import path from 'node:path';
import { ColumnFile, writeColumns } from '../files/columns.js';
import { openJoinFiles, runPerShard } from '../files/perShard.js';
import type { JobSpec } from '../files/job.js';
import { checkShard } from '../files/shardIdentity.js';
import { numbering, openShard, shardLineSpec, type Numbering } from '../files/shardInput.js';
import { U32Buf } from '../files/u32buf.js';

/** The gather task's marker. */
export interface GatherMarker {
  /** Documents kept. */
  docs: number;
  /** UTF-16 code units of the texts kept. */
  chars: number;
}

/** The documents of shard `s` named by the join outputs, ascending and unique. */
function neededDocs(needs: readonly ColumnFile[], s: number): Uint32Array {
  const all = new U32Buf(1 << 10);
  for (const f of needs) {
    const ns = f.f64('nstart', s, s + 2);
    if (ns[1]! > ns[0]!) { for (const d of f.u32('doc', ns[0]!, ns[1]!)) all.push(d); }
  }
  const v = all.view().slice().sort();
  const out = new U32Buf(v.length);
  for (let i = 0; i < v.length; i++) if (i === 0 || v[i] !== v[i - 1]) out.push(v[i]!);
  return out.view();
}

/** The rows of a gather task, all its shards. */
class GatherOutput {
  readonly doc = new U32Buf(1 << 10);
  readonly texts: string[] = [];
  /** Row where each shard of the task starts, then the row count. */
  readonly sstart: number[] = [0];
}

/** Runs gather task `t` (idempotent; every join task must have completed): the needed texts of each sequentially read shard of its group. */
export function runGather(workDir: string, job: JobSpec, t: number): Promise<object> {
  const num = numbering(workDir, job);
  const needs = openJoinFiles(workDir, job, 'need.bin', 'needed-docs');
  const out = new GatherOutput();
  return runPerShard<GatherMarker>(
    { workDir, job, stage: 'gather', task: t },
    (s) => gatherShard({ workDir, job, num, needs, out }, s),
    async (dir) => {
      await writeColumns(path.join(dir, 'texts.bin'), { kind: 'texts', plan: job.id, meta: {} }, {
        doc: out.doc.view(),
        text: out.texts,
        sstart: Float64Array.from(out.sstart),
      }, {
        block: 2048,
      });
    },
  ).finally(() => {
    for (const f of needs) f.close();
  });
}

/** What a gather task reads each shard with, and the rows it fills. */
interface GatherContext {
  workDir: string;
  job: JobSpec;
  num: Numbering;
  /** The join partitions' lists of needed documents. */
  needs: readonly ColumnFile[];
  out: GatherOutput;
}

async function gatherShard(ctx: GatherContext, s: number): Promise<GatherMarker> {
  const { workDir, job, num, needs, out } = ctx;
  const sm = num.markers[s]!;
  const need = sm.skipped || shardLineSpec(job, s) ? new Uint32Array(0) : neededDocs(needs, s);
  let chars = 0;
  // Every stage checks its shards, whether it reads them or not: a shard changed since sign is refused here already.
  if (!sm.skipped) checkShard(workDir, job, s);
  if (need.length > 0) {
    const input = await openShard(workDir, job, s);
    let d = 0;
    let k = 0;
    for await (const r of input.records) {
      if (k < need.length && need[k] === d) {
        out.doc.push(d);
        out.texts.push(r.text);
        chars += r.text.length;
        k++;
      }
      d++;
    }
    checkShard(workDir, job, s);
    if (d !== sm.docs) throw new Error(`${job.shards[s]!.path} changed since it was signed (${d} documents now, ${sm.docs} then)`);
  }
  out.sstart.push(out.doc.length);
  return { docs: need.length, chars };
}
