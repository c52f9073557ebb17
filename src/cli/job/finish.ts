/**
 * The last step of a sharded dedup job: its output written, its audit, and the summary `neardup
 * dedup` prints (human, or --json).
 * @module
 */
import type { JobSpec } from '../../shard/files/job.js';
import { progressOf, summarize, writeJobOutput, type JobSummary } from '../../shard/stages/summary.js';
import type { WorkDir } from '../../shard/workdir/workDir.js';
import { UsageError } from '../../common/errors.js';
import { stageTimings } from '../../shard/workdir/status.js';
import { int, ms, type LogFlags, type Reporter } from '../report.js';
import { candidateProbability } from '../../lsh/params.js';
import { recallJson, recallLine, removedLines } from '../dedup/summary.js';
import { docsLine, outputJson, outputLine, printSummary, removedJson, summaryLine } from '../summary.js';
import { removalLine } from '../../dedup/verifiedGraph.js';
import { auditFormat, checkAuditTarget } from '../../io/write/audit.js';
import { writeJobRemoved } from '../../shard/stages/removed.js';
import { refuseJobAliases } from './run.js';
import { warnSkips } from '../corpus.js';

/** How a job's last step runs: its reporter, when the run started, and (`job report`) whether to first refuse a job whose stages have not all run. */
export interface FinishRun {
  reporter: Reporter;
  started: number;
  finished?: boolean;
}

/**
 * Writes the pairs/clusters output and prints the summary (human, or --json). `finished`: first
 * refuse a job whose stages have not all run (`job report`).
 */
export async function finishJob(wd: WorkDir, job: JobSpec, flags: LogFlags & { out?: string; removed?: string }, run: FinishRun): Promise<JobSummary> {
  const { reporter, started, finished = false } = run;
  if (flags.removed !== undefined && job.output.mode !== 'dedup')
    throw new UsageError(`--removed lists the documents --output dedup drops: this job's output is ${job.output.mode}`);
  // The components stage computes the audit's similarities only for a job planned with --removed.
  if (flags.removed !== undefined && job.output.removed === undefined)
    throw new UsageError('--removed: this job was planned without it, so its components stage did not compute the similarities; plan it with --removed FILE');
  const removedFile = flags.removed ?? job.output.removed;
  await refuseJobAliases(job, flags.out, removedFile);
  if (removedFile !== undefined) {
    auditFormat(removedFile);
    await checkAuditTarget(removedFile);
  }
  const { s, written, stages, removed } = await wd.withView(job, true, async (dir) => {
    if (finished) {
      const unfinished = progressOf(dir, job).filter((p) => p.done < p.total);
      if (unfinished.length > 0)
        throw new UsageError(`the job is not finished: ${unfinished.map((p) => `${p.stage} ${p.done}/${p.total}`).join(', ')} tasks done`);
    }
    const s = summarize(dir, job);
    const written = await writeJobOutput(dir, job, flags.out, s);
    const removed = removedFile !== undefined ? await writeJobRemoved(dir, job, removedFile) : undefined;
    return { s, written, stages: stageTimings(dir, job), removed };
  });
  // As neardup dedup warns once it has read its input: what the shards skipped, naming the first.
  warnSkips(reporter, s.skips);
  // Every output shard is in place: mark the directory complete, as neardup dedup does.
  await wd.markOutput(job, true);
  const workDir = wd.name;
  // A dedup job planned without output shards is a --dry-run.
  const dryRun = job.output.mode === 'dedup' && !job.output.dir;
  const total = performance.now() - started;
  const corpusShards = job.shards.filter((x) => x.side === 0).length;
  const shards = { corpus: corpusShards, reference: job.shards.length - corpusShards };
  printSummary(reporter, flags.json, {
    json: () => ({
      command: 'job dedup',
      workDir,
      input: { shards: shards.corpus, referenceShards: shards.reference, docs: s.docs, emptyDocs: s.emptyDocs, skipped: s.skippedRecords, bytes: s.bytes },
      skippedShards: s.skippedShards,
      options: { threshold: job.threshold, shingle: job.shingle, minhash: job.minhash, verify: 'exact', partitions: job.partitions, against: job.against },
      lsh: { bands: job.bands, rows: job.rows },
      candidates: s.candidates,
      pairs: s.pairs,
      ...recallJson(s.recall, undefined),
      clusters: s.clusters,
      docsInClusters: s.docsInClusters,
      duplicates: s.duplicates,
      ...(s.removal ? { removal: s.removal } : {}),
      ...(job.against ? { matched: s.duplicates, referenceMatched: s.referenceMatched } : {}),
      output: outputJson({
        mode: job.output.mode,
        path: job.output.dir ?? flags.out,
        records: written,
        format: job.output.mode === 'pairs' ? job.output.pairFormat : undefined,
        dryRun,
      }),
      ...removedJson(removedFile, removed),
      // Per stage: tasks, and their markers' wall and CPU times summed (ms); total: this command's wall time.
      timings: { total, stages },
    }),
    lines: () => jobLines({ job, s, stages, total, written, shards, dryRun, out: flags.out, removedFile, removed, verbose: reporter.flags.verbose }),
  });
  return s;
}

