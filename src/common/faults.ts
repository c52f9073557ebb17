/**
 * Places where a test stops a task, ages its records or forces a path at a known point: a task
 * paused before its commit or between its uploads is killed there; a small job's decide spills. Production code calls these hooks; they do
 * nothing unless a test installed them in the process (test/helpers/faultPreload.ts, which the CLI
 * processes a test starts load with `node --import`), so nothing a user sets reaches them.
 * @module
 */

/** The hooks; each one missing is a no-op. */
export interface FaultHooks {
  /** A task has written its temp output and is about to commit it. */
  beforeCommit?: () => Promise<void>;
  /** A task on an S3 work dir has uploaded the first object of its attempt; the rest and its marker are next. */
  afterFirstUpload?: () => Promise<void>;
  /** How old a running record of an S3 work dir must be to count as a dead task's, instead of the default. */
  runningStaleMs?: () => number;
  /** Decide's spill limit in pairs (also its bucket rows), instead of the one from the plan: sends small data out of core. */
  decideSpillRows?: () => number;
  /** A file store's compaction has written and synced its new files ('written') or switched its manifest to them ('switched'). */
  fileStoreCompact?: (stage: 'written' | 'switched') => Promise<void>;
  /** Log bytes between a file store's checkpoints, instead of the default (64 MiB or an eighth of the log): tests take them often. */
  fileStoreCheckpointEvery?: () => number;
  /** Documents from which a file store's open rebuilds its table in worker threads, instead of 2^18: tests take that path on small stores. */
  fileStoreWorkersFrom?: () => number;
  /** The script a file store's rebuild worker runs, instead of its own (a test names one that does not load). */
  fileStoreRebuildScript?: () => URL;
  /** A file store is about to write its checkpoint (a test throws here: a disk that fills up). */
  fileStoreCheckpoint?: () => Promise<void>;
  /** A file store's checkpoint file is written and synced, about to be renamed into place (outside the store's writes). */
  fileStoreCheckpointCommit?: () => Promise<void>;
  /** Bytes of a file store checkpoint's write buffer, instead of 16 MiB: tests write in many small chunks. */
  fileStoreCheckpointChunk?: () => number;
  /** Bytes the band table's records may take in memory, instead of 2^32: tests fill a table up. */
  tableArenaMax?: () => number;
  /** Document slots the band table may hold, instead of ⌊(2^31 − 1) / keys per slot⌋: tests fill a table up. */
  tableSlotsMax?: () => number;
  /** Bits of a spans unit hash kept (both lanes masked to them), so that different units collide often: tests of exactness. */
  spansHashBits?: () => number;
  /** A run is about to check that its input files are as it first read them (src/io/read/inputStamps.ts): a test changes one here. */
  beforeInputCheck?: (files: string[]) => void;
}

// Kept on the process, not in this module: the CLI is a bundle (dist/cli) with a copy of this
// module of its own, and a preload installs through the library's copy (dist/src).
const KEY = Symbol.for('neardup.faultHooks');
const hooks = (): FaultHooks => ((globalThis as { [KEY]?: FaultHooks })[KEY] ??= {});

/** Installs hooks in this process (a test's preload does; see the module comment). */
export function installFaultHooks(h: FaultHooks): void {
  Object.assign(hooks(), h);
}

/** The hooks installed in this process. */
export function faultHooks(): Readonly<FaultHooks> {
  return hooks();
}
