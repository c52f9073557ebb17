/**
 * `neardup job`: plan a sharded dedup job, run it on BullMQ workers (or in this process), and
 * report its result.
 * @module
 */
import { Command } from 'commander';
import { UsageError } from '../../common/errors.js';
import { checkAuditTarget } from '../../io/write/audit.js';
import { STAGES, taskCount } from '../../shard/files/job.js';
import { isS3Url } from '../../io/s3/client.js';
import { addLogOptions, parsePositiveInt } from '../options.js';
import { requireOutForJson } from '../pipelineOptions.js';
import { lockPlannedOutputs } from '../outputLocks.js';
import { int, Reporter, type LogFlags } from '../report.js';
import { addPlanOptions, openJob, planFromFlags, refuseUnsupported, type PlanFlags } from './run.js';
import { finishJob } from './finish.js';
import { addRunOptions, checkRunFlags, runJob, type RunFlags } from './where.js';
import { finishSpansJob, jobSpansCommand } from './spans.js';
import { printStatus } from './status.js';
import { estimateFromFlags, type EstimateFlags } from './estimate.js';
import { planSlurm, queuedSlurmJobs, shellQuote, slurmJobName, slurmScript, submitSlurm } from '../../distributed/slurm.js';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

interface DedupJobFlags extends PlanFlags, RunFlags {
  taskMemory?: number;
}

/**
 * `--task-memory`, for `job plan` and `job dedup`: the budget the plan keeps (decide's spill limit,
 * and the decide tasks forecast past it, named once link has run); with `job plan --estimate`, also
 * the partitions that keep each join task within it.
 */
function addTaskMemoryOption(cmd: Command, o: { withEstimate?: boolean } = {}): Command {
  const estimate =
    '; with --estimate, the plan also gets the partitions that keep each join task within it (unless --partitions is given), and stages past it are named';
  return cmd.option(
    '--task-memory <MB>',
    `memory one task may use: decide spills its verified pairs past half of it, and decide tasks forecast past it are named once link has run${
      o.withEstimate ? estimate : ''
    }`,
    parsePositiveInt('task-memory', 2 ** 30),
  );
}

/** The plan's share of `--task-memory`, in bytes. */
const budgetOf = (
  flags: { taskMemory?: number },
): { taskMemoryBudget?: number } => (flags.taskMemory !== undefined ? { taskMemoryBudget: flags.taskMemory * 2 ** 20 } : {});

/** The `job` command and its subcommands. */
export function jobCommand(): Command {
  const job = new Command('job').description(
    'sharded dedup jobs over many files and machines (see docs/distributed.md); document-level dedup (job dedup) and below the document (job spans)',
  );
  return job.addCommand(planCommand()).addCommand(dedupJobCommand()).addCommand(jobSpansCommand()).addCommand(runCommand()).addCommand(submitCommand())
    .addCommand(reportCommand()).addCommand(statusCommand()).addCommand(cleanCommand());
}

/** `job plan`: the plan of a job for array-job runners, optionally from an estimate. */
function planCommand(): Command {
  const plan = new Command('plan')
    .description(
      'write the plan of a job (job.json in --work-dir) for array-job runners (Slurm, Kubernetes, Spark); then run "neardup stage" for each stage and "neardup job report"',
    )
    .argument('<shards...>', 'input shards: files (JSONL, TSV, CSV, text, Parquet; .gz or .zst), directories of them, or quoted globs');
  addPlanOptions(plan);
  plan
    .option(
      '--estimate',
      'first run the job on a sample (1 MiB blocks of lines, other shards whole) and predict, for the whole job: documents, candidate and verified pairs, bytes written and peak task memory per stage (job submit --slurm then asks for that memory)',
    )
    .option(
      '--sample-mb <MB>',
      'with --estimate: input megabytes to sample, drawn at random (default 10 % of the input, at least 64)',
      parsePositiveInt('sample-mb', 2 ** 30),
    );
  addTaskMemoryOption(plan, { withEstimate: true });
  addLogOptions(plan);
  plan.action(async (shards: string[], flags: PlanFlags & EstimateFlags) => {
    refuseUnsupported(plan);
    if (flags.removed !== undefined) await checkAuditTarget(flags.removed);
    const reporter = new Reporter(flags);
    const estimate = await estimateFromFlags(shards, flags, reporter);
    const { job: spec } = await planFromFlags(shards, flags, {
      ...(estimate ? { taskMemory: Object.fromEntries(estimate.stages.map((s) => [s.stage, Math.round(s.peakMemory)])) } : {}),
      ...budgetOf(flags),
    });
    const stages = STAGES.map((s) => ({ stage: s, tasks: taskCount(spec, s) })).filter((s) => s.tasks > 0);
    if (flags.json)
      reporter.json({
        command: 'job plan',
        workDir: flags.workDir,
        id: spec.id,
        shards: spec.shards.length,
        partitions: spec.partitions,
        stages,
        ...(estimate ? { estimate } : {}),
      });
    else for (const s of stages)
        reporter.summary(
          `${s.stage.padEnd(11)} ${int(s.tasks)} task${s.tasks === 1 ? '' : 's'}: neardup stage ${s.stage} --work-dir ${shellQuote(flags.workDir)} ${
            s.tasks > 1 ? `--task I (I from 0 to ${s.tasks - 1})` : '--task 0'
          }`,
        );
  });
  return plan;
}

