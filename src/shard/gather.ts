/**
 * Stage 3, gather (one task per group of shards): reads its shards once more and keeps the ids and
 * fingerprint sets of their documents that are in some candidate pair, so verification reads only
 * those (never the corpus) and each set is computed once, however many tasks compare it.
 *
 * Output `gather/NNNNN/sets.bin` (kind `sets`): columns doc (uint32, ascending per shard), id
 * (string), explicit (uint32: 1 for an id from the input, 0 for a row number), setStart (float64,
 * count + 1), set (uint32: the sorted fingerprint sets, row i's at [setStart[i], setStart[i+1])) and
 * sstart (float64, shards of the task + 1: the task's k-th shard has rows [sstart[k], sstart[k+1])).
 * @module
 */
import path from 'node:path';
import { ColumnFile, writeColumns } from './columns.js';
import { openJoinFiles, runPerShard } from './perShard.js';
import { checkShard, type JobSpec } from './job.js';
import { docId, numbering, openShard, type Numbering } from './shardInput.js';
import { U32Buf } from './u32buf.js';
import { createTextSigner, type TextSigner } from '../sketch/textSigner.js';

/** The gather task's marker. */
export interface GatherMarker {
  /** Documents kept. */
  docs: number;
  /** Fingerprints kept (4 bytes each). */
  fingerprints: number;
}

/** The documents of shard `s` named by the join outputs, ascending and unique. */
function neededDocs(needs: readonly ColumnFile[], s: number): Uint32Array {
  const all = new U32Buf(1 << 10);
  for (const f of needs) {
    const ns = f.f64('nstart', s, s + 2);
    if (ns[1]! > ns[0]!) for (const d of f.u32('doc', ns[0]!, ns[1]!)) all.push(d);
  }
  const v = all.view().slice().sort();
  const out = new U32Buf(v.length);
  for (let i = 0; i < v.length; i++) if (i === 0 || v[i] !== v[i - 1]) out.push(v[i]!);
  return out.view();
}

/** The rows of a gather task, all its shards. */
class GatherOutput {
  readonly doc = new U32Buf(1 << 10);
  readonly ids: string[] = [];
  readonly explicit = new U32Buf(1 << 10);
  readonly setEnd: number[] = [];
  readonly sets = new U32Buf(1 << 10);
  /** Row where each shard of the task starts, then the row count. */
  readonly sstart: number[] = [0];
}

/** Runs gather task `t` (idempotent; every join task must have completed): gathers each shard of its group into one sets file. */
export function runGather(workDir: string, job: JobSpec, t: number): Promise<object> {
  const num = numbering(workDir, job);
  const needs = openJoinFiles(workDir, job, 'need.bin', 'needed-docs');
  const signer = createTextSigner({ shingle: job.shingle, minhash: job.minhash });
  const out = new GatherOutput();
  return runPerShard<GatherMarker>(
    workDir,
    job,
    'gather',
    t,
    (s) => gatherShard(workDir, job, num, signer, needs, out, s),
    async (dir) => {
      const setStart = new Float64Array(out.setEnd.length + 1);
      out.setEnd.forEach((e, i) => (setStart[i + 1] = e));
      await writeColumns(path.join(dir, 'sets.bin'), 'sets', job.id, {}, {
        doc: out.doc.view(),
        id: out.ids,
        explicit: out.explicit.view(),
        setStart,
        set: out.sets.view(),
        sstart: Float64Array.from(out.sstart),
      });
    },
  ).finally(() => {
    for (const f of needs) f.close();
  });
}

async function gatherShard(workDir: string, job: JobSpec, num: Numbering, signer: TextSigner, needs: readonly ColumnFile[], out: GatherOutput, s: number): Promise<GatherMarker> {
  const sm = num.markers[s]!;
  const need = sm.skipped ? new Uint32Array(0) : neededDocs(needs, s);
  const fingerprints = out.sets.length;
  if (need.length > 0) {
    const input = await openShard(workDir, job, s);
    let d = 0;
    let k = 0;
    for await (const r of input.records) {
      if (k < need.length && need[k] === d) {
        out.doc.push(d);
        out.ids.push(docId(r.id, num.rowOffset[s]!, r.row));
        out.explicit.push(r.id === undefined ? 0 : 1);
        for (const f of signer.set(r.text)) out.sets.push(f);
        out.setEnd.push(out.sets.length);
        k++;
      }
      d++;
    }
    checkShard(workDir, job, s);
    if (d !== sm.docs) throw new Error(`${job.shards[s]!.path} changed since it was signed (${d} documents now, ${sm.docs} then)`);
  }
  out.sstart.push(out.doc.length);
  return { docs: need.length, fingerprints: out.sets.length - fingerprints };
}
