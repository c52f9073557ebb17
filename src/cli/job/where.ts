/**
 * Where a job's tasks run, for every job command (`job dedup`, `job spans`, `job run`): on this
 * machine (`--local`, in task processes) or on the BullMQ workers of `--redis`.
 * @module
 */
import type { Command } from 'commander';
import { UsageError } from '../../common/errors.js';
import { submitJob } from '../../distributed/submit.js';
import type { JobSpec } from '../../shard/files/job.js';
import type { WorkDir } from '../../shard/workdir/workDir.js';
import { warnDecideForecast } from '../../shard/plan/decideForecast.js';
import { parsePositiveInt } from '../options.js';
import type { Reporter } from '../report.js';
import { localProcesses, runLocally, stageBars } from './run.js';

/** Where a job's tasks run: `--local` or the workers of `--redis`. */
export interface RunFlags {
  redis?: string;
  queue: string;
  local?: boolean;
  processes?: number;
  waitNotice: number;
  redisTimeout: number;
}

/** The options of where a job runs, shared by `job dedup` and `job run`. */
export function addRunOptions(cmd: Command): Command {
  return cmd
    .option('--redis <url>', 'Redis of the queue the "neardup worker" processes serve, e.g. redis://host:6379')
    .option('--queue <name>', 'BullMQ queue name', 'neardup')
    .option('--local', "run every stage on this machine instead (no Redis): each stage's tasks on --processes task processes")
    .option(
      '--processes <n>',
      'with --local: task processes running at once (default: one per core, or 1 for inputs under 64 MiB, where starting processes costs more than it saves)',
      parsePositiveInt('processes', 1024),
    )
    .option(
      '--wait-notice <seconds>',
      'with --redis: say so when no worker has taken a task (or Redis cannot be reached) for this long, and again after each such span',
      parsePositiveInt('wait-notice', 86400),
      30,
    )
    .option(
      '--redis-timeout <seconds>',
      'with --redis: give up when Redis cannot be reached for this long (finished tasks are kept: submit again to resume)',
      parsePositiveInt('redis-timeout', 864000),
      120,
    );
}

/** Checks that the run flags name one place to run. */
export function checkRunFlags(flags: RunFlags): void {
  if (!flags.redis === !flags.local) throw new UsageError("give --redis URL (run on the queue's workers) or --local (run in this process)");
  if (flags.processes !== undefined && !flags.local) throw new UsageError('--processes is for --local runs (with --redis, start more workers instead)');
}

/** Runs every unfinished task of a planned job, here (--local) or on the queue's workers (--redis). */
export async function runJob(wd: WorkDir, job: JobSpec, flags: RunFlags, reporter: Reporter): Promise<void> {
  if (flags.local) return runLocally(wd, job, reporter, flags.processes ?? localProcesses(job));
  let last = '';
  const bars = stageBars(reporter);
  try {
    await submitJob(wd, job, {
      redis: flags.redis!,
      queue: flags.queue,
      noticeMs: flags.waitNotice * 1000,
      redisTimeoutMs: flags.redisTimeout * 1000,
      // Said even with --quiet: a job that waits must say why.
      onNotice: (m) => process.stderr.write(`neardup: ${m}\n`),
      onStageDone: async (stage) => {
        if (stage === 'link') await warnDecideForecast({ job, marker: (t) => wd.marker(job, 'link', t), warn: (m) => reporter.warn(m) });
      },
      onProgress: (stage, done, total) => {
        const line = `${stage} ${done}/${total}`;
        if (line !== last) reporter.verbose(`progress: ${line} tasks`);
        last = line;
        bars.update(stage, done, total);
      },
    });
  } finally {
    bars.stop();
  }
}
