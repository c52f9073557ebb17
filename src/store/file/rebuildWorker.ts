/**
 * Worker-thread entry of checkpoint format 5's open (src/store/file/checkpoint.ts): spreads the
 * key table, or rebuilds the backward links (one worker each), in arrays shared with the main
 * thread (SharedArrayBuffers), while the main thread walks the log for the documents' keys. Why:
 * each is a single pass over large arrays; run one after the other on the main thread they made
 * open ~40 % slower than format 4's at 10^6 documents.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { fromThread } from '../../common/sharedViews.js';
import { runJob, type RebuildJob } from './tablePack.js';

// Said first: a worker that fails before it has touched the shared arrays lets the main thread run the job instead.
parentPort!.postMessage('started');
// The job's arrays come as shared buffers with offsets and lengths (src/common/sharedViews.ts).
parentPort!.postMessage(runJob(fromThread<RebuildJob>(workerData)));
