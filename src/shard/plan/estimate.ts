/**
 * The planner's estimate (`neardup job plan … --estimate`): runs the job on a random sample of
 * whole shards and predicts, for the whole corpus, the documents, candidate and verified pairs,
 * bytes written per stage, the peak memory of the largest task of each stage, and the partitions
 * that keep every join task under a memory budget.
 *
 * Counts of pairs are Horvitz–Thompson estimates over the sampled pairs: with k of S shards drawn
 * uniformly without replacement, a pair within one shard is seen with probability k/S and a pair
 * across two shards with k(k−1)/(S(S−1)), whatever the corpus's layout (copies next to their
 * originals, or spread). Per-document quantities scale with the input bytes. Memory follows each
 * stage's own driver (a linear model through a task process's base size): per-shard stages keep
 * their task sizes; join grows with its partition's key rows; route with the distinct candidate
 * pairs; verify with its share of the pairs and the corpus's documents (their line offsets);
 * components with the verified pairs.
 *
 * Why this file is long: one model, from the sampled run to every stage's forecast, whose parts
 * share the sample's counts.
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ColumnFile } from '../files/columns.js';
import { readMarker, requireMarker, taskDir, type MarkerBase } from '../files/commit.js';
import { roundStage, saveJob, STAGES, taskCount, type JobSpec, type StageName } from '../files/job.js';
import { runTasksInProcesses } from '../../run/localTasks.js';
import { shardMarker } from '../files/perShard.js';
import { numbering, type SignMarker } from '../files/shardInput.js';
import { estimateClustered } from './clusteredEstimate.js';
import { drawSample, type JobSample } from './sample.js';
import type { JoinMarker } from '../stages/join.js';
import type { RouteMarker } from '../stages/route.js';
import { BATCH_DOCS, type VerifyMarker } from '../stages/verify.js';
import type { ComponentsMarker } from '../stages/components.js';
import type { DecideMarker } from '../stages/decide.js';
import type { LinkMarker, LinkRoundMarker } from '../stages/link.js';
import { driveLink } from '../stages/linkDriver.js';

/** What the estimate of one stage says. */
export interface StageEstimate {
  stage: StageName;
  /** Tasks in the whole job. */
  tasks: number;
  /** Bytes all its tasks write together. */
  bytesWritten: number;
  /** Peak resident memory of its largest task (bytes). */
  peakMemory: number;
}

/** The planner's prediction for a whole job. */
export interface JobEstimate {
  /** Units drawn (1 MiB blocks of plain line-format shards, other shards whole), of all. */
  sampledUnits: number;
  units: number;
  /** Shards of the job. */
  shards: number;
  /** Input bytes sampled, of all. */
  sampledBytes: number;
  bytes: number;
  /** Documents of the corpus (and reference). */
  docs: number;
  /** Distinct candidate pairs. */
  candidates: number;
  /** Its standard error (delete-one-unit jackknife; 0 when everything was sampled). */
  candidatesStdError: number;
  /** Pairs at or above the threshold. */
  pairs: number;
  pairsStdError: number;
  /** Documents in some verified pair, from a model of what a sample misses (see `clusteredEstimate.ts`): the components stage's bytes and memory grow with them. */
  docsInClusters: number;
  stages: StageEstimate[];
  /** Join partitions of the plan. */
  partitions: number;
  /** With a task memory budget: the fewest partitions that keep each join task within it (undefined when none is given). */
  partitionsForBudget?: number;
  /** Stages whose largest task would pass the budget whatever the partitions. */
  overBudget: StageName[];
  /** The sample run's wall time (ms). */
  sampleMs: number;
}

/** Options of {@link estimateJob}. */
export interface EstimateOptions {
  /** Input bytes to sample (default 10 % of the input, at least 64 MiB). */
  sampleBytes?: number;
  /** Memory one task may use (bytes): the estimate then gives the partitions that keep join under it. */
  taskMemory?: number;
  /** Seed of the shard draw (default 1). */
  seed?: number;
  /** Task processes for the sample run (default 1). */
  processes?: number;
  /** Called before each stage of the sample run. */
  onStage?: (stage: StageName, tasks: number) => void;
  /**
   * Whether the plan's partitions are the user's (`--partitions`): the join row is then stated at
   * them; otherwise, with `taskMemory`, at the partitions the budget chooses (default false).
   */
  partitionsGiven?: boolean;
}

