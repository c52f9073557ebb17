/**
 * The end of a job: its counters gathered from the task markers, and its single-file outputs
 * (pairs, clusters) assembled from the task outputs, in the same formats as `neardup dedup`.
 * @module
 */
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { openOutput, type OutputSink } from '../../io/write/output.js';
import { pairHeader } from '../../io/write/write.js';
import { readMarker, requireMarker, taskText, type TaskRef } from '../files/commit.js';
import type { RecallEstimate } from '../../lsh/recallEstimate.js';
import { STAGES, taskCount, type JobSpec } from '../files/job.js';
import { shardMarker } from '../files/perShard.js';
import { SkippedRecords, type SignMarker } from '../files/shardInput.js';
import type { SkipReport } from '../../io/read/record.js';
import type { JoinMarker } from './join.js';
import type { VerifyMarker } from './verify.js';
import { clusterTotals } from './components.js';
import { writeVerifiedLines } from '../files/verified.js';
import type { RemovalSummary } from '../../dedup/verifiedGraph.js';
import type { FilterMarker } from './filter.js';
import type { RouteMarker } from './route.js';
import type { DecideMarker } from './decide.js';
import { jobHasCopies, tooManyPairs } from './copyPairs.js';

/** A finished job's counters. */
export interface JobSummary {
  shards: number;
  docs: number;
  emptyDocs: number;
  chars: number;
  bytes: number;
  /** Invalid records skipped inside shards (--skip-invalid). */
  skippedRecords: number;
  /** Those records for the warning about them: the first one's file, line and problem, the count per shard. */
  skips: SkipReport;
  /** Shards left out because they failed to read (--on-bad-shard skip), with the reader's error. */
  skippedShards: { path: string; error: string }[];
  sharedBuckets: number;
  largestBucket: number;
  candidates: number;
  pairs: number;
  clusters: number;
  docsInClusters: number;
  /** Beyond one per cluster; with --against, corpus documents matching the reference. */
  duplicates: number;
  /** Records written by the filter stage. */
  written: number;
  /** With --against: reference documents with a match among the corpus documents. */
  referenceMatched?: number;
  /** What each removal rule drops (absent with --against and for jobs of an older neardup). */
  removal?: RemovalSummary;
  /** The run's recall estimated from its verified pairs' similarities, as `neardup dedup` prints it. */
  recall: RecallEstimate;
}

/** Counts of completed tasks per stage (for progress). */
export function progressOf(workDir: string, job: JobSpec): { stage: string; done: number; total: number }[] {
  return STAGES.map((stage) => {
    const total = taskCount(job, stage);
    let done = 0;
    for (let t = 0; t < total; t++) if (readMarker(workDir, job, stage, t)) done++;
    return { stage, done, total };
  });
}