/** `job dedup`: a whole job planned and run, then its output and summary. */
function dedupJobCommand(): Command {
  const dedup = new Command('dedup')
    .description(
      'run a whole sharded dedup job on the BullMQ workers of --redis (or --local: in this process), then write the output and summary as neardup dedup does',
    )
    .argument('<shards...>', 'input shards: files (JSONL, TSV, CSV, text, Parquet; .gz or .zst), directories of them, or quoted globs');
  addPlanOptions(dedup);
  addTaskMemoryOption(addRunOptions(dedup));
  dedup.option('-o, --out <file>', 'for --output pairs/clusters: write here (atomically) instead of stdout');
  addLogOptions(dedup, 'print a machine-readable summary on stdout (needs --out or --out-dir)');
  dedup.action(async (shards: string[], flags: DedupJobFlags) => {
    refuseUnsupported(dedup);
    checkRunFlags(flags);
    // Shard outputs go to --out-dir: only pairs and clusters need --out for --json.
    if (flags.output !== 'dedup' && flags.output !== 'annotate') requireOutForJson({ json: flags.json, out: flags.out || undefined });
    const started = performance.now();
    const reporter = new Reporter(flags);
    // Before the job runs: an audit path that cannot be written.
    if (flags.removed !== undefined) await checkAuditTarget(flags.removed);
    const { wd, job } = await planFromFlags(shards, flags, budgetOf(flags));
    await runJob(wd, job, flags, reporter);
    await finishJob(wd, job, flags, { reporter, started });
  });
  return dedup;
}

/** `job run`: the job already planned in a work dir, run as it is. */
function runCommand(): Command {
  const run = new Command('run')
    .description(
      'run the job already planned in --work-dir (by "neardup job plan" or an earlier "job dedup"), as it is: no options repeated; then write the output and summary as "job dedup" does',
    )
    .requiredOption('--work-dir <dir>', 'the job directory, or s3://bucket/prefix');
  addRunOptions(run);
  run
    .option('-o, --out <file>', 'for --output pairs/clusters: write here (atomically) instead of stdout')
    .option('--removed <file>', 'for a job planned with --removed: write the audit here instead of where the plan says');
  addLogOptions(run, 'print a machine-readable summary on stdout');
  run.action(async (flags: Omit<DedupJobFlags, keyof PlanFlags> & LogFlags & { workDir: string; out?: string; removed?: string }) => {
    checkRunFlags(flags);
    const started = performance.now();
    const reporter = new Reporter(flags);
    const { wd, job } = await openJob(flags.workDir);
    // Before any stage runs: the audit the plan records is this run's to write (src/cli/outputLocks.ts).
    await lockPlannedOutputs(run, job.output);
    if (!job.spans && job.output.mode !== 'dedup' && job.output.mode !== 'annotate') requireOutForJson({ json: flags.json, out: flags.out || undefined });
    await runJob(wd, job, flags, reporter);
    await (job.spans ? finishSpansJob(wd, job, flags, { reporter, started }) : finishJob(wd, job, flags, { reporter, started }));
  });
  return run;
}

/** `job report`: the output and summary of a job whose stages have all run. */
function reportCommand(): Command {
  const report = new Command('report')
    .description('write the output and print the summary of a job whose stages have all run (after "neardup stage" runs)')
    .requiredOption('--work-dir <dir>', 'the job directory, or s3://bucket/prefix')
    .option('-o, --out <file>', 'for --output pairs/clusters: write here instead of stdout')
    .option('--removed <file>', 'for a job planned with --removed: write the audit here instead of where the plan says');
  addLogOptions(report);
  report.action(async (flags: LogFlags & { workDir: string; out?: string; removed?: string }) => {
    const { wd, job } = await openJob(flags.workDir);
    await lockPlannedOutputs(report, job.output);
    await (job.spans
      ? finishSpansJob(wd, job, flags, { reporter: new Reporter(flags), started: performance.now(), finished: true })
      : finishJob(wd, job, flags, { reporter: new Reporter(flags), started: performance.now(), finished: true }));
  });
  return report;
}

/** `job status`: per stage, tasks and times. */
function statusCommand(): Command {
  const status = new Command('status')
    .description(
      'per stage: tasks done, running, failed and waiting, task time, elapsed time, docs/s and bytes/s, an ETA for a stage partly done, and the error of each failed task',
    )
    .requiredOption('--work-dir <dir>', 'the job directory, or s3://bucket/prefix')
    .option('--json', 'print the same as one JSON object');
  status.action(async (flags: { workDir: string; json?: boolean }) => {
    const { wd, job } = await openJob(flags.workDir);
    await wd.withView(job, false, async (dir) => printStatus(dir, job, { json: !!flags.json, out: process.stdout, name: wd.name }));
  });
  return status;
}

