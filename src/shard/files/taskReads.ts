/**
 * What a task reads besides its own shards' files: the markers of other tasks and some of their
 * files, all computed from the plan (never listed). A work dir that is not a shared file system
 * (src/shard/workdir/s3work.ts) copies exactly these to the task's local spool before it runs the task.
 * @module
 */
import { roundOf, roundStage, shardsOfTask, STAGES, taskCount, taskOfShard, type JobSpec, type StageName, type TaskStage } from './job.js';
import { compressionFromName, formatFromExtension } from '../../io/read/formats.js';

/** The markers of `tasks` of `stage`, and those of their `files` that the markers list. */
export interface TaskRead {
  stage: TaskStage;
  tasks: number[];
  files: string[];
  /**
   * Only these rows of the files: partition p's of a file grouped with `pstart` (a join task's
   * share of the band keys and ids, a task's share of another stage's rows), or those that index
   * entries [from, to) of the column `index` span (a shard group's rows of the join outputs).
   */
  partition?: number | { index: string; from: number; to: number };
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
 * Group t's verified pairs: its shards' rows of the verify `tasks` whose markers say they hold some
 * (route spreads a group's first documents over the verify tasks that balance the candidates:
 * src/shard/stages/route.ts; the tasks: `verifyTasksOfGroup`, src/shard/stages/link.ts).
 */
function verifiedOfGroup(job: JobSpec, t: number, tasks: readonly number[]): TaskRead {
  const { first, end } = shardsOfTask(job, t);
  return { stage: 'verify', tasks: [...tasks], files: ['pairs.bin'], partition: { index: 'astart', from: first, to: end } };
}

/**
 * What task `t` of `stage` reads. Some reads are known only from what earlier ones hold, and are
 * then given as `known`: for verify, the shards its pairs touch ({@link verifyReads},
 * src/shard/stages/verify.ts), whose ids (`docs.bin`), gathered texts and plain shards (read in place at
 * offsets) it reads; for link tasks, the link stage's converged round, then the verify tasks that
 * hold the group's verified pairs; for round 0, those verify tasks (both from the verify markers).
 */
export function taskInputs(job: JobSpec, stage: TaskStage, t: number, known?: readonly number[]): TaskInputs {
  const n = (s: StageName): number[] => every(taskCount(job, s));
  const sign: TaskRead = { stage: 'sign', tasks: n('sign'), files: [] };
  const round = roundOf(stage);
  if (round !== undefined) {
    if (round > 0) return { reads: [sign, { stage: roundStage(round - 1), tasks: n('link'), files: ['edges.bin'], partition: t }], shards: [] };
    const reads = [sign, { stage: 'verify' as const, tasks: n('verify'), files: [] }];
    return { reads: known ? [...reads, verifiedOfGroup(job, t, known)] : reads, shards: [] };
  }
  switch (stage as StageName) {
    case 'sign':
      return { reads: [], shards: groupOf(job, t) };
    case 'join':
      return { reads: [{ stage: 'sign', tasks: n('sign'), files: ['keys.bin', 'ids.bin'], partition: t }], shards: [] };
    case 'link':
      return linkInputs(job, t, known);
    case 'route': {
      const { first, end } = shardsOfTask(job, t);
      return {
        reads: [sign, { stage: 'join', tasks: n('join'), files: ['pairs.bin', 'weights.bin'], partition: { index: 'astart', from: first, to: end } }],
        shards: [],
      };
    }
    case 'gather':
      return { reads: [sign, { stage: 'join', tasks: n('join'), files: ['need.bin'] }], shards: groupOf(job, t) };
    case 'verify':
      return verifyInputs(job, t, known);
    case 'decide':
      return decideInputs(job, t, known);
    case 'components':
      return { reads: [sign, { stage: 'decide', tasks: n('decide'), files: ['clusters.bin', 'members.bin'], partition: t }], shards: [] };
    case 'filter':
      return { reads: [sign, { stage: 'components', tasks: n('components'), files: ['assign.bin'], partition: t }], shards: groupOf(job, t) };
    // A spans job (src/shard/spans/): whole row files, each task's share read from them by offsets.
    case 'spans-anchor':
    case 'spans-anchor-find':
    case 'spans-hash':
    case 'spans-find':
    case 'spans-text':
    case 'spans-decide':
    case 'spans-cut':
      return spansTaskInputs(job, stage as StageName, t);
  }
}

/** {@link taskInputs} of a spans job's stages. */
function spansTaskInputs(job: JobSpec, stage: StageName, t: number): TaskInputs {
  const n = (s: StageName): number[] => every(taskCount(job, s));
  // With anchors, the stages that walk a group's windows read its runs and its repeated anchors.
  const runs = (g: number): TaskRead[] =>
    taskCount(job, 'spans-anchor') === 0 ? [] : [
      { stage: 'spans-anchor', tasks: [g], files: ['runs.u32'] },
      { stage: 'spans-anchor-find', tasks: n('spans-anchor-find'), files: ['repeated.u32'] },
    ];
  switch (stage) {
    case 'spans-anchor':
      return { reads: [], shards: groupOf(job, t) };
    case 'spans-anchor-find':
      return { reads: [{ stage: 'spans-anchor', tasks: n('spans-anchor'), files: ['anchors.u32'] }], shards: [] };
    case 'spans-hash':
      return { reads: runs(t), shards: groupOf(job, t) };
    case 'spans-find':
      return { reads: [{ stage: 'spans-hash', tasks: n('spans-hash'), files: ['units.u32'] }], shards: [] };
    case 'spans-text':
      return { reads: [...runs(t), { stage: 'spans-find', tasks: n('spans-find'), files: ['checks.u32'] }], shards: groupOf(job, t) };
    case 'spans-decide':
      return {
        reads: [{ stage: 'spans-hash', tasks: n('spans-hash'), files: ['units.u32'] }, {
          stage: 'spans-text',
          tasks: n('spans-text'),
          files: ['texts.u32', 'keys.u32'],
        }],
        shards: [],
      };
    case 'spans-cut':
      return {
        reads: [...runs(t), { stage: 'spans-hash', tasks: n('spans-hash'), files: ['docs.json'] }, {
          stage: 'spans-decide',
          tasks: n('spans-decide'),
          files: ['cuts.u32'],
        }],
        shards: groupOf(job, t),
      };
    default:
      throw new Error(`not a spans stage: ${stage}`);
  }
}

/** A link task's reads (see {@link taskInputs}). */
function linkInputs(job: JobSpec, t: number, known: readonly number[] | undefined): TaskInputs {
  const n = (s: StageName): number[] => every(taskCount(job, s));
  const sign: TaskRead = { stage: 'sign', tasks: n('sign'), files: [] };
  // Every round's markers (the converged round's is what the task checks), its partition's
  // labels of that round, and the verified pairs it labels with them: known = [round, then the
  // verify tasks that hold its group's, once their markers are read].
  if (!known) return { reads: [], shards: [] };
  const reads: TaskRead[] = [sign, ...Array.from({ length: known[0]! + 1 }, (_, r) => ({ stage: roundStage(r), tasks: n('link'), files: [] }))];
  const { first, end } = shardsOfTask(job, t);
  reads.push(
    { stage: roundStage(known[0]!), tasks: [t], files: ['labels.bin'] },
    // The copies folded into its group's documents, labelled with their components.
    { stage: 'join', tasks: n('join'), files: ['copies.bin'], partition: { index: 'astart', from: first, to: end } },
    { stage: 'verify', tasks: n('verify'), files: [] },
  );
  if (known.length > 1) reads.push(verifiedOfGroup(job, t, known.slice(1)));
  return { reads, shards: [] };
}

/**
 * The gathered texts of `tasks`, when the job has a gather stage: a job of plain shards only has none
 * (every shard is read in place), and asking for its markers failed every S3 job of such shards.
 */
function gathered(job: JobSpec, tasks: number[]): TaskRead[] {
  return taskCount(job, 'gather') === 0 ? [] : [{ stage: 'gather', tasks, files: ['texts.bin'] }];
}

/** A verify task's reads (see {@link taskInputs}). */
function verifyInputs(job: JobSpec, t: number, known: readonly number[] | undefined): TaskInputs {
  const n = (s: StageName): number[] => every(taskCount(job, s));
  const sign: TaskRead = { stage: 'sign', tasks: n('sign'), files: [] };
  const first: TaskRead[] = [sign, { stage: 'route', tasks: n('route'), files: ['pairs.bin'], partition: t }, {
    stage: 'gather',
    tasks: n('gather'),
    files: [],
  }];
  if (!known) return { reads: first, shards: [] };
  const tasks = [...new Set(known.map((s) => taskOfShard(job, s)))].sort((a, b) => a - b);
  return {
    reads: [...first, { stage: 'sign', tasks, files: ['docs.bin'] }, ...gathered(job, tasks)],
    // Plain shards are read in place; compressed and Parquet ones never are (their texts were gathered).
    shards: known.filter((s) => inPlace(job.shards[s]!.path)),
  };
}

/** A decide task's reads (see {@link taskInputs}). */
function decideInputs(job: JobSpec, t: number, known: readonly number[] | undefined): TaskInputs {
  const n = (s: StageName): number[] => every(taskCount(job, s));
  const sign: TaskRead = { stage: 'sign', tasks: n('sign'), files: [] };
  // Its components' verified pairs; then the ids (and --keep values) of the documents in them,
  // and for similarities to kept members their texts (gathered, or lines of plain shards).
  const first: TaskRead[] = [sign, { stage: 'link', tasks: n('link'), files: ['bylabel.bin', 'copies.bin'], partition: t }, {
    stage: 'gather',
    tasks: n('gather'),
    files: [],
  }];
  if (!known) return { reads: first, shards: [] };
  const tasks = [...new Set(known.map((s) => taskOfShard(job, s)))].sort((a, b) => a - b);
  const texts = (job.removal ?? 'cluster') === 'cluster'
    && (job.output.mode === 'annotate' || (job.output.mode === 'dedup' && job.output.removed !== undefined));
  return {
    reads: [...first, { stage: 'sign', tasks, files: ['docs.bin'] }, ...(texts ? gathered(job, tasks) : [])],
    shards: texts ? known.filter((s) => inPlace(job.shards[s]!.path)) : [],
  };
}

/** What `job report` and `job status` read: every committed marker and, for the report, the files the output and summary are made of. */
export function jobReads(job: JobSpec, report: boolean): TaskRead[] {
  const reads: TaskRead[] = [];
  for (const stage of STAGES) {
    // A job with exact copies has its pairs in the decide tasks' files (listed by their markers only then).
    const files = report && (stage === 'verify' || stage === 'decide')
      ? ['pairs.bin', 'pairs.txt']
      : report && stage === 'components'
      ? ['assign.bin', 'clusters.jsonl']
      : report && stage === 'spans-cut'
      ? ['audit.txt']
      : [];
    reads.push({ stage, tasks: every(taskCount(job, stage)), files });
  }
  return reads;
}