/** The counters of a completed job. */
export function summarize(workDir: string, job: JobSpec): JobSummary {
  const S = job.shards.length;
  for (let g = 0; g < taskCount(job, 'components'); g++) requireMarker(workDir, job, 'components', g);
  const c = clusterTotals(workDir, job);
  const sum: JobSummary = {
    shards: S,
    docs: 0,
    emptyDocs: 0,
    chars: 0,
    bytes: 0,
    skippedRecords: 0,
    skips: { count: 0, first: undefined },
    skippedShards: [],
    sharedBuckets: 0,
    largestBucket: 0,
    candidates: 0,
    pairs: 0,
    written: 0,
    clusters: c.clusters,
    docsInClusters: c.docsInClusters,
    duplicates: c.duplicates,
    ...(c.referenceMatched !== undefined ? { referenceMatched: c.referenceMatched } : {}),
    ...(c.removal !== undefined ? { removal: c.removal } : {}),
    recall: c.recall,
  };
  const skips = new SkippedRecords(job);
  for (let s = 0; s < S; s++) {
    const m = shardMarker<SignMarker>(workDir, job, 'sign', s);
    skips.add(s, m.skippedRecords, m.firstSkip);
    skips.addMultiline(m.multiline, m.firstMultiline);
    sum.docs += m.docs;
    sum.emptyDocs += m.emptyDocs;
    sum.chars += m.chars;
    sum.bytes += m.bytes;
    if (m.skipped) sum.skippedShards.push({ path: job.shards[s]!.path, error: m.skipped });
    if (taskCount(job, 'filter') > 0) sum.written += shardMarker<FilterMarker>(workDir, job, 'filter', s).written;
  }
  sum.skippedRecords = skips.count;
  sum.skips = skips.report();
  for (let t = 0; t < taskCount(job, 'verify'); t++) {
    const v = requireMarker<VerifyMarker>(workDir, job, 'verify', t);
    sum.candidates += v.candidates;
    sum.pairs += v.pairs;
  }
  // Copies folded by join count as `neardup dedup` counts them: every document pair they stand for.
  for (let t = 0; t < taskCount(job, 'route'); t++) sum.candidates += requireMarker<RouteMarker>(workDir, job, 'route', t).copyCandidates ?? 0;
  for (let t = 0; t < taskCount(job, 'decide'); t++) sum.pairs += requireMarker<DecideMarker>(workDir, job, 'decide', t).copyPairs ?? 0;
  for (let p = 0; p < job.partitions; p++) {
    const j = requireMarker<JoinMarker>(workDir, job, 'join', p);
    sum.candidates += j.copyPairs ?? 0;
    sum.sharedBuckets += j.sharedBuckets;
    sum.largestBucket = Math.max(sum.largestBucket, j.largestBucket);
  }
  return sum;
}

/** A task's text output, its size and SHA-256 checked against its marker before anything of it is written. */
async function checkedText(at: TaskRef & { job: JobSpec }, name: string): Promise<string> {
  const t = taskText(at, requireMarker(at.workDir, at.job, at.stage, at.task), name);
  return checkedFile(t);
}

async function checkedFile(t: { path: string; verify(hash: string): void }): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(t.path, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  t.verify(h.digest('hex'));
  return t.path;
}

async function copyInto(sink: OutputSink, file: string): Promise<void> {
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 })) await sink.write(chunk as string);
}

/**
 * Writes the job's pairs or clusters to `out` (a file, written atomically, or stdout for undefined
 * or `-`): the verify outputs' lines merged into global order (`verified.ts`), or the components'
 * clusters. Returns the records written. dedup/annotate outputs are the filter stage's.
 */
export async function writeJobOutput(workDir: string, job: JobSpec, out: string | undefined, counts: JobSummary): Promise<number> {
  if (job.output.mode !== 'pairs' && job.output.mode !== 'clusters') return counts.written;
  // Every part is checked before the first byte goes out: stdout cannot be taken back.
  const files: string[] = [];
  // With exact copies folded, the decide tasks list every pair they stand for (copyPairs.ts).
  const stage = job.output.mode === 'pairs' && !job.against && jobHasCopies(workDir, job) ? 'decide' : 'verify';
  if (stage === 'decide' && counts.pairs > job.maxBucketPairs) throw tooManyPairs(counts.pairs, job);
  if (job.output.mode === 'pairs') {
    for (let t = 0; t < taskCount(job, stage); t++) files.push(await checkedText({ workDir, job, stage, task: t }, 'pairs.txt'));
  } else for (let g = 0; g < taskCount(job, 'components'); g++) files.push(await checkedText({ workDir, job, stage: 'components', task: g }, 'clusters.jsonl'));
  const sink = await openOutput(out);
  try {
    if (job.output.mode === 'pairs') {
      await sink.write(pairHeader(job.output.pairFormat, false));
      // Pieces end at line ends, so a sink without writeBytes can take them decoded.
      await writeVerifiedLines(workDir, job, (b) => (sink.writeBytes ? sink.writeBytes(b) : sink.write(b.toString('utf8'))), stage);
    } else {
      for (const f of files) await copyInto(sink, f);
    }
    await sink.close();
  } catch (e) {
    await sink.abort();
    throw e;
  }
  return job.output.mode === 'pairs' ? counts.pairs : counts.clusters;
}
