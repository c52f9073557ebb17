/**
 * A task process of `neardup job … --local` (forked once per core) or of `neardup worker` (one per
 * task run at once): it runs the tasks its parent sends, one at a time, and answers each with the
 * task's marker or its error. Processes rather than threads, so that every task's marker records its
 * own CPU time, and a worker's queue client is not in the heap a task's collections walk.
 * @module
 */
import { InputError, UsageError } from '../common/errors.js';
import type { WorkDir } from '../shard/workdir/workDir.js';
import { openWorkDir } from '../shard/workdir/open.js';
import type { TaskStage } from '../shard/files/job.js';
import type { TaskReply, TaskRequest } from './localTasks.js';

/** What an error becomes on its way to the parent: enough to rebuild it with its exit code. */
function describe(e: unknown): TaskReply['error'] {
  if (e instanceof InputError) return { kind: 'input', message: e.message, file: e.file, line: e.line, reason: e.reason, position: e.position };
  if (e instanceof UsageError) return { kind: 'usage', message: e.message };
  return { kind: 'other', message: e instanceof Error ? e.message : String(e) };
}

/** The work dirs of this process's tasks (one, in practice): a plan in object storage is read once. */
const dirs = new Map<string, WorkDir>();

// The parent decides when a task stops: a worker stopping on SIGTERM or Ctrl-C (sent to the whole
// process group) lets its running task commit first. It ends this process by disconnecting (or
// SIGKILL); a parent that is gone (killed mid-task) disconnects too, and the task runs again elsewhere.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);
process.on('disconnect', () => process.exit(0));

process.on('message', (m: TaskRequest) => {
  void (async () => {
    let reply: TaskReply;
    try {
      let wd = dirs.get(m.workDir);
      if (!wd) dirs.set(m.workDir, wd = openWorkDir(m.workDir));
      reply = { task: m.task, marker: await wd.run(await wd.load(), m.stage as TaskStage, m.task) };
    } catch (e) {
      reply = { task: m.task, error: describe(e) };
    }
    process.send!(reply);
  })();
});
