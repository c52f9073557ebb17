/**
 * The `--removed` audit of a sharded job: one row per document `--output dedup` drops, from the
 * components stage's assignment (assign.bin), in global document order, the same rows as `neardup
 * dedup --removed` writes. With `--against`, each corpus document with a reference match, with the
 * reference document's id and the shard it came from.
 * @module
 */
import { openAudit } from '../../io/write/audit.js';
import { groupAssignment } from './components.js';
import { rangeOf, taskCount, type JobSpec } from '../files/job.js';
import { numbering } from '../files/shardInput.js';

/** Writes the audit of a finished job to `file` (atomically); returns its rows. */
export async function writeJobRemoved(workDir: string, job: JobSpec, file: string): Promise<number> {
  const { docOffset } = numbering(workDir, job);
  const audit = await openAudit(file, job.against);
  try {
    // A shard group's rows at a time, in global document order.
    for (let f = 0; f < taskCount(job, 'components'); f++) {
      const { shard, doc, cluster, rep, repId, sim, id } = groupAssignment(workDir, job, f);
      for (let k = 0; k < doc.length; k++) {
        const own = docOffset[shard[k]!]! + doc[k]!;
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
