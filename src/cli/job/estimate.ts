/**
 * `neardup job plan … --estimate`: the planner's prediction for the whole job, from a run of the
 * job on a sample of its shards (src/shard/plan/estimate.ts), printed before the plan's stages; with
 * `--task-memory` the plan gets the partitions that keep each join task within it.
 * @module
 */
import { UsageError } from '../../common/errors.js';
import { isS3Url } from '../../io/s3/client.js';
import { planJob } from '../../shard/plan/plan.js';
import { estimateJob, type JobEstimate } from '../../shard/plan/estimate.js';
import { planInputFrom, localProcesses, type PlanFlags } from './run.js';
import { mb } from './status.js';
import { int, ms, type Reporter } from '../report.js';

/** The flags of `job plan` that drive the estimate. */
export interface EstimateFlags {
  estimate?: boolean;
  sampleMb?: number;
  taskMemory?: number;
}

/**
 * Runs the estimate of the flags' job and prints it (not with --json: the caller puts it in its
 * JSON). Returns it, and sets `flags.partitions` from --task-memory unless --partitions was given.
 */
export async function estimateFromFlags(shards: string[], flags: PlanFlags & EstimateFlags, reporter: Reporter): Promise<JobEstimate | undefined> {
  if (!flags.estimate) {
    if (flags.sampleMb !== undefined) throw new UsageError('--sample-mb goes with --estimate');
    return undefined;
  }
  const input = planInputFrom(shards, flags);
  const full = await planJob(input);
  const remote = full.shards.find((x) => isS3Url(x.path));
  if (remote) throw new UsageError(`--estimate samples the shards in place and does not read s3:// shards yet (${remote.path}): plan without it`);
  const bar = reporter.progress('estimate', 'stages', 7);
  let n = 0;
  const est = await estimateJob(
    full,
    // The sample runs with the same options, as a pairs job (nothing written but its temp directory).
    (corpus, reference) =>
      planJob({ ...input, shards: corpus, against: input.against ? reference : undefined, partitions: undefined, mode: 'pairs', outDir: undefined }),
    {
      sampleBytes: flags.sampleMb !== undefined ? flags.sampleMb * 2 ** 20 : undefined,
      taskMemory: flags.taskMemory !== undefined ? flags.taskMemory * 2 ** 20 : undefined,
      processes: Math.min(localProcesses({ ...full, id: '', version: 0 }), 2),
      onStage: () => bar.update(++n),
      partitionsGiven: flags.partitions !== undefined,
    },
  ).finally(() => bar.stop());
  if (est.partitionsForBudget !== undefined && flags.partitions === undefined) flags.partitions = est.partitionsForBudget;
  if (!flags.json) printEstimate(est, flags.taskMemory, reporter);
  return est;
}

/** The estimate as `job plan` prints it. */
function printEstimate(e: JobEstimate, taskMemory: number | undefined, reporter: Reporter): void {
  const pct = ((100 * e.sampledBytes) / Math.max(1, e.bytes)).toFixed(1);
  reporter.summary(
    `estimate    from ${int(e.sampledUnits)} of ${int(e.units)} sample units of ${e.shards} shard${e.shards === 1 ? '' : 's'} (${mb(e.sampledBytes)} of ${
      mb(e.bytes)
    }, ${pct} %), run as a job in ${ms(e.sampleMs)}`,
  );
  reporter.summary(`docs        ~${int(e.docs)}`);
  const se = (x: number): string => (x > 0 ? ` ± ${int(x)}` : '');
  reporter.summary(`candidates  ~${int(e.candidates)}${se(e.candidatesStdError)} distinct pairs`);
  reporter.summary(`pairs       ~${int(e.pairs)}${se(e.pairsStdError)} verified (± one standard error)`);
  reporter.summary(`stage       tasks     writes   peak memory (largest task)`);
  for (const s of e.stages)
    reporter.summary(`${s.stage.padEnd(10)} ${int(s.tasks).padStart(6)} ${mb(s.bytesWritten).padStart(10)} ${mb(s.peakMemory).padStart(10)}`);
  const written = e.stages.reduce((a, s) => a + s.bytesWritten, 0);
  reporter.summary(`disk        ~${mb(written)} written in all (intermediates and outputs)`);
  if (taskMemory !== undefined) {
    reporter.summary(
      `partitions  ${
        e.partitionsForBudget === undefined
          ? `none: --task-memory ${taskMemory} MB is below a task process's own size`
          : `${int(e.partitionsForBudget)} keep each join task within --task-memory ${taskMemory} MB`
      }`,
    );
    if (e.overBudget.length > 0)
      reporter.summary(`over        ${e.overBudget.join(', ')}: the largest task would pass --task-memory ${taskMemory} MB whatever the partitions`);
  }
}
