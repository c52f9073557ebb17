/**
 * `neardup job status`: where a job stands, on stdout (a table, or one JSON object with --json).
 * @module
 */
import { jobStatus, type StageStatus } from '../../shard/workdir/status.js';
import { taskCount, type JobSpec } from '../../shard/files/job.js';
import { readMarker } from '../../shard/files/commit.js';
import { forecastDecide, largestDecide, type DecideForecast, type LinkCounts } from '../../shard/plan/decideForecast.js';
import { spillLimits } from '../../shard/spill/limits.js';
import { int, ms } from '../report.js';

/** Bytes in B, kB, MB or GB (decimal). */
export function mb(bytes: number): string {
  return bytes < 1e3
    ? `${Math.round(bytes)} B`
    : bytes < 1e6
    ? `${(bytes / 1e3).toFixed(1)} kB`
    : bytes < 1e9
    ? `${(bytes / 1e6).toFixed(1)} MB`
    : `${(bytes / 1e9).toFixed(2)} GB`;
}

function rate(x: number | null, unit: string): string {
  if (x === null) return '-';
  return unit === 'B/s' ? `${mb(x)}/s` : `${int(x)} ${unit}`;
}

/** The ETA line of a stage partly done, with its method. */
export function etaLine(s: StageStatus): string | undefined {
  const e = s.eta;
  if (!e)
    return s.running > 0 && s.done < s.total && s.measured === 0
      ? `eta         ${s.stage}: not known until a task is done (${s.running} running)`
      : undefined;
  const par = e.parallelismFrom === 'running' ? `${e.parallelism} running` : `${e.parallelism.toFixed(1)} in parallel (observed: task time ÷ elapsed)`;
  return `eta         ${s.stage}: ${ms(e.ms)} (${e.remaining} task${e.remaining === 1 ? '' : 's'} left × ${
    ms(e.meanTaskMs)
  }, the mean of ${s.measured} done, ÷ ${par})`;
}

/** The largest decide task's forecast peak, once every link task has committed (src/shard/plan/decideForecast.ts). */
export function decideForecastOf(workDir: string, job: JobSpec): DecideForecast | undefined {
  const links = Array.from({ length: taskCount(job, 'link') }, (_, t) => readMarker<LinkCounts>(workDir, job, 'link', t));
  const f = links.length > 0 ? forecastDecide(links, taskCount(job, 'decide'), spillLimits(job.taskMemoryBudget).pairs) : undefined;
  return f && largestDecide(f);
}

/** The forecast line of `job status`: the largest decide task's peak, and whether it passes the plan's --task-memory. */
export function forecastLine(f: DecideForecast, budget: number | undefined): string {
  const over = budget === undefined
    ? ''
    : f.bytes > budget
    ? `, above the plan's --task-memory ${mb(budget)}`
    : `, within the plan's --task-memory ${mb(budget)}`;
  return `forecast    decide: task ${f.task} peaks at ~${mb(f.bytes)} (${int(f.pairs)} verified pairs, ${
    int(f.docs)
  } clustered documents: the largest decide task${over})`;
}

/** How `job status` prints: as JSON or text, to which stream, naming the work dir as given (for --json; the local directory by default). */
export interface StatusPrint {
  json: boolean;
  out?: NodeJS.WritableStream;
  name?: string;
}

/** Prints the status of the job in `workDir` (a local directory holding its markers). */
export function printStatus(workDir: string, job: JobSpec, how: StatusPrint): void {
  const { json, out = process.stdout, name = workDir } = how;
  const now = Date.now();
  const stages = jobStatus(workDir, job, now).filter((s) => s.total > 0);
  const forecast = decideForecastOf(workDir, job);
  if (json) {
    const decideForecast = forecast && { ...forecast, ...(job.taskMemoryBudget !== undefined ? { budget: job.taskMemoryBudget } : {}) };
    out.write(
      JSON.stringify({ command: 'job status', workDir: name, id: job.id, at: now, stages, ...(decideForecast ? { decideForecast } : {}) }, null, 2) + '\n',
    );
    return;
  }
  const head = ['stage', 'done', 'running', 'failed', 'waiting', 'task time', 'cpu', 'elapsed', 'docs/s', 'read/s', 'written', 'peak RSS'];
  const rows = stages.map((s) => [
    s.stage,
    `${int(s.done)}/${int(s.total)}`,
    int(s.running),
    int(s.failed),
    int(s.waiting),
    s.measured > 0 ? ms(s.wallMs) : '-',
    s.measured > 0 ? ms(s.cpuMs) : '-',
    s.elapsedMs !== null ? ms(s.elapsedMs) : '-',
    rate(s.docsPerSec, 'docs/s').replace(' docs/s', ''),
    rate(s.bytesPerSec, 'B/s'),
    s.measured > 0 ? mb(s.bytesWritten) : '-',
    s.measured > 0 ? mb(s.peakRss) : '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  const lines = [line(head), ...rows.map(line)];
  for (const s of stages) {
    const e = etaLine(s);
    if (e) lines.push(e);
  }
  if (forecast) lines.push(forecastLine(forecast, job.taskMemoryBudget));
  for (const s of stages) {
    if (s.deadAttempts > 0)
      lines.push(
        `dead        ${s.stage}: ${s.deadAttempts} temp director${
          s.deadAttempts === 1 ? 'y' : 'ies'
        } of attempts whose process is gone (not counted as running; a task that is run again replaces them)`,
      );
    for (const f of s.errors) {
      const shards = f.shards.length === 0
        ? ''
        : ` (shard${f.shards.length === 1 ? '' : 's'} ${f.shards.slice(0, 3).join(', ')}${f.shards.length > 3 ? `, … ${f.shards.length} in all` : ''})`;
      lines.push(`failed      ${s.stage} task ${f.task}${shards}: ${f.error} [${f.kind}, ${f.host} pid ${f.pid}, ${new Date(f.at).toISOString()}]`);
    }
  }
  lines.push('rates are per second of summed task time; task time, cpu, written and peak RSS are of the done tasks');
  out.write(lines.join('\n') + '\n');
}