/** What the summary lines of a job say. */
interface JobReport {
  job: JobSpec;
  s: JobSummary;
  stages: ReturnType<typeof stageTimings>;
  /** This command's wall time (ms). */
  total: number;
  written: number;
  shards: { corpus: number; reference: number };
  dryRun: boolean;
  out: string | undefined;
  removedFile: string | undefined;
  removed: number | undefined;
  verbose: boolean | undefined;
}

/** The summary lines of a finished job, as neardup dedup prints its own. */
function jobLines(r: JobReport): (string | undefined)[] {
  const { job, s, stages, total } = r;
  // As neardup dedup's time line: per stage, the wall time of its tasks summed (run one after the
  // other by --local, in parallel by workers); total is this command's wall time.
  const names = Object.keys(stages);
  const where = job.output.dir ?? r.out;
  const dropped = s.removal
    ? (s.removal.rule === 'verified' ? s.removal.verifiedDrops! : s.removal.clusterDrops)
    : job.keep === 'none'
    ? s.docsInClusters
    : s.duplicates;
  return [
    docsLine({
      docs: s.docs,
      from: `${r.shards.corpus} shard${r.shards.corpus === 1 ? '' : 's'}${job.against ? ` and ${r.shards.reference} reference shards` : ''}`,
      empty: s.emptyDocs,
      skipped: s.skippedRecords,
    }),
    ...s.skippedShards.map((b) => summaryLine('skipped', `shard ${b.path}: ${b.error}`)),
    summaryLine('lsh', `${job.bands} bands × ${job.rows} rows, ${job.partitions} partition${job.partitions === 1 ? '' : 's'}`),
    summaryLine('candidates', `${int(s.candidates)}`),
    summaryLine('pairs', `${int(s.pairs)} (exact Jaccard ≥ ${job.threshold}${job.against ? ', corpus × reference only' : ''})`),
    recallLine(s.recall, undefined, job.threshold, candidateProbability(job.threshold, job.bands, job.rows)),
    ...(job.against
      ? [
        summaryLine('matched', `${int(s.duplicates)} corpus documents are near duplicates of a reference document`),
        summaryLine('reference', `${int(s.referenceMatched ?? 0)} reference documents are near duplicates of a corpus document`),
      ]
      : [summaryLine('clusters', `${int(s.clusters)}, holding ${int(s.docsInClusters)} docs (${int(s.duplicates)} duplicates beyond one per cluster)`)]),
    s.removal && job.output.mode !== 'pairs' ? removalLine(s.removal) : undefined,
    summaryLine('time', `${names.map((n) => `${n} ${ms(stages[n]!.wall)}`).join(' · ')} · total ${ms(total)}`),
    r.verbose ? summaryLine('cpu', `${names.map((n) => `${n} ${ms(stages[n]!.cpu)}`).join(' · ')} (task CPU, user + system, summed)`) : undefined,
    r.verbose ? summaryLine('tasks', `${names.map((n) => `${n} ${stages[n]!.tasks}`).join(' · ')}`) : undefined,
    where ? outputLine(job.output.mode, r.written, where) : undefined,
    ...removedLines({ dryRun: r.dryRun, removed: r.removedFile, output: job.output.mode }, s.docs - dropped, r.removed),
  ];
}
