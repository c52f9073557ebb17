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
 * components with the verified pairs. ./pairEstimate.ts counts the sample's pairs for the job.
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readMarker, requireMarker, taskDir, type MarkerBase } from '../files/commit.js';
import { roundStage, saveJob, STAGES, taskCount, type JobSpec, type StageName } from '../files/job.js';
import { runTasksInProcesses } from '../../run/localTasks.js';
import { shardMarker } from '../files/perShard.js';
import type { SignMarker } from '../files/shardInput.js';
import { estimateClustered } from './clusteredEstimate.js';
import { drawSample, type JobSample } from './sample.js';
import { estimatePairs, pairsOf, verifiedEnds } from './pairEstimate.js';
import type { JoinMarker } from '../stages/join.js';
import type { RouteMarker } from '../stages/route.js';
import { BATCH_DOCS, type VerifyMarker } from '../stages/verify.js';
import type { ComponentsMarker } from '../stages/components.js';
import type { DecideMarker } from '../stages/decide.js';
import type { LinkMarker, LinkRoundMarker } from '../stages/link.js';
import { driveLink } from '../stages/linkDriver.js';
import { ownTempDir } from '../../io/read/inputStamps.js';

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
  const dir = ownTempDir(mkdtempSync(path.join(tmpdir(), 'neardup-estimate-')));
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
    return fromSample({ dir: work, job, full, sample, sampleMs: performance.now() - t0, options });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A completed sample job in `dir`, and the job it stands for. */
interface SampleRun {
  dir: string;
  job: JobSpec;
  full: Omit<JobSpec, 'id' | 'version'>;
  sample: JobSample;
  /** The sample run's wall time (ms). */
  sampleMs: number;
  options: EstimateOptions;
}

/** The estimate from a completed sample job. */
function fromSample(run: SampleRun): JobEstimate {
  const { full, sample } = run;
  const c = sampleCounts(run);
  const stages = [...earlyStages(run, c), ...laterStages(run, c)];
  if (full.output.mode === 'dedup' || full.output.mode === 'annotate') {
    const kept = full.output.mode === 'dedup' ? 1 - c.duplicates / Math.max(1, c.docs) : 1.1;
    stages.push({ stage: 'filter', tasks: c.tasks('filter'), bytesWritten: c.bytes * kept, peakMemory: stages[0]!.peakMemory });
  }
  const est: JobEstimate = {
    sampledUnits: sample.drawn,
    units: sample.units,
    shards: full.shards.length,
    sampledBytes: sample.bytes,
    bytes: c.bytes,
    docs: Math.round(c.docs * c.byBytes),
    candidates: Math.round(withCopies(c.candidates, c.route.candidates, c.copyCand, c.byBytes)),
    candidatesStdError: Math.round(c.cand.stdError * c.scaleCand),
    pairs: Math.round(withCopies(c.pairs, c.rawPairs, c.copyPairs, c.byBytes)),
    pairsStdError: Math.round(c.ver.stdError * c.scalePairs),
    docsInClusters: Math.round(c.clustered),
    stages,
    partitions: full.partitions,
    overBudget: [],
    sampleMs: run.sampleMs,
  };
  if (run.options.taskMemory !== undefined) fitBudget(est, run, c);
  return est;
}

/** A count of representatives' pairs scaled to the document pairs they stand for (a sample of copies alone: by its bytes). */
function withCopies(estimate: number, sampled: number, copies: number, byBytes: number): number {
  return sampled > 0 ? (estimate * (sampled + copies)) / sampled : copies * byBytes;
}

type SampleCounts = ReturnType<typeof sampleCounts>;