/** Resident memory of a task process before its task: node itself and neardup's modules (measured: 45–60 MB). */
const BASE_RSS = 50 * 2 ** 20;

/**
 * Horvitz–Thompson weights of a sampled pair with k of `units` units drawn uniformly without
 * replacement: 1 / P(the pair is seen), for a pair within one unit and for one across two.
 */
export function pairWeights(k: number, S: number): { same: number; cross: number } {
  if (k >= S) return { same: 1, cross: 1 };
  return { same: S / k, cross: k > 1 ? (S * (S - 1)) / (k * (k - 1)) : Infinity };
}

/** A count estimated from a sample, with its standard error. */
export interface Estimated {
  estimate: number;
  stdError: number;
}

/**
 * The Horvitz–Thompson count of pairs from those seen in a sample of k of `units` units (pair i
 * joins drawn units a[i] and b[i], numbered 0..k−1), with a delete-one-unit jackknife standard
 * error: the pairs of one unit come and go together, so the units, not the pairs, are the
 * independent draws.
 */
export function estimatePairs(a: ArrayLike<number>, b: ArrayLike<number>, units: number, k: number): Estimated {
  const same = new Float64Array(k);
  const cross = new Float64Array(k);
  let S = 0;
  let C = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) {
      same[a[i]!]!++;
      S++;
    } else {
      cross[a[i]!]!++;
      cross[b[i]!]!++;
      C++;
    }
  }
  const w = pairWeights(k, units);
  const estimate = w.same * S + (C > 0 ? w.cross * C : 0);
  if (k >= units || k < 3) return { estimate, stdError: k >= units ? 0 : Infinity };
  // Leave unit u out: the same estimator over the other k − 1 drawn units.
  const w1 = pairWeights(k - 1, units);
  let mean = 0;
  const loo = new Float64Array(k);
  for (let u = 0; u < k; u++) mean += loo[u] = w1.same * (S - same[u]!) + w1.cross * (C - cross[u]!);
  mean /= k;
  let ss = 0;
  for (let u = 0; u < k; u++) ss += (loo[u]! - mean) ** 2;
  return { estimate, stdError: Math.sqrt(((k - 1) / k) * ss) };
}

/** The pairs of column files (shardA, shardB: units of the sample job), estimated for the whole job. */
function pairsOf(files: readonly { file: string; kind: string }[], plan: string, units: number, k: number): Estimated {
  const as: Uint32Array[] = [];
  const bs: Uint32Array[] = [];
  for (const { file, kind } of files) {
    const f = ColumnFile.open(file, kind, plan);
    try {
      as.push(f.u32('shardA'));
      bs.push(f.u32('shardB'));
    } finally {
      f.close();
    }
  }
  const join = (xs: Uint32Array[]): Uint32Array => {
    const out = new Uint32Array(xs.reduce((n, x) => n + x.length, 0));
    let o = 0;
    for (const x of xs) out.set(x, (o += x.length) - x.length);
    return out;
  };
  return estimatePairs(join(as), join(bs), units, k);
}

