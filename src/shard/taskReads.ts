/**
 * What a task reads besides its own shards' files: the markers of other tasks and some of their
 * files, all computed from the plan (never listed). A work dir that is not a shared file system
 * (src/shard/s3work.ts) copies exactly these to the task's local spool before it runs the task.
 * @module
 */
import { shardsOfTask, STAGES, taskCount, taskOfShard, type JobSpec, type StageName } from './job.js';
import { compressionFromName, formatFromExtension } from '../io/formats.js';

/** The markers of `tasks` of `stage`, and those of their `files` that the markers list. */
export interface TaskRead {
  stage: StageName;
  tasks: number[];
  files: string[];
  /** Only this partition's rows of the files (partitioned column files: a join task's share of the band keys and ids). */
  partition?: number;
}

/** What a task reads: other tasks' markers and files, and input shards (by number). */
export interface TaskInputs {
  reads: TaskRead[];
  shards: number[];
}

/** Whether verify may read a shard in place (by offsets): not when its name says compressed or Parquet. Erring towards yes only copies a shard more. */
function inPlace(name: string): boolean {
  return compressionFromName(name) === undefined && formatFromExtension(name) !== 'parquet';
}

const every = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

function groupOf(job: JobSpec, t: number): number[] {
  const { first, end } = shardsOfTask(job, t);
  return Array.from({ length: end - first }, (_, i) => first + i);
}

/**
 * What task `t` of `stage` reads. Verify reads in two steps: first the routed pairs, from which
 * {@link verifyReads} (src/shard/verify.ts) tells the shards its pairs touch, then, given those as
 * `partners`, their ids (`docs.bin`), gathered texts and plain shards (read in place at offsets).
 */
export function taskInputs(job: JobSpec, stage: StageName, t: number, partners?: readonly number[]): TaskInputs {
  const n = (s: StageName): number[] => every(taskCount(job, s));
  switch (stage) {
    case 'sign':
      return { reads: [], shards: groupOf(job, t) };
    case 'join':
      return { reads: [{ stage: 'sign', tasks: n('sign'), files: ['keys.bin', 'ids.bin'], partition: t }], shards: [] };
    case 'route':
      return { reads: [{ stage: 'sign', tasks: n('sign'), files: [] }, { stage: 'join', tasks: n('join'), files: ['pairs.bin'] }], shards: [] };
    case 'gather':
      return { reads: [{ stage: 'sign', tasks: n('sign'), files: [] }, { stage: 'join', tasks: n('join'), files: ['need.bin'] }], shards: groupOf(job, t) };
    case 'verify': {
      const first: TaskRead[] = [
        { stage: 'sign', tasks: n('sign'), files: [] },
        { stage: 'route', tasks: [0], files: ['pairs.bin'] },
        { stage: 'gather', tasks: n('gather'), files: [] },
      ];
      if (!partners) return { reads: first, shards: [] };
      const tasks = [...new Set(partners.map((s) => taskOfShard(job, s)))].sort((a, b) => a - b);
      return {
        reads: [...first, { stage: 'sign', tasks, files: ['docs.bin'] }, { stage: 'gather', tasks, files: ['texts.bin'] }],
        // Plain shards are read in place; compressed and Parquet ones never are (their texts were gathered).
        shards: partners.filter((s) => inPlace(job.shards[s]!.path)),
      };
    }
    case 'components':
      // Tags and the --removed audit: the similarity of a member to a kept member it was never
      // verified with is computed from their texts, read from the corpus shards (which of them is
      // known only later).
      return {
        reads: [{ stage: 'sign', tasks: n('sign'), files: ['docs.bin'] }, { stage: 'verify', tasks: n('verify'), files: ['pairs.bin'] }],
        shards: job.output.mode === 'annotate' || (job.output.mode === 'dedup' && job.output.removed !== undefined) ? job.shards.flatMap((x, s) => (x.side === 0 ? [s] : [])) : [],
      };
    case 'filter':
      return { reads: [{ stage: 'sign', tasks: n('sign'), files: [] }, { stage: 'components', tasks: [0], files: ['assign.bin'] }], shards: groupOf(job, t) };
  }
}

/** What `job report` and `job status` read: every committed marker and, for the report, the files the output and summary are made of. */
export function jobReads(job: JobSpec, report: boolean): TaskRead[] {
  const reads: TaskRead[] = [];
  for (const stage of STAGES) {
    const files = report && stage === 'verify' ? ['pairs.bin', 'pairs.txt'] : report && stage === 'components' ? ['assign.bin', 'clusters.jsonl'] : [];
    reads.push({ stage, tasks: every(taskCount(job, stage)), files });
  }
  return reads;
}
