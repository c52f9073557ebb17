/**
 * When a decide task spills its verified pairs, and how many rows it holds at once: from the
 * plan's task-memory budget when it has one, else fixed. A test's `decideSpillRows` hook
 * (src/common/faults.ts) sets both (a task over `rows` pairs spills, in buckets of `rows`): how
 * tests send small data out of core.
 * @module
 */
import { faultHooks } from '../../common/faults.js';

/** Pairs a decide task holds in memory without a budget: about 150 MB at 72 bytes a pair. */
export const DEFAULT_SPILL_PAIRS = 2_000_000;
/** The fewest pairs a budget lets a task hold (spill files of smaller buckets cost more than they save). */
const MIN_SPILL_PAIRS = 65_536;
/** Bytes a pair costs held in memory (docs/distributed.md, src/shard/plan/decideForecast.ts). */
export const PAIR_BYTES_IN_MEMORY = 72;

/** A decide task's spill limits. */
export interface SpillLimits {
  /** A task with more verified pairs than this spills them. */
  pairs: number;
  /** Most rows a bucket holds (each row 16 bytes on disk, about 24 read back). */
  rows: number;
}

/** The spill limits of a job with task-memory budget `budget` (bytes; undefined: none); `forced`: a test's rows (see the module comment). */
export function spillLimits(budget: number | undefined, forced: number | undefined = faultHooks().decideSpillRows?.()): SpillLimits {
  if (forced !== undefined && Number.isInteger(forced) && forced >= 0) return { pairs: forced, rows: Math.max(1, forced) };
  // Half the budget for pairs held in memory; the rest is the task's documents and its base.
  const pairs = budget === undefined ? DEFAULT_SPILL_PAIRS : Math.max(MIN_SPILL_PAIRS, Math.floor(budget / 2 / PAIR_BYTES_IN_MEMORY));
  return { pairs, rows: pairs };
}
