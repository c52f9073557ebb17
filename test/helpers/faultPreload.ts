/**
 * Loaded into a CLI process a test starts (`node --import`, through NODE_OPTIONS: see ./faults.ts):
 * installs the fault hooks of src/common/faults.ts that the test asked for in its environment.
 */
import { statSync, utimesSync } from 'node:fs';
import { installFaultHooks } from '../../src/common/faults.js';

const ms = (name: string): number => Number(process.env[name] ?? 0);
const pause = (n: number) => (): Promise<void> => new Promise((r) => setTimeout(r, n));

if (ms('NEARDUP_FAULT_PAUSE_MS') > 0) installFaultHooks({ beforeCommit: pause(ms('NEARDUP_FAULT_PAUSE_MS')) });
if (ms('NEARDUP_FAULT_UPLOAD_PAUSE_MS') > 0) installFaultHooks({ afterFirstUpload: pause(ms('NEARDUP_FAULT_UPLOAD_PAUSE_MS')) });
if (process.env.NEARDUP_FAULT_DECIDE_SPILL !== undefined) installFaultHooks({ decideSpillRows: () => Number(process.env.NEARDUP_FAULT_DECIDE_SPILL) });
if (ms('NEARDUP_FAULT_RUNNING_STALE_MS') > 0) installFaultHooks({ runningStaleMs: () => ms('NEARDUP_FAULT_RUNNING_STALE_MS') });
if (process.env.NEARDUP_FAULT_SPANS_HASH_BITS !== undefined) installFaultHooks({ spansHashBits: () => Number(process.env.NEARDUP_FAULT_SPANS_HASH_BITS) });
if (process.env.NEARDUP_FAULT_TABLE_ARENA_MAX !== undefined) installFaultHooks({ tableArenaMax: () => Number(process.env.NEARDUP_FAULT_TABLE_ARENA_MAX) });
if (process.env.NEARDUP_FAULT_TABLE_SLOTS_MAX !== undefined) installFaultHooks({ tableSlotsMax: () => Number(process.env.NEARDUP_FAULT_TABLE_SLOTS_MAX) });
// The first input file is touched (its modification time a second later) when the run first checks its inputs: before its first output is put in place.
if (process.env.NEARDUP_FAULT_TOUCH_INPUT === '1') {
  let done = false;
  installFaultHooks({
    beforeInputCheck: (files) => {
      if (done || files.length === 0) return;
      done = true;
      const st = statSync(files[0]!);
      utimesSync(files[0]!, st.atime, new Date(st.mtimeMs + 1000));
    },
  });
}
if (process.env.NEARDUP_FAULT_FILE_STORE_WORKERS_FROM !== undefined) {
  installFaultHooks({ fileStoreWorkersFrom: () => Number(process.env.NEARDUP_FAULT_FILE_STORE_WORKERS_FROM) });
}
