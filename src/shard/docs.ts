/**
 * Reading the sign stage's `docs.bin`: each document's id (as `neardup dedup` prints it) and, in a
 * plain line-format shard, where its line lies, by (shard, doc), one shard's rows at a time.
 * @module
 */
import type { ColumnFile } from './columns.js';
import { keepNeedsValues, parseKeepPolicy } from '../dedup/keepPolicy.js';
import { ShardFiles } from './perShard.js';
import { taskOfShard, type JobSpec } from './job.js';
import type { Numbering } from './shardInput.js';

/** One shard's documents. */
export interface ShardDocs {
  /** True when the shard was read in byte ranges: {@link start} and {@link length} place each line. */
  ranged: boolean;
  /** Byte offset of document d's line in the shard. */
  start(d: number): number;
  /** Bytes of document d's line, without its line break. */
  length(d: number): number;
  /** Document d's id: a string from the input, or its global row number (as `neardup dedup` prints them). */
  id(d: number): string | number;
  /** What the job's keep policy ranks document d by (only with a policy that ranks by a value). */
  key(d: number): number;
  /** 0 when {@link key} is a value, 1 when the field is missing, 2 when it is not a number or an ISO date. */
  keyStatus(d: number): number;
  /** The 1-based line of document d in its shard (only with a policy that ranks by a value). */
  line(d: number): number;
}

/** Shard `s`'s rows of its sign task's open docs file. */
function docsOf(job: JobSpec, num: Numbering, f: ColumnFile, s: number): ShardDocs {
  const k = s - job.groups[taskOfShard(job, s)]!;
  const ss = f.f64('sstart', k, k + 2);
  const a = ss[0]!;
  const b = ss[1]!;
  const rows = f.u32('row', a, b);
  const explicit = f.u32('explicit', a, b);
  const starts = f.f64('start', a, b);
  const lengths = f.u32('length', a, b);
  const ids = f.strings('id').lazy(a, b);
  const rowOffset = num.rowOffset[s]!;
  const keyed = job.keep !== undefined && keepNeedsValues(parseKeepPolicy(job.keep));
  const keys = keyed ? f.f64('key', a, b) : undefined;
  const status = keyed ? f.u32('keyStatus', a, b) : undefined;
  const lines = keyed ? f.u32('line', a, b) : undefined;
  const none = (): number => {
    throw new Error(`${job.shards[s]!.path}: its sign task recorded no keep values`);
  };
  return {
    ranged: b > a && starts[0]! >= 0,
    start: (d) => starts[d]!,
    length: (d) => lengths[d]!,
    id: (d) => (explicit[d] ? ids(d) : rowOffset + rows[d]!),
    key: keys ? (d) => keys[d]! : none,
    keyStatus: status ? (d) => status[d]! : none,
    line: lines ? (d) => lines[d]! : none,
  };
}

/** The sign stage's document rows, each task's file opened when first needed and closed together. */
export function jobDocs(workDir: string, job: JobSpec, num: Numbering): ShardFiles<ShardDocs> {
  return new ShardFiles(workDir, job, 'sign', 'docs.bin', 'docs', (f, s) => docsOf(job, num, f, s));
}
