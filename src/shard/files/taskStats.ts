/**
 * What a sharded job's task costs ({@link TaskStats}, kept in its marker for `job status`): time,
 * CPU, bytes read and written, and peak memory, measured around the task's build by
 * {@link TaskMeter}.
 * @module
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * What a task cost, measured by {@link TaskMeter} around (src/shard/files/commit.ts) the task's build (everything the stage
 * does: reading, computing, writing its files; not the commit's syncs and rename).
 */
export interface TaskStats {
  /** When the build started and ended (milliseconds since the epoch, this machine's clock). */
  startedAt: number;
  endedAt: number;
  /** Wall time of the build (ms). */
  wallMs: number;
  /** CPU time of the process during the build, user + system (ms): `process.cpuUsage()` deltas, so worker threads of the process count too. */
  cpuMs: number;
  /**
   * Bytes the process read during the build through read system calls (Linux `/proc/self/io`
   * `rchar` delta): the task's input shards as stored (compressed bytes for .gz/.zst), the other
   * stages' files it reads, and the markers; page-cache hits count, as they are reads of the
   * task. Null where /proc is not there (macOS, Windows).
   */
  bytesRead: number | null;
  /** Sum of the sizes of the task's files (the marker excluded). */
  bytesWritten: number;
  /** Peak resident set size, bytes: the process's high-water mark if the task raised it, else the largest sampled (every 100 ms while it awaits, at start and end). */
  peakRss: number;
  /** The process's peak resident set size so far when the task ended (`process.resourceUsage().maxRSS`), bytes: it includes earlier tasks of the same process. */
  processMaxRss: number;
  /** The host and process that ran the task. */
  host: string;
  pid: number;
}

/** Bytes read by this process so far (Linux rchar), or null when unknown. */
function readChars(): number | null {
  try {
    const m = /^rchar:\s*(\d+)/m.exec(readFileSync('/proc/self/io', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** What a task costs, measured from its start: time, CPU, bytes read and peak memory. */
export class TaskMeter {
  private readonly startedAt = Date.now();
  private readonly t0 = performance.now();
  private readonly cpu0 = process.cpuUsage();
  private readonly read0 = readChars();
  private peakRss = process.memoryUsage.rss();
  // The sampler cannot fire while a task computes without awaiting; a high-water mark the task raised is its true peak.
  private readonly maxRss0 = process.resourceUsage().maxRSS;
  private readonly sampler = setInterval(() => (this.peakRss = Math.max(this.peakRss, process.memoryUsage.rss())), 100);
  private end: { cpu: NodeJS.CpuUsage; read1: number | null; wallMs: number; peakRss: number; maxRss1: number } | undefined;

  constructor() {
    this.sampler.unref();
  }

  /** Ends the measurement (the task's work is done, or failed): its syncs and rename are not counted. */
  stop(): void {
    clearInterval(this.sampler);
    const maxRss1 = process.resourceUsage().maxRSS;
    let peakRss = Math.max(this.peakRss, process.memoryUsage.rss());
    if (maxRss1 > this.maxRss0) peakRss = Math.max(peakRss, maxRss1 * 1024);
    this.end = { cpu: process.cpuUsage(this.cpu0), read1: readChars(), wallMs: performance.now() - this.t0, peakRss, maxRss1 };
  }

  /** The task's stats, given the files it wrote (measured when {@link stop} was called). */
  stats(files: Record<string, { bytes: number }>): TaskStats {
    const { cpu, read1, wallMs, peakRss, maxRss1 } = this.end!;
    return {
      startedAt: this.startedAt,
      endedAt: this.startedAt + Math.round(wallMs),
      wallMs: Math.round(wallMs * 10) / 10,
      cpuMs: Math.round((cpu.user + cpu.system) / 100) / 10,
      bytesRead: this.read0 !== null && read1 !== null ? read1 - this.read0 : null,
      bytesWritten: Object.values(files).reduce((a, f) => a + f.bytes, 0),
      peakRss,
      processMaxRss: maxRss1 * 1024,
      host: hostname(),
      pid: process.pid,
    };
  }
}
