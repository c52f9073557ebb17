/**
 * Worker-thread entry of a file store's open from its checkpoint (src/store/file/checkpoint.ts):
 * spreads the key table, or rebuilds the forward links (one worker each), in arrays shared with
 * the main thread (SharedArrayBuffers). Why: each is a single pass over large arrays, and the two
 * run at once.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { fromThread } from '../../common/sharedViews.js';
import { runJob, type RebuildJob } from './tablePack.js';

// Said first: a worker that fails before it has touched the shared arrays lets the main thread run the job instead.
parentPort!.postMessage('started');
// The job's arrays come as shared buffers with offsets and lengths (src/common/sharedViews.ts).
parentPort!.postMessage(runJob(fromThread<RebuildJob>(workerData)));
