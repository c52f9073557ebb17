/**
 * `neardup worker`: serve the stage tasks of a BullMQ queue until stopped.
 * @module
 */
import { Command } from 'commander';
import { runWorker } from '../../distributed/worker.js';
import { parsePositiveInt } from '../options.js';

/** The `worker` command. */
export function workerCommand(): Command {
  return new Command('worker')
    .description('run sharded-job tasks from a BullMQ queue on Redis, on any number of machines that see the job directories (see docs/distributed.md)')
    .requiredOption('--redis <url>', 'Redis of the queue, e.g. redis://host:6379')
    .option('--queue <name>', 'BullMQ queue name', 'neardup')
    .option('--concurrency <n>', 'tasks at once in this process (tasks are CPU-bound: one per core, in separate processes, is usual)', parsePositiveInt('concurrency', 256), 1)
    .option('--lock-ms <ms>', 'a task whose worker has not renewed its lock for this long is run again elsewhere', parsePositiveInt('lock-ms', 3600000), 30000)
    .option('--stalled-ms <ms>', 'how often to look for such stalled tasks (default: --lock-ms)', parsePositiveInt('stalled-ms', 3600000))
    .action(async (flags: { redis: string; queue: string; concurrency: number; lockMs: number; stalledMs?: number }) => {
      const ac = new AbortController();
      const stop = (): void => ac.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      await runWorker({ redis: flags.redis, queue: flags.queue, concurrency: flags.concurrency, lockMs: flags.lockMs, stalledMs: flags.stalledMs, signal: ac.signal });
    });
}