/** The verified pairs of the sample job: each end's unit (its shard of the sample job) and document number across the sample. */
function verifiedEnds(dir: string, job: JobSpec, tasks: number): { ua: Uint32Array; da: Float64Array; ub: Uint32Array; db: Float64Array } {
  const { docOffset } = numbering(dir, job);
  const parts: { ua: Uint32Array; a: Uint32Array; ub: Uint32Array; b: Uint32Array }[] = [];
  for (let t = 0; t < tasks; t++) {
    const f = ColumnFile.open(path.join(taskDir(dir, 'verify', t), 'pairs.bin'), 'verified', job.id);
    try {
      parts.push({ ua: f.u32('shardA'), a: f.u32('docA'), ub: f.u32('shardB'), b: f.u32('docB') });
    } finally {
      f.close();
    }
  }
  const n = parts.reduce((x, p) => x + p.a.length, 0);
  const out = { ua: new Uint32Array(n), da: new Float64Array(n), ub: new Uint32Array(n), db: new Float64Array(n) };
  let i = 0;
  for (const p of parts) {
    for (let r = 0; r < p.a.length; r++, i++) {
      out.ua[i] = p.ua[r]!;
      out.ub[i] = p.ub[r]!;
      out.da[i] = docOffset[p.ua[r]!]! + p.a[r]!;
      out.db[i] = docOffset[p.ub[r]!]! + p.b[r]!;
    }
  }
  return out;
}

/** The markers of a stage's tasks in the sample job. */
function markersOf<T>(workDir: string, job: JobSpec, stage: StageName): (T & MarkerBase)[] {
  return Array.from({ length: taskCount(job, stage) }, (_, t) => requireMarker<T>(workDir, job, stage, t));
}

const peakOf = (ms: readonly MarkerBase[]): number => Math.max(BASE_RSS, ...ms.map((m) => m.stats?.peakRss ?? 0));
const writtenOf = (ms: readonly MarkerBase[]): number => ms.reduce((a, m) => a + (m.stats?.bytesWritten ?? 0), 0);
/** A task's sample peak plus what its drivers add in the whole job, at their bytes per unit (docs/distributed.md, "Memory and disk per task"). */
const grown = (peak: number, ...drivers: [perUnit: number, sample: number, full: number][]): number =>
  peak + drivers.reduce((a, [b, x, y]) => a + b * Math.max(0, y - x), 0);
/**
 * Bytes per unit of the join, link, route and components stages' drivers: join's and components'
 * measured on the 1M bench in task processes, with the JS heap's slack; link's and route's per
 * candidate row (with repeats) of their group, measured on the 10M bench's largest group (4.9
 * million rows: link's round 0, which clusters them, 145 B; route 65 B).
 */
const PER = { joinKeyRow: 24, joinCandRow: 200, linkRow: 150, routeRow: 70, decidePair: 120, componentsDoc: 240 } as const;

/**
 * Estimates the job `full`: draws its sample (see {@link drawSample}), plans the sample job with
 * `planSample` (the same options over the sample's files), runs it in a temporary directory on
 * task processes, and weighs what it found. The directory is removed after.
 */
