/**
 * The `--removed` audit of a sharded job: one row per document `--output dedup` drops, from the
 * components stage's assignment (assign.bin), in global document order, the same rows as `neardup
 * dedup --removed` writes. With `--against`, each corpus document with a reference match, with the
 * reference document's id and the shard it came from.
 * @module
 */
import path from 'node:path';
import { openAudit } from '../io/audit.js';
import { ColumnFile } from './columns.js';
import { requireMarker, taskDir } from './commit.js';
import { rangeOf, type JobSpec } from './job.js';
import { numbering } from './shardInput.js';

/** Writes the audit of a finished job to `file` (atomically); returns its rows. */
export async function writeJobRemoved(workDir: string, job: JobSpec, file: string): Promise<number> {
  requireMarker(workDir, job, 'components', 0);
  const { docOffset } = numbering(workDir, job);
  const f = ColumnFile.open(path.join(taskDir(workDir, 'components', 0), 'assign.bin'), 'assignment', job.id);
  let sstart: Float64Array, doc: Uint32Array, cluster: Int32Array, rep: Float64Array, repId: string[], sim: Float64Array, id: string[];
  try {
    sstart = f.f64('sstart');
    doc = f.u32('doc');
    cluster = f.i32('cluster');
    rep = f.f64('rep');
    repId = f.strings('repId').range(0, doc.length);
    sim = f.f64('sim');
    id = f.strings('id').range(0, doc.length);
  } finally {
    f.close();
  }
  const audit = await openAudit(file, job.against);
  try {
    for (let s = 0; s + 1 < sstart.length; s++) {
      for (let k = sstart[s]!; k < sstart[s + 1]!; k++) {
        const own = docOffset[s]! + doc[k]!;
        if (!job.against && rep[k] === own) continue;
        const similarity = rep[k]! < 0 || Number.isNaN(sim[k]!) ? null : sim[k]!;
        const keptId = rep[k]! < 0 ? null : repId[k]!;
        const ref = job.against ? { referenceId: repId[k]!, referenceSource: job.shards[rangeOf(docOffset, rep[k]!)]!.path } : {};
        await audit.write({ id: id[k]!, keptId, similarity, cluster: cluster[k]! >= 0 ? cluster[k]! : null, ...ref });
      }
    }
    await audit.close();
  } catch (e) {
    await audit.abort();
    throw e;
  }
  return audit.rows;
}