/** Reads the sample job's markers and pairs: its counts, and the ratios that scale them to the whole job. */
function sampleCounts({ dir, job, full, sample }: SampleRun) {
  const bytes = full.shards.reduce((a, s) => a + s.identity.size, 0);
  const byBytes = bytes / Math.max(1, sample.bytes);
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
  const sCand = Math.max(1, route.candidates);
  const sPairs = Math.max(1, verify.reduce((a, m) => a + m.pairs, 0));
  // The files hold pairs of representatives (join folds exact copies); the counts, as the job's, count every document pair they stand for (withCopies).
  const copyCand = routes.reduce((a, m) => a + (m.copyCandidates ?? 0), 0) + join.reduce((a, m) => a + (m.copyPairs ?? 0), 0);
  const copyPairs = decide.reduce((a, m) => a + (m.copyPairs ?? 0), 0);
  const rawPairs = verify.reduce((a, m) => a + m.pairs, 0);
  const fullJob = { ...full, id: '', version: 0 } as JobSpec;
  // Clustered documents: a sample sees clusters in pieces (src/shard/plan/clusteredEstimate.ts); components' outputs and memory grow with them.
  const clustered = estimateClustered(ends, sample.units, k);
  return {
    bytes,
    byBytes,
    docs,
    keyRows,
    join,
    link,
    routes,
    route,
    verify,
    comps,
    decide,
    docsInClusters,
    duplicates,
    cand,
    ver,
    candidates: cand.estimate,
    pairs: ver.estimate,
    sCand,
    sPairs,
    candRatio: cand.estimate / sCand,
    pairRatio: ver.estimate / sPairs,
    copyCand,
    copyPairs,
    rawPairs,
    scaleCand: route.candidates > 0 ? (route.candidates + copyCand) / route.candidates : 1,
    scalePairs: rawPairs > 0 ? (rawPairs + copyPairs) / rawPairs : 1,
    pairRows: join.reduce((a, m) => a + m.pairRows, 0),
    fullKeyRows: keyRows * byBytes,
    tasks: (stage: StageName): number => taskCount(fullJob, stage),
    clustered,
  };
}

/** Join's key and candidate rows per partition, in the sample and in the whole job. */
function joinRows({ job, full }: SampleRun, c: SampleCounts): { keysSample: number; keysFull: number; candSample: number; candFull: number } {
  return {
    keysSample: c.keyRows / job.partitions,
    keysFull: c.fullKeyRows / full.partitions,
    candSample: c.pairRows / job.partitions,
    candFull: (c.pairRows * c.candRatio) / full.partitions,
  };
}

/** The forecasts of sign, join, route and gather. */
function earlyStages(run: SampleRun, c: SampleCounts): StageEstimate[] {
  const { dir, job, full } = run;
  const { tasks, byBytes, candRatio, join, routes, pairRows } = c;
  const stages: StageEstimate[] = [];
  // Per-shard stages: the whole job's tasks are groups of the same size as the sample's; a task's memory grows with its
  // group's bytes, which are the same in the sample (groups of --task-bytes) unless the job's shards are larger (one shard, one task).
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
  // Join holds its partition's key rows and emits its candidate rows; route and components grow with pairs.
  const rows = joinRows(run, c);
  stages.push({
    stage: 'join',
    tasks: tasks('join'),
    bytesWritten: writtenOf(join) * (pairRows > 0 ? candRatio : byBytes),
    peakMemory: grown(peakOf(join), [PER.joinKeyRow, rows.keysSample, rows.keysFull], [PER.joinCandRow, rows.candSample, rows.candFull]),
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
  return stages;
}

/** The forecasts of verify, link, decide and components. */
function laterStages({ dir, job }: SampleRun, c: SampleCounts): StageEstimate[] {
  const { tasks, byBytes, pairRatio, verify, link, decide, comps, docs, sCand, sPairs, candidates, pairs, route, docsInClusters, clustered } = c;
  const stages: StageEstimate[] = [];
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
  const clusteredRatio = clustered / Math.max(1, docsInClusters);
  // A decide task holds its group's components' verified pairs (24 B each, and the clustering's) and members: it grows with the verified pairs per task.
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
  return stages;
}

/** With a task memory budget: the fewest join partitions that fit, the join row stated at them (unless the user gave the partitions), and the stages past it. */
function fitBudget(est: JobEstimate, run: SampleRun, c: SampleCounts): void {
  const taskMemory = run.options.taskMemory!;
  const rows = joinRows(run, c);
  // Join's memory past its sample peak's fixed part is PER.joinKeyRow per key row and PER.joinCandRow per candidate row of its partition: the fewest partitions that fit.
  const fixed = Math.max(BASE_RSS, peakOf(c.join) - PER.joinKeyRow * rows.keysSample - PER.joinCandRow * rows.candSample);
  const perPartitionAll = PER.joinKeyRow * c.fullKeyRows + PER.joinCandRow * c.pairRows * c.candRatio;
  est.partitionsForBudget = taskMemory > fixed ? Math.max(1, Math.ceil(perPartitionAll / (taskMemory - fixed))) : undefined;
  // The join row then states the plan that will run: the chosen partitions and their largest task.
  const joinRow = est.stages.find((s) => s.stage === 'join');
  if (joinRow && est.partitionsForBudget !== undefined && !run.options.partitionsGiven) {
    joinRow.tasks = est.partitionsForBudget;
    joinRow.peakMemory = fixed + perPartitionAll / est.partitionsForBudget;
  }
  est.overBudget = est.stages.filter((s) => s.stage !== 'join' && s.peakMemory > taskMemory).map((s) => s.stage);
}