export async function estimateJob(
  full: Omit<JobSpec, 'id' | 'version'>,
  planSample: (corpus: string[], reference: string[]) => Promise<Omit<JobSpec, 'id' | 'version'>>,
  options: EstimateOptions = {},
): Promise<JobEstimate> {
  const dir = mkdtempSync(path.join(tmpdir(), 'neardup-estimate-'));
  const t0 = performance.now();
  try {
    const total = full.shards.reduce((a, x) => a + x.identity.size, 0);
    const files = path.join(dir, 'sample');
    mkdirSync(files);
    const sample = drawSample(full, options.sampleBytes ?? Math.max(0.1 * total, 64 * 2 ** 20), files, options.seed);
    const work = path.join(dir, 'job');
    const job = await saveJob(work, await planSample(sample.corpus, sample.reference));
    for (const stage of STAGES) {
      const n = taskCount(job, stage);
      if (n === 0) continue;
      options.onStage?.(stage, n);
      if (stage === 'link')
        await driveLink(job, {
          marker: (st, t) => Promise.resolve(readMarker<LinkRoundMarker>(work, job, st, t)),
          run: (st, todo) => runTasksInProcesses(work, st, todo, options.processes ?? 1),
        });
      await runTasksInProcesses(work, stage, Array.from({ length: n }, (_, t) => t), options.processes ?? 1);
    }
    return fromSample(work, job, full, sample, performance.now() - t0, options);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The estimate from a completed sample job in `dir`. */
function fromSample(
  dir: string,
  job: JobSpec,
  full: Omit<JobSpec, 'id' | 'version'>,
  sample: JobSample,
  sampleMs: number,
  options: EstimateOptions,
): JobEstimate {
  const taskMemory = options.taskMemory;
  const bytes = full.shards.reduce((a, s) => a + s.identity.size, 0);
  const sampledBytes = sample.bytes;
  const byBytes = bytes / Math.max(1, sampledBytes);
  let docs = 0;
  let keyRows = 0;
  for (let s = 0; s < job.shards.length; s++) {
    const m = shardMarker<SignMarker>(dir, job, 'sign', s);
    docs += m.docs;
    keyRows += (m.docs - m.emptyDocs) * job.bands;
  }
  const join = markersOf<JoinMarker>(dir, job, 'join');
  const link = markersOf<LinkMarker>(dir, job, 'link');
  const routes = markersOf<RouteMarker>(dir, job, 'route');
  const route = { candidates: routes.reduce((a, m) => a + m.candidates, 0), docs: routes.reduce((a, m) => a + m.docs, 0) };
  const verify = markersOf<VerifyMarker>(dir, job, 'verify');
  const comps = markersOf<ComponentsMarker>(dir, job, 'components');
  const decide = markersOf<DecideMarker>(dir, job, 'decide');
  const docsInClusters = decide.reduce((a, m) => a + m.docsInClusters, 0);
  const duplicates = decide.reduce((a, m) => a + m.duplicates, 0);
  // The sample job's shards are the drawn units in order (a drawn block with no line start has no shard, and no pairs).
  const k = Math.max(sample.drawn, job.shards.length);
  const cand = pairsOf(routes.map((_, q) => ({ file: path.join(taskDir(dir, 'route', q), 'pairs.bin'), kind: 'routed' })), job.id, sample.units, k);
  // The verified pairs, read once: their count and the clustered documents come from them.
  const ends = verifiedEnds(dir, job, verify.length);
  const ver = estimatePairs(ends.ua, ends.ub, sample.units, k);
  const candidates = cand.estimate;
  const pairs = ver.estimate;
  const sCand = Math.max(1, route.candidates);
  const sPairs = Math.max(1, verify.reduce((a, m) => a + m.pairs, 0));
  const candRatio = candidates / sCand;
  const pairRatio = pairs / sPairs;
  // The files hold pairs of representatives (join folds exact copies); the counts, as the job's,
  // count every document pair they stand for: scaled by the sample's share of those (a sample of
  // copies alone, by its bytes).
  const copyCand = routes.reduce((a, m) => a + (m.copyCandidates ?? 0), 0) + join.reduce((a, m) => a + (m.copyPairs ?? 0), 0);
  const copyPairs = decide.reduce((a, m) => a + (m.copyPairs ?? 0), 0);
  const withCopies = (
    estimate: number,
    sampled: number,
    copies: number,
  ): number => (sampled > 0 ? (estimate * (sampled + copies)) / sampled : copies * byBytes);
  const rawPairs = verify.reduce((a, m) => a + m.pairs, 0);
  const scaleCand = route.candidates > 0 ? (route.candidates + copyCand) / route.candidates : 1;
  const scalePairs = rawPairs > 0 ? (rawPairs + copyPairs) / rawPairs : 1;
  const pairRows = join.reduce((a, m) => a + m.pairRows, 0);
  const fullKeyRows = keyRows * byBytes;
  const stages: StageEstimate[] = [];
  const fullJob = { ...full, id: '', version: 0 } as JobSpec;
  const tasks = (stage: StageName): number => taskCount(fullJob, stage);
  // Per-shard stages: the whole job's tasks are groups of the same size as the sample's.
  // Per-shard stages: a task's memory grows with its group's bytes, which are the same in the sample
  // (groups of --task-bytes) unless the job's shards are larger than that (one shard, one task).
  const largestGroup = (j: Pick<JobSpec, 'groups' | 'shards'>): number => {
    let most = 0;
    for (let t = 0; t + 1 < j.groups.length; t++) {
      let b = 0;
      for (let x = j.groups[t]!; x < j.groups[t + 1]!; x++) b += j.shards[x]!.identity.size;
      most = Math.max(most, b);
    }
    return most;
  };
  const groupRatio = Math.max(1, largestGroup(full) / Math.max(1, largestGroup(job)));
  const perShard = (stage: StageName, perByte: number, grows = true): void => {
    // A stage without tasks (gather, when every shard is read in place) is not in the table.
    if (tasks(stage) === 0) return;
    const ms: MarkerBase[] = Array.from({ length: taskCount(job, stage) }, (_, t) => readMarker<object>(dir, job, stage, t)).filter((m) => m !== undefined);
    const peak = peakOf(ms);
    stages.push({ stage, tasks: tasks(stage), bytesWritten: writtenOf(ms) * perByte, peakMemory: BASE_RSS + (peak - BASE_RSS) * (grows ? groupRatio : 1) });
  };
  perShard('sign', byBytes);
  const joinRowsSample = keyRows / job.partitions;
  const joinRowsFull = fullKeyRows / full.partitions;
  // Join holds its partition's key rows and emits its candidate rows; route and components grow with pairs.
  const candRowsSample = pairRows / job.partitions;
  const candRowsFull = (pairRows * candRatio) / full.partitions;
  stages.push({
    stage: 'join',
    tasks: tasks('join'),
    bytesWritten: writtenOf(join) * (pairRows > 0 ? candRatio : byBytes),
    peakMemory: grown(peakOf(join), [PER.joinKeyRow, joinRowsSample, joinRowsFull], [PER.joinCandRow, candRowsSample, candRowsFull]),
  });
  // Route tasks hold their shard group's candidate rows (with repeats) and their documents'
  // neighbours: per task, the candidate rows grow with the candidates per document (the groups are
  // as in the sample), i.e. by candRatio / byBytes. The largest group's rows count: groups differ
  // (the 10M bench's largest had 3.6 × the mean), and a task's memory follows its own.
  const perTaskGrowth = Math.max(1, candRatio / Math.max(1, byBytes));
  const candRowsTask = Math.max(1, ...routes.map((m) => m.rows));
  stages.push({
    stage: 'route',
    tasks: tasks('route'),
    bytesWritten: writtenOf(routes) * candRatio,
    peakMemory: grown(peakOf(routes), [PER.routeRow, candRowsTask, candRowsTask * perTaskGrowth]),
  });
  // Gather keeps the texts of candidate documents of the shards it reads: they grow as the candidates.
  // (Gather holds only its candidate documents' texts, read from compressed or Parquet shards.)
  perShard('gather', candRatio, false);
  // A verify task holds the line offsets and ids of the shards its pairs touch (with copies spread, all:
  // ~36 B per document), its share of the pairs (20 B each) and one batch of sets (bounded): the
  // batch's part is what the sample's peak leaves of the rest.
  const vTasks = tasks('verify');
  const vFixed = (n: number, rows: number): number => 36 * n + 20 * rows;
  const vBatch = Math.max(0, peakOf(verify) - BASE_RSS - vFixed(docs, sCand / Math.max(1, verify.length)));
  // A batch holds the sets of up to BATCH_DOCS candidate documents: a sample's tasks may have fewer.
  const docsPerPair = route.docs / sCand;
  const batchDocs = (cand: number, tasks: number): number => Math.max(1, Math.min(BATCH_DOCS, (cand * docsPerPair) / Math.max(1, tasks)));
  const vBatchFull = vBatch * (batchDocs(candidates, vTasks) / batchDocs(sCand, verify.length));
  stages.push({
    stage: 'verify',
    tasks: vTasks,
    bytesWritten: writtenOf(verify) * pairRatio,
    peakMemory: BASE_RSS + vBatchFull + vFixed(docs * byBytes, candidates / Math.max(1, vTasks)),
  });
  // Link tasks hold their group's verified pairs (round 0 reads verify task q's) and their
  // documents' edges: they grow with the verified pairs per document.
  const pairRowsTask = Math.max(1, ...link.map((_, t) => readMarker<LinkRoundMarker>(dir, job, roundStage(0), t)?.edgesIn ?? 0));
  const linkPeak = Math.max(BASE_RSS, ...link.map((m) => m.roundsPeakRss), peakOf(link));
  const pairGrowth = Math.max(1, pairRatio / Math.max(1, byBytes));
  stages.push({
    stage: 'link',
    tasks: tasks('link'),
    bytesWritten: writtenOf(verify) * pairRatio,
    peakMemory: grown(linkPeak, [PER.linkRow, pairRowsTask, pairRowsTask * pairGrowth]),
  });
  // Clustered documents: a sample sees clusters in pieces (src/shard/plan/clusteredEstimate.ts); components' outputs and memory grow with them.
  const clustered = estimateClustered(ends, sample.units, k);
  const clusteredRatio = clustered / Math.max(1, docsInClusters);
  // A decide task holds its group's components' verified pairs (24 B each, and the clustering's) and
  // members: it grows with the verified pairs per task.
  stages.push({
    stage: 'decide',
    tasks: tasks('decide'),
    bytesWritten: writtenOf(decide) * (docsInClusters > 0 ? clustered / Math.max(1, docsInClusters) : pairRatio),
    peakMemory: grown(peakOf(decide), [PER.decidePair, sPairs / Math.max(1, decide.length), pairs / Math.max(1, tasks('decide'))]),
  });
  // A components task holds its group's clusters' lines and members: they grow with the clustered documents per task.
  const cTasks = Math.max(1, comps.length);
  stages.push({
    stage: 'components',
    tasks: tasks('components'),
    bytesWritten: writtenOf(comps) * (docsInClusters > 0 ? clusteredRatio : pairRatio),
    peakMemory: grown(peakOf(comps), [PER.componentsDoc, docsInClusters / cTasks, clustered / Math.max(1, tasks('components'))]),
  });
  if (full.output.mode === 'dedup' || full.output.mode === 'annotate') {
    const kept = full.output.mode === 'dedup' ? 1 - duplicates / Math.max(1, docs) : 1.1;
    stages.push({ stage: 'filter', tasks: tasks('filter'), bytesWritten: bytes * kept, peakMemory: stages[0]!.peakMemory });
  }
  const est: JobEstimate = {
    sampledUnits: sample.drawn,
    units: sample.units,
    shards: full.shards.length,
    sampledBytes,
    bytes,
    docs: Math.round(docs * byBytes),
    candidates: Math.round(withCopies(candidates, route.candidates, copyCand)),
    candidatesStdError: Math.round(cand.stdError * scaleCand),
    pairs: Math.round(withCopies(pairs, rawPairs, copyPairs)),
    pairsStdError: Math.round(ver.stdError * scalePairs),
    docsInClusters: Math.round(clustered),
    stages,
    partitions: full.partitions,
    overBudget: [],
    sampleMs,
  };
  if (taskMemory !== undefined) {
    // Join's memory past its sample peak's fixed part is PER.joinKeyRow per key row and PER.joinCandRow per candidate row of its partition: the fewest partitions that fit.
    const fixed = Math.max(BASE_RSS, peakOf(join) - PER.joinKeyRow * joinRowsSample - PER.joinCandRow * candRowsSample);
    const perPartitionAll = PER.joinKeyRow * fullKeyRows + PER.joinCandRow * pairRows * candRatio;
    est.partitionsForBudget = taskMemory > fixed ? Math.max(1, Math.ceil(perPartitionAll / (taskMemory - fixed))) : undefined;
    // The join row then states the plan that will run: the chosen partitions and their largest task.
    const joinRow = stages.find((s) => s.stage === 'join');
    if (joinRow && est.partitionsForBudget !== undefined && !options.partitionsGiven) {
      joinRow.tasks = est.partitionsForBudget;
      joinRow.peakMemory = fixed + perPartitionAll / est.partitionsForBudget;
    }
    est.overBudget = stages.filter((s) => s.stage !== 'join' && s.peakMemory > taskMemory).map((s) => s.stage);
  }
  return est;
}
