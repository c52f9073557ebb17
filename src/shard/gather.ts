/**
 * Stage 3, gather (one task per shard): reads the shard once more and keeps the ids and fingerprint
 * sets of its documents that are in some candidate pair, so verification reads only those (never the
 * corpus) and each set is computed once, however many tasks compare it.
 *
 * Output `gather/NNNNN/sets.bin` (kind `sets`): columns doc (uint32, ascending), id (string),
 * explicit (uint32: 1 for an id from the input, 0 for a row number), setStart (float64, count + 1)
 * and set (uint32: the sorted fingerprint sets, document i's at [setStart[i], setStart[i+1])).
 * @module
 */
import path from 'node:path';
import { ColumnFile, writeColumns } from './columns.js';
import { requireMarker, taskDir } from './commit.js';
import { runPerShard, shardFileName } from './perShard.js';
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
function neededDocs(workDir: string, job: JobSpec, s: number): Uint32Array {
  const all = new U32Buf(1 << 12);
  for (let p = 0; p < job.partitions; p++) {
    const f = ColumnFile.open(path.join(taskDir(workDir, 'join', p), 'need.bin'), 'needed-docs', job.id);
    try {
      const ns = f.f64('nstart');
      if (ns[s + 1]! > ns[s]!) for (const d of f.u32('doc', ns[s]!, ns[s + 1]!)) all.push(d);
    } finally {
      f.close();
    }
  }
  const v = all.view().slice().sort();
  const out = new U32Buf(v.length);
  for (let i = 0; i < v.length; i++) if (i === 0 || v[i] !== v[i - 1]) out.push(v[i]!);
  return out.view();
}

/** Runs gather task `t` (idempotent; every join task must have completed): gathers each shard of its group. */
export function runGather(workDir: string, job: JobSpec, t: number): Promise<object> {
  for (let p = 0; p < job.partitions; p++) requireMarker(workDir, job, 'join', p);
  const num = numbering(workDir, job);
  const signer = createTextSigner({ shingle: job.shingle, minhash: job.minhash });
  return runPerShard<GatherMarker>(workDir, job, 'gather', t, (dir, s) => gatherShard(workDir, job, num, signer, dir, s));
}

async function gatherShard(workDir: string, job: JobSpec, num: Numbering, signer: TextSigner, dir: string, s: number): Promise<GatherMarker> {
  {
    const sm = num.markers[s]!;
    const need = sm.skipped ? new Uint32Array(0) : neededDocs(workDir, job, s);
    const ids: string[] = [];
    const explicit = new U32Buf(need.length);
    const setStart = new Float64Array(need.length + 1);
    const sets = new U32Buf(1 << 10);
    if (need.length > 0) {
      const input = await openShard(workDir, job, s);
      let d = 0;
      let k = 0;
      for await (const r of input.records) {
        if (k < need.length && need[k] === d) {
          ids.push(docId(r.id, num.rowOffset[s]!, r.row));
          explicit.push(r.id === undefined ? 0 : 1);
          for (const f of signer.set(r.text)) sets.push(f);
          k++;
          setStart[k] = sets.length;
        }
        d++;
      }
      checkShard(workDir, job, s);
      if (d !== sm.docs) throw new Error(`${job.shards[s]!.path} changed since it was signed (${d} documents now, ${sm.docs} then)`);
    }
    await writeColumns(path.join(dir, shardFileName(s, 'sets.bin')), 'sets', job.id, { shard: s }, { doc: need, id: ids, explicit: explicit.view(), setStart, set: sets.view() });
    return { docs: need.length, fingerprints: sets.length };
  }
}
