/**
 * Where a job stands, read from its directory alone: per stage, the tasks done (a marker), running
 * (a temp directory whose process is alive on this machine; on a work dir in object storage, a
 * running record rewritten within the last minute: src/shard/workdir/s3running.ts), failed (a `.failed-<task>.json` record
 * and no marker) and waiting; the time and bytes of the done tasks (their markers' `stats`), rates,
 * and an ETA for a stage partly done.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { processAlive as alive, readFailed, readMarker, type MarkerBase, type TaskStats } from '../files/commit.js';
import { roundStage, STAGES, shardsOfTask, taskCount, type JobSpec, type StageName } from '../files/job.js';
import type { PerShardMarker } from '../files/perShard.js';
import type { SignMarker } from '../files/shardInput.js';

/** A failed task, as `job status` shows it. */
export interface FailedTask {
  task: number;
  /** The task's input shards (per-shard stages). */
  shards: string[];
  /** The error's text (for a shard that fails to read: its file and line or byte). */
  error: string;
  kind: string;
  at: number;
  host: string;
  pid: number;
}

/** The ETA of a stage partly done, and how it was reckoned. */
export interface StageEta {
  ms: number;
  remaining: number;
  meanTaskMs: number;
  parallelism: number;
  /** "running" (tasks running now) or "observed" (summed task time ÷ the stage's elapsed time, at least 1). */
  parallelismFrom: 'running' | 'observed';
}

/** One stage's state. */
export interface StageStatus {
  stage: StageName;
  total: number;
  done: number;
  running: number;
  failed: number;
  waiting: number;
  /** Temp directories of attempts whose process is gone (on this machine): not counted as running. */
  deadAttempts: number;
  /** Done tasks whose marker has stats (markers written before stats were recorded have none). */
  measured: number;
  /** Sums over the measured done tasks. */
  wallMs: number;
  cpuMs: number;
  bytesRead: number;
  bytesWritten: number;
  /** Largest sampled RSS of a done task (bytes). */
  peakRss: number;
  /** First task's start (epoch ms) and the time since then: to the last end when the stage is done, else to now. */
  firstStartedAt: number | null;
  elapsedMs: number | null;
  /** Documents the measured done tasks handled (per-shard stages, from the sign counters), or null. */
  docs: number | null;
  /** Documents and bytes read per second of summed task wall time (per-task throughput). */
  docsPerSec: number | null;
  bytesPerSec: number | null;
  eta: StageEta | null;
  errors: FailedTask[];
}

const PER_SHARD: ReadonlySet<StageName> = new Set(['sign', 'gather', 'filter']);

/**
 * Attempts of a stage's tasks not yet committed, task number → live and dead ones: temp directories
 * `.<task>.tmp-<pid>-…` (live when the pid is alive on this machine) and, in the status view of a
 * work dir in object storage, `.running-<task>.json` (counts from the running records).
 */
function attempts(workDir: string, stage: string): Map<number, { live: number; dead: number }> {
  const out = new Map<number, { live: number; dead: number }>();
  let names: string[];
  try {
    names = readdirSync(path.join(workDir, stage));
  } catch {
    return out;
  }
  const add = (t: number, live: number, dead: number): void => {
    const e = out.get(t) ?? { live: 0, dead: 0 };
    out.set(t, { live: e.live + live, dead: e.dead + dead });
  };
  for (const n of names) {
    const tmp = /^\.(\d+)\.tmp-(\d+)-/.exec(n);
    if (tmp) {
      const up = alive(Number(tmp[2]));
      add(Number(tmp[1]), up ? 1 : 0, up ? 0 : 1);
      continue;
    }
    const rec = /^\.running-(\d+)\.json$/.exec(n);
    if (!rec) continue;
    try {
      const r = JSON.parse(readFileSync(path.join(workDir, stage, n), 'utf8')) as { live?: unknown; dead?: unknown };
      add(Number(rec[1]), Number(r.live) || 0, Number(r.dead) || 0);
    } catch {
      // The view is written by this process: a bad file is not a job's state.
    }
  }
  return out;
}

