/**
 * `neardup stage <name>`: run tasks of one stage of a planned job, for array-job runners: Slurm
 * arrays (SLURM_ARRAY_TASK_ID), Kubernetes Indexed Jobs (JOB_COMPLETION_INDEX), AWS Batch arrays (AWS_BATCH_JOB_ARRAY_INDEX), Spark's rdd.pipe.
 * @module
 */
import { Command } from 'commander';
import { UsageError } from '../../common/errors.js';
import { STAGES, taskCount } from '../../shard/files/job.js';
import { arrayIndexFromEnv, parseStage, tasksOfMember } from '../../shard/stages/registry.js';
import { parseCount, parsePositiveInt } from '../options.js';
import { openJob } from './run.js';
import { driveLink, memberRunner, type RoundState } from '../../shard/stages/linkDriver.js';
import { warnDecideForecast } from '../../shard/plan/decideForecast.js';

/** The `stage` command. */
export function stageCommand(): Command {
  return new Command('stage')
    .description('run tasks of one stage of a job planned with "neardup job plan" (idempotent: completed tasks are skipped)')
    .argument('<name>', STAGES.join(', '))
    .requiredOption('--work-dir <dir>', 'the job directory, or s3://bucket/prefix')
    .option(
      '--task <i>',
      'with --tasks N: this process is member i of N and runs tasks i, i+N, …; without --tasks: runs task i (default: SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX)',
      parseCount('task', 1e9),
    )
    .option('--tasks <n>', 'array size (default: SLURM_ARRAY_TASK_COUNT; else one member per task)', parsePositiveInt('tasks', 1e9))
    .option('--all', 'run every task of the stage in this process')
    .option(
      '--steal-after <seconds>',
      "link: how long a member waits for a round's other tasks before running them itself (members of an array run at once)",
      parseCount('steal-after', 86400),
      2,
    )
    .addHelpText(
      'after',
      `
Examples:
  $ neardup stage sign --work-dir /shared/job --task 3            # sign shard 3
  $ sbatch --array=0-31 --wrap 'neardup stage sign --work-dir /shared/job'
  $ neardup stage join --work-dir /shared/job --task 0 --tasks 4  # partitions 0, 4, 8, …`,
    )
    .action(async (name: string, flags: { workDir: string; task?: number; tasks?: number; all?: boolean; stealAfter: number }) => {
      const stage = parseStage(name);
      const { wd, job } = await openJob(flags.workDir);
      const total = taskCount(job, stage);
      const env = arrayIndexFromEnv();
      let tasks: number[];
      if (flags.all) tasks = tasksOfMember(total, 0, 1);
      else {
        const index = flags.task ?? env.index;
        if (index === undefined) throw new UsageError('give --task I (or --all), or run as a Slurm array / Kubernetes Indexed Job');
        const members = flags.tasks ?? env.members;
        tasks = members === undefined ? [index] : tasksOfMember(total, index, members);
        if (members !== undefined && index >= members) throw new UsageError(`--task ${index} is not below --tasks ${members}`);
      }
      if (stage === 'link') {
        // The rounds: this member's tasks of each, then the others' (run here if no member does).
        const t0 = performance.now();
        const round = await driveLink(
          job,
          memberRunner(tasks, (st, t) => wd.run(job, st, t), (st, t) => wd.marker(job, st, t) as Promise<RoundState | undefined>, {
            stealAfterMs: flags.stealAfter * 1000,
          }),
        );
        process.stderr.write(`neardup: link rounds converged at round ${round} in ${Math.round(performance.now() - t0)} ms\n`);
      }
      // A decide task's memory follows its largest component: forecast from link's markers, warned of past the plan's budget.
      if (stage === 'decide')
        await warnDecideForecast({
          job,
          marker: (t) => wd.marker(job, 'link', t),
          warn: (w) => process.stderr.write(`neardup: warning: ${w}\n`),
          tasks,
        });
      for (const t of tasks) {
        const t0 = performance.now();
        await wd.run(job, stage, t);
        process.stderr.write(`neardup: ${stage} task ${t} done in ${Math.round(performance.now() - t0)} ms\n`);
      }
    });
}
