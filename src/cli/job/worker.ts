/**
 * `neardup worker`: serve the stage tasks of a BullMQ queue until stopped.
 * @module
 */
import { Command } from 'commander';
import { runWorker } from '../../distributed/worker.js';
import { parseCount, parsePositiveInt } from '../options.js';

/** The `worker` command. */
export function workerCommand(): Command {
  return new Command('worker')
    .description(
      'run sharded-job tasks from a BullMQ queue on Redis, on any number of machines that see the job directories or their S3 prefixes (see docs/distributed.md)',
    )
    .requiredOption('--redis <url>', 'Redis of the queue, e.g. redis://host:6379')
    .option('--queue <name>', 'BullMQ queue name', 'neardup')
    .option(
      '--concurrency <n>',
      'tasks at once, each in a task process of its own (tasks are CPU-bound: one per core is usual)',
      parsePositiveInt('concurrency', 256),
      1,
    )
    .option('--lock-ms <ms>', 'a task whose worker has not renewed its lock for this long is run again elsewhere', parsePositiveInt('lock-ms', 3600000), 30000)
    .option('--stalled-ms <ms>', 'how often to look for such stalled tasks (default: --lock-ms)', parsePositiveInt('stalled-ms', 3600000))
    .option(
      '--stop-grace <seconds>',
      'on SIGTERM or SIGINT: how long a running task may go on to commit before the worker exits anyway (the task is then run again by another worker); a second signal exits at once',
      parseCount('stop-grace', 86400),
      10,
    )
    .action(async (flags: { redis: string; queue: string; concurrency: number; lockMs: number; stalledMs?: number; stopGrace: number }) => {
      const ac = new AbortController();
      const stop = (signal: NodeJS.Signals): void => {
        if (ac.signal.aborted) process.exit(signal === 'SIGINT' ? 130 : 143);
        process.stderr.write(`neardup: ${signal}: stopping (again to exit at once)\n`);
        ac.abort();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      await runWorker({
        redis: flags.redis,
        queue: flags.queue,
        concurrency: flags.concurrency,
        lockMs: flags.lockMs,
        stalledMs: flags.stalledMs,
        signal: ac.signal,
        graceMs: flags.stopGrace * 1000,
      });
      // Redis connections that are still retrying must not keep a stopped worker alive.
      setTimeout(() => process.exit(0), 200).unref();
    });
}