/** The state of every stage of the job in `workDir`, at `now`. */
export function jobStatus(workDir: string, job: JobSpec, now = Date.now()): StageStatus[] {
  const signDocs = signDocsOf(workDir, job);
  return STAGES.map((stage) => stageStatus({ workDir, job, stage, signDocs, now }));
}

/** Documents per per-shard task, from the sign markers (the same groups in every per-shard stage). */
function signDocsOf(workDir: string, job: JobSpec): (number | undefined)[] {
  const signDocs: (number | undefined)[] = [];
  for (let t = 0; t < taskCount(job, 'sign'); t++) {
    const m = readMarker<PerShardMarker<SignMarker>>(workDir, job, 'sign', t);
    signDocs.push(m && Array.isArray(m.shards) ? m.shards.reduce((a, x) => a + (x?.docs ?? 0), 0) : undefined);
  }
  return signDocs;
}

/** What {@link stageStatus} looks at. */
interface StageQuery {
  workDir: string;
  job: JobSpec;
  stage: StageName;
  signDocs: readonly (number | undefined)[];
  now: number;
}

/** A stage's status before any task is looked at. */
function emptyStatus(stage: StageName, total: number): StageStatus {
  return {
    stage,
    total,
    done: 0,
    running: 0,
    failed: 0,
    waiting: 0,
    deadAttempts: 0,
    measured: 0,
    wallMs: 0,
    cpuMs: 0,
    bytesRead: 0,
    bytesWritten: 0,
    peakRss: 0,
    firstStartedAt: null,
    elapsedMs: null,
    docs: PER_SHARD.has(stage) ? 0 : null,
    docsPerSec: null,
    bytesPerSec: null,
    eta: null,
    errors: [],
  };
}

/** One stage's tasks counted (done, running, failed, waiting) with the done ones' measurements, its rates and its ETA. */
function stageStatus(q: StageQuery): StageStatus {
  const { workDir, job, stage } = q;
  const total = taskCount(job, stage);
  const st = emptyStatus(stage, total);
  const tries = attempts(workDir, stage);
  let lastEnd = 0;
  for (let t = 0; t < total; t++) {
    const m: MarkerBase | undefined = readMarker(workDir, job, stage, t);
    if (m) {
      lastEnd = Math.max(lastEnd, addDone(st, q, t, m));
      continue;
    }
    const { live, dead } = tries.get(t) ?? { live: 0, dead: 0 };
    st.deadAttempts += dead;
    if (live > 0) st.running++;
    else addNotRunning(st, q, t);
  }
  addRates(st, lastEnd, q.now);
  return st;
}

/** Counts done task `t` (marker `m`) and its measurements into `st`; returns when its last attempt ended (0 if unmeasured). */
function addDone(st: StageStatus, q: StageQuery, t: number, m: MarkerBase): number {
  st.done++;
  if (m.stats) {
    st.measured++;
    if (st.docs !== null) st.docs += q.signDocs[t] ?? 0;
    st.bytesWritten += outsideBytes(m);
  }
  let lastEnd = 0;
  for (const s of taskStats({ workDir: q.workDir, job: q.job, stage: q.stage, t }, m)) {
    st.wallMs += s.wallMs;
    st.cpuMs += s.cpuMs;
    st.bytesRead += s.bytesRead ?? 0;
    st.bytesWritten += s.bytesWritten;
    st.peakRss = Math.max(st.peakRss, s.peakRss);
    st.firstStartedAt = Math.min(st.firstStartedAt ?? s.startedAt, s.startedAt);
    lastEnd = Math.max(lastEnd, s.endedAt);
  }
  return lastEnd;
}

