/**
 * Test helper: the environment that makes the CLI processes a test starts (and the task processes
 * they start) pause or age at the fault points of src/common/faults.ts: NODE_OPTIONS loads
 * ./faultPreload.ts, which reads the hooks' settings from these variables.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Where a test wants its processes to stop, in milliseconds. */
export interface Faults {
  /** A task pauses after writing its temp output, before its commit. */
  pauseMs?: number;
  /** A task on an S3 work dir pauses after the first object of its attempt is uploaded. */
  uploadPauseMs?: number;
  /** A running record older than this counts as a dead task's. */
  runningStaleMs?: number;
  /** Decide spills past this many pairs, in buckets of as many rows. */
  decideSpillRows?: number;
  /** Spans unit hashes masked to this many bits (collisions everywhere). */
  spansHashBits?: number;
  /** A file store's open rebuilds its table in worker threads from this many documents (0: always). */
  fileStoreWorkersFrom?: number;
  /** Bytes the band table's records may take (a table full after a few documents). */
  tableArenaMax?: number;
  /** Document slots the band table may hold (a table full after a few documents). */
  tableSlotsMax?: number;
}

const preload = pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), 'faultPreload.js')).href;

/** Environment variables for a child process that installs `faults` (keeping any NODE_OPTIONS of this process). */
export function faultEnv(faults: Faults): Record<string, string> {
  const env: Record<string, string> = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import="${preload}"`.trim() };
  if (faults.pauseMs !== undefined) env.NEARDUP_FAULT_PAUSE_MS = String(faults.pauseMs);
  if (faults.uploadPauseMs !== undefined) env.NEARDUP_FAULT_UPLOAD_PAUSE_MS = String(faults.uploadPauseMs);
  if (faults.decideSpillRows !== undefined) env.NEARDUP_FAULT_DECIDE_SPILL = String(faults.decideSpillRows);
  if (faults.spansHashBits !== undefined) env.NEARDUP_FAULT_SPANS_HASH_BITS = String(faults.spansHashBits);
  if (faults.runningStaleMs !== undefined) env.NEARDUP_FAULT_RUNNING_STALE_MS = String(faults.runningStaleMs);
  if (faults.fileStoreWorkersFrom !== undefined) env.NEARDUP_FAULT_FILE_STORE_WORKERS_FROM = String(faults.fileStoreWorkersFrom);
  if (faults.tableArenaMax !== undefined) env.NEARDUP_FAULT_TABLE_ARENA_MAX = String(faults.tableArenaMax);
  if (faults.tableSlotsMax !== undefined) env.NEARDUP_FAULT_TABLE_SLOTS_MAX = String(faults.tableSlotsMax);
  return env;
}

/** Runs `fn` with this process's environment set as {@link faultEnv} gives (for processes it starts meanwhile), then restores it. */
export function withFaultEnv<T>(faults: Faults, fn: () => T): T {
  const env = faultEnv(faults);
  const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
  Object.assign(process.env, env);
  try {
    return fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