/** `job clean`: leftovers of dead tasks, or the whole job. */
function cleanCommand(): Command {
  const clean = new Command('clean')
    .description(
      'remove what no task marker names: temp directories of dead tasks, attempts of tasks that another attempt committed (a work dir in S3); with --all, the whole job: its plan and stage directories (markers, intermediates); its outputs and any other file in the work dir stay (the work dir itself goes once empty). Run it once no task of the job runs',
    )
    .requiredOption('--work-dir <dir>', 'the job directory, or s3://bucket/prefix')
    .option('--all', 'remove the whole job (its plan and stage directories, nothing else)')
    .option('-q, --quiet', 'print nothing');
  clean.action(async (flags: { workDir: string; all?: boolean; quiet?: boolean }) => {
    const { wd, job } = await openJob(flags.workDir);
    const gone = await wd.clean(job, !!flags.all);
    if (!flags.quiet) process.stderr.write(`neardup: removed ${int(gone.length)} ${flags.all ? 'object(s) of the job' : 'leftover(s)'} in ${wd.name}\n`);
  });
  return clean;
}

/** `job submit`: the stages of a planned job as Slurm array jobs. */
function submitCommand(): Command {
  const submit = new Command('submit')
    .description(
      'submit the stages of a job planned with "neardup job plan" to Slurm: one array job per stage, each after the previous one succeeded (afterok); only tasks not yet done are submitted, so submitting again resumes',
    )
    .requiredOption('--work-dir <dir>', 'the job directory (on a file system the compute nodes share), or s3://bucket/prefix')
    .option('--slurm', 'submit with sbatch (the only scheduler for now; BullMQ jobs run with "neardup job dedup --redis")')
    .option(
      '--sbatch <args>',
      'more sbatch arguments for every stage, e.g. "--partition=cpu --time=2:00:00 --mem=8G"',
      (v: string, prev: string[] = []) => [...prev, ...v.split(/\s+/).filter(Boolean)],
    )
    .option('--neardup <command>', 'how compute nodes run neardup (default: this node and this neardup, by absolute path)')
    .option('--print', 'print the submission as a shell script instead of running sbatch')
    .option('--force', 'submit even while Slurm jobs of this job are still queued or running (their tasks may then run twice; commits keep the first)')
    .addHelpText(
      'after',
      `
Example:
  $ neardup job plan 'shards/*.jsonl.zst' --work-dir /shared/job --id-field id --output dedup --out-dir /shared/clean
  $ neardup job submit --slurm --work-dir /shared/job --sbatch '--partition=cpu --time=1:00:00'
  $ neardup job status --work-dir /shared/job
  $ neardup job report --work-dir /shared/job`,
    );
  submit.action(submitToSlurm);
  return submit;
}

/** The flags of `job submit`. */
interface SubmitFlags {
  workDir: string;
  slurm?: boolean;
  sbatch?: string[];
  neardup?: string;
  print?: boolean;
  force?: boolean;
}

/** `job submit --slurm`: the stages' array jobs, each after the previous one, or their script with `--print`. */
async function submitToSlurm(flags: SubmitFlags): Promise<void> {
  if (!flags.slurm) throw new UsageError('say where to submit: --slurm (BullMQ jobs are submitted by "neardup job dedup --redis URL")');
  const { wd, job } = await openJob(flags.workDir);
  const neardup = flags.neardup ? flags.neardup.split(/\s+/).filter(Boolean) : [process.execPath, process.argv[1]!];
  // Members' logs: in the job directory, or (a work dir in S3) in the submitting directory.
  const logs = isS3Url(wd.name) ? path.resolve(`slurm-${job.id}`) : path.join(wd.name, 'slurm');
  const stages = await planSlurm(wd, job, { neardup, cwd: process.cwd(), extra: flags.sbatch ?? [], logs });
  if (stages.length === 0) {
    process.stderr.write(`neardup: every task of the job is done: neardup job report --work-dir ${shellQuote(flags.workDir)}\n`);
    return;
  }
  // sbatch does not create the directory of --output: a missing one fails every member.
  mkdirSync(logs, { recursive: true });
  if (flags.print) {
    process.stdout.write(slurmScript(stages));
    return;
  }
  const queued = flags.force ? [] : queuedSlurmJobs(job);
  if (queued.length > 0) {
    throw new UsageError(
      `Slurm jobs of this job are still queued or running (${queued.slice(0, 6).join(', ')}${
        queued.length > 6 ? ', …' : ''
      }): wait for them, or cancel them (scancel --name=${slurmJobName(job, 'sign')},…), or give --force`,
    );
  }
  for (const s of submitSlurm(stages)) process.stdout.write(`${s.stage.padEnd(11)} Slurm job ${s.jobId} (${int(s.tasks)} task${s.tasks === 1 ? '' : 's'})\n`);
  process.stderr.write(
    `neardup: when they are done: neardup job report --work-dir ${shellQuote(flags.workDir)} (progress: neardup job status --work-dir ${
      shellQuote(flags.workDir)
    })\n`,
  );
}