/** Counts task `t`, neither done nor running, as failed (with its error and shards) or waiting. */
function addNotRunning(st: StageStatus, q: StageQuery, t: number): void {
  const f = readFailed(q.workDir, q.stage, t);
  if (!f) {
    st.waiting++;
    return;
  }
  st.failed++;
  let shards: string[] = [];
  if (PER_SHARD.has(q.stage)) {
    const { first, end } = shardsOfTask(q.job, t);
    shards = q.job.shards.slice(first, end).map((x) => x.path);
  }
  st.errors.push({ task: t, shards, error: f.error, kind: f.kind, at: f.at, host: f.host, pid: f.pid });
}

/** The stage's elapsed time, throughput and ETA from what its done tasks measured. */
function addRates(st: StageStatus, lastEnd: number, now: number): void {
  if (st.firstStartedAt !== null) {
    st.elapsedMs = (st.done === st.total ? lastEnd : now) - st.firstStartedAt;
    if (st.wallMs > 0) {
      st.bytesPerSec = (st.bytesRead * 1000) / st.wallMs;
      if (st.docs !== null) st.docsPerSec = (st.docs * 1000) / st.wallMs;
    }
  }
  if (st.measured > 0 && st.done < st.total) {
    const meanTaskMs = st.wallMs / st.measured;
    const remaining = st.total - st.done;
    const span = Math.max(lastEnd - st.firstStartedAt!, 1);
    const parallelismFrom = st.running > 0 ? 'running' : 'observed';
    const parallelism = st.running > 0 ? st.running : Math.max(1, st.wallMs / span);
    st.eta = { ms: (meanTaskMs * remaining) / parallelism, remaining, meanTaskMs, parallelism, parallelismFrom };
  }
}

/** Per stage: tasks, and the summed wall and CPU time of their markers' stats (ms). */
export function stageTimings(
  workDir: string,
  job: JobSpec,
): Record<string, { tasks: number; wall: number; cpu: number; bytesRead: number; bytesWritten: number }> {
  const out: Record<string, { tasks: number; wall: number; cpu: number; bytesRead: number; bytesWritten: number }> = {};
  for (const stage of STAGES) {
    const n = taskCount(job, stage);
    if (n === 0) continue;
    const x = { tasks: n, wall: 0, cpu: 0, bytesRead: 0, bytesWritten: 0 };
    for (let t = 0; t < n; t++) {
      const m = readMarker(workDir, job, stage, t);
      if (!m) continue;
      x.bytesWritten += outsideBytes(m);
      for (const s of taskStats({ workDir, job, stage, t }, m)) {
        x.wall += s.wallMs;
        x.cpu += s.cpuMs;
        x.bytesRead += s.bytesRead ?? 0;
        x.bytesWritten += s.bytesWritten;
      }
    }
    x.wall = Math.round(x.wall * 10) / 10;
    x.cpu = Math.round(x.cpu * 10) / 10;
    out[stage] = x;
  }
  return out;
}

/** What a committed task cost: its marker's stats, and for a link task those of its rounds' tasks too. */
function taskStats(at: { workDir: string; job: JobSpec; stage: StageName; t: number }, m: MarkerBase): TaskStats[] {
  const { workDir, job, stage, t } = at;
  const out = m.stats ? [m.stats] : [];
  if (stage !== 'link') return out;
  const last = (m as MarkerBase & { round?: number }).round ?? -1;
  for (let r = 0; r <= last; r++) {
    const s = readMarker(workDir, job, roundStage(r), t)?.stats;
    if (s) out.push(s);
  }
  return out;
}

/** Bytes a task wrote outside its own directory: the filter stage's output shards. */
function outsideBytes(m: MarkerBase): number {
  const shards = (m as MarkerBase & { shards?: { outputBytes?: number }[] }).shards;
  return Array.isArray(shards) ? shards.reduce((a, x) => a + (x.outputBytes ?? 0), 0) : 0;
}
