/**
 * The task processes that run a job's tasks for `job --local` and for `neardup worker`
 * (src/run/localTasks.ts): a task runs in a process of its own started with the task flags, and
 * answers with the marker it committed; a task process serves one stage (another stage's task gets a
 * fresh one); an input error comes back as the same error; a task process
 * that dies, idle or in a task, is replaced and the task it held is refused, never left waiting, the
 * refusal quoting its last lines on stderr (an uncaught error's); no more than `size` tasks run at
 * once; closing ends them all.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { isUserError } from '../../src/common/errors.js';
import { TASK_PROCESS_FLAGS, TaskProcesses } from '../../src/run/localTasks.js';
import { readMarker } from '../../src/shard/files/commit.js';
import { loadJob, taskCount, type StageName, type TaskStage } from '../../src/shard/files/job.js';

import { neardup, tmpDir } from '../cliUtil.js';
import { plantedDocs, writeShards } from '../helpers/shards.js';
import { withFaultEnv } from '../helpers/faults.js';
import { pathToFileURL } from 'node:url';

/** Whether `pid` runs (a zombie does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(ok(), what);
}

describe('task processes', () => {
  let dir: string;
  let work: string;
  let bad: string;
  const pools: TaskProcesses[] = [];
  const pool = (size: number): TaskProcesses => {
    const p = new TaskProcesses(size);
    pools.push(p);
    return p;
  };
  before(async () => {
    dir = tmpDir();
    const shards = path.join(dir, 'shards');
    fs.mkdirSync(shards);
    await writeShards(shards, plantedDocs(300, 0.3, 17), 4, ['jsonl']);
    work = path.join(dir, 'work');
    const r = neardup(['job', 'plan', shards, '--id-field', 'id', '--task-bytes', '1', '--work-dir', work], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    // A job whose second shard holds a broken record.
    const badShards = path.join(dir, 'bad-shards');
    fs.cpSync(shards, badShards, { recursive: true });
    const victim = path.join(badShards, fs.readdirSync(badShards).sort()[1]!);
    fs.writeFileSync(victim, fs.readFileSync(victim, 'utf8').replace(/\n[^\n]*\n/, '\n{"id": "x", "text": \n'));
    bad = path.join(dir, 'bad');
    const b = neardup(['job', 'plan', badShards, '--id-field', 'id', '--task-bytes', '1', '--work-dir', bad], { cwd: dir });
    assert.equal(b.code, 0, b.stderr);
  });
  after(() => {
    for (const p of pools) p.close();
  });

  it('runs a task in a process of its own, started with the task flags, and answers with its committed marker', async () => {
    const p = pool(1);
    const marker = (await p.runOne(work, 'sign', 0)) as { stats: { pid: number } };
    assert.notEqual(marker.stats.pid, process.pid);
    assert.deepEqual(marker, readMarker(work, loadJob(work), 'sign', 0));
    const argv = fs.readFileSync(`/proc/${marker.stats.pid}/cmdline`, 'utf8').split('\0');
    for (const f of TASK_PROCESS_FLAGS) assert.ok(argv.includes(f), argv.join(' '));
    // The next task goes to the same (kept) process.
    const again = (await p.runOne(work, 'sign', 1)) as { stats: { pid: number } };
    assert.equal(again.stats.pid, marker.stats.pid);
    p.close();
    await until('the task process ended on close', () => !running(marker.stats.pid));
  });

  it('a task process serves one stage: a task of another stage gets a fresh one, and prepare() starts it ahead', async () => {
    const w2 = path.join(dir, 'work-stages');
    const r = neardup(['job', 'plan', path.join(dir, 'shards'), '--id-field', 'id', '--task-bytes', '1', '--work-dir', w2], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const job = loadJob(w2);
    const p = pool(1);
    const pidOf = async (stage: Parameters<TaskProcesses['runOne']>[1], t: number): Promise<number> =>
      ((await p.runOne(w2, stage, t)) as { stats: { pid: number } }).stats.pid;
    const signs: number[] = [];
    for (let t = 0; t < 4; t++) signs.push(await pidOf('sign', t));
    assert.equal(new Set(signs).size, 1, 'the sign tasks share their process');
    const join = await pidOf('join', 0);
    assert.notEqual(join, signs[0]);
    await until("sign's task process ended", () => !running(signs[0]!));
    for (let t = 1; t < job.partitions; t++) assert.equal(await pidOf('join', t), join, 'the join tasks share theirs');
    // Ahead of the next stage (as job --local does while a one-task stage runs in the submitter).
    p.prepare('route');
    await until("join's task process ended", () => !running(join));
    const route = await pidOf('route', 0);
    assert.ok(![join, signs[0]].includes(route));
    p.close();
  });

  it("a stage run with the next stage readies that stage's fresh processes as its lanes run out, and they take its tasks", async () => {
    const w3 = path.join(dir, 'work-next');
    const r = neardup(['job', 'plan', path.join(dir, 'shards'), '--id-field', 'id', '--task-bytes', '1', '--work-dir', w3], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const job = loadJob(w3);
    assert.ok(taskCount(job, 'sign') >= 2 && job.partitions >= 2);
    const p = pool(2);
    const pidsOf = (stage: StageName, n = taskCount(job, stage as StageName)): number[] =>
      Array.from({ length: n }, (_, t) => (readMarker(w3, job, stage, t) as { stats: { pid: number } }).stats.pid);
    const ready = (stage: TaskStage): number[] => p.processes.filter((x) => x.stage === stage && !x.busy).map((x) => x.pid);
    const all = (n: number): number[] => Array.from({ length: n }, (_, t) => t);
    await p.run(w3, 'sign', all(taskCount(job, 'sign')), { next: { stage: 'join', processes: 2 } });
    const forJoin = ready('join');
    assert.equal(forJoin.length, 2, JSON.stringify(p.processes));
    const signs = new Set(pidsOf('sign'));
    assert.ok(forJoin.every((x) => !signs.has(x)), 'fresh processes, not the sign ones');
    for (const x of signs) await until(`sign's task process ${x} ended`, () => !running(x));
    await p.run(w3, 'join', all(job.partitions), { next: { stage: 'route', processes: 1 } });
    assert.ok(pidsOf('join').every((x) => forJoin.includes(x)), 'join ran on the readied processes');
    const forRoute = ready('route');
    assert.equal(forRoute.length, 1, JSON.stringify(p.processes));
    assert.equal(p.processes.length, 1, "join's processes ended, none idle beside route's");
    // One task on two lanes: the spare place starts the stage after it while it runs.
    await p.run(w3, 'route', [0], { next: { stage: 'gather', processes: 2 } });
    assert.deepEqual(pidsOf('route', 1), forRoute);
    assert.equal(ready('gather').length, 2, JSON.stringify(p.processes));
    assert.ok(!ready('gather').includes(forRoute[0]!));
    p.close();
  });

  it('an input error comes back as the same user error, naming file and line', async () => {
    const p = pool(1);
    const e = await p.runOne(bad, 'sign', 1).then(
      () => assert.fail('the broken shard was read'),
      (x: unknown) => x as Error,
    );
    assert.ok(isUserError(e), String(e));
    assert.match(e.message, /:2:/);
  });

  it('a task process that dies idle is replaced; one that dies in a task refuses that task', async () => {
    const p = pool(1);
    const { stats } = (await p.runOne(work, 'sign', 2)) as { stats: { pid: number } };
    process.kill(stats.pid, 'SIGKILL');
    await until('the killed task process is gone', () => !running(stats.pid));
    // Its end reaches the pool with the next turns of the event loop (a task handed to it before
    // then is refused, and the queue runs it again).
    await new Promise((r) => setTimeout(r, 300));
    const next = (await p.runOne(work, 'sign', 3)) as { stats: { pid: number } };
    assert.notEqual(next.stats.pid, stats.pid);
    // A task that pauses before its commit, killed there: the run is refused, not left waiting.
    const slowWork = path.join(dir, 'work-slow');
    fs.cpSync(work, slowWork, { recursive: true });
    fs.rmSync(path.join(slowWork, 'sign', '00000'), { recursive: true });
    const slow = pool(1);
    withFaultEnv({ pauseMs: 60000 }, () => slow.start());
    const running0 = slow.runOne(slowWork, 'sign', 0);
    let tmp: string[] = [];
    await until(
      'the slow task wrote its temp directory',
      () => (tmp = fs.readdirSync(path.join(slowWork, 'sign')).filter((d) => d.includes('.tmp-'))).length === 1,
    );
    const pid = Number(/\.tmp-(\d+)-/.exec(tmp[0]!)![1]);
    process.kill(pid, 'SIGKILL');
    await assert.rejects(running0, /ended \(SIGKILL\) before the task did/);
    assert.equal(readMarker(slowWork, loadJob(slowWork), 'sign', 0), undefined);
  });

  it('a task process that dies of an uncaught error: the refusal quotes its last lines on stderr', async () => {
    // Loaded first in the task process (NODE_OPTIONS), its listener throws before the task's runs.
    const crash = path.join(dir, 'crash.mjs');
    fs.writeFileSync(crash, "process.on('message', () => { throw new Error('boom: the task process died here'); });\n");
    const p = pool(1);
    const saved = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = `${saved ?? ''} --import=${pathToFileURL(crash).href}`.trim();
    try {
      p.start();
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
    }
    const e = await p.runOne(work, 'sign', 0).then(
      () => assert.fail('the task process answered'),
      (x: unknown) => x as Error,
    );
    assert.match(e.message, /^the task process running sign task 0 ended \(exit code 1\) before the task did; its last lines on stderr:\n/);
    assert.match(e.message, /\n {2}Error: boom: the task process died here/);
    assert.ok(e.message.split('\n').length <= 9, e.message);
  });

  it('refuses more than its size of tasks at once, and a task process ignores SIGTERM (its parent decides)', async () => {
    const p = pool(1);
    const slowWork = path.join(dir, 'work-slow2');
    fs.cpSync(work, slowWork, { recursive: true });
    fs.rmSync(path.join(slowWork, 'sign', '00001'), { recursive: true });
    withFaultEnv({ pauseMs: 1500 }, () => p.start());
    const first = p.runOne(slowWork, 'sign', 1);
    await assert.rejects(p.runOne(slowWork, 'sign', 2), /more than 1 tasks at once/);
    let tmp: string[] = [];
    await until('the task wrote its temp directory', () => (tmp = fs.readdirSync(path.join(slowWork, 'sign')).filter((d) => d.includes('.tmp-'))).length === 1);
    process.kill(Number(/\.tmp-(\d+)-/.exec(tmp[0]!)![1]), 'SIGTERM');
    const m = (await first) as { plan: string };
    assert.equal(m.plan, loadJob(slowWork).id);
  });
});
