/**
 * Sharded dedup jobs (#13): stages run in this process, as array jobs, and on three BullMQ workers
 * that share nothing but Redis and one directory, with and without a worker killed mid-task; they
 * must give exactly the pairs and clusters of single-process `neardup dedup`. Also --against
 * (against brute force) and bad shards. The same job with its inputs, work dir and outputs in S3 is
 * in distributed-s3.test.ts. The commands whose process is not what is tested (dedup, --local jobs, array
 * stages, reports) run in this process (cliIn); the BullMQ submitters and workers are processes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startRedis, type RedisChild } from '../helpers/redis.js';
import { needsRedis } from '../helpers/needs.js';
import {
  jsonl,
  plantedDocs,
  readDocs,
  shardedCorpus,
  sortedLines,
  startWorker,
  writeShards,
  type Doc,
  type ShardFormat,
  type WorkerChild,
} from '../helpers/shards.js';
import { neardupAsync } from '../helpers/procs.js';
import { cliIn } from '../helpers/inProcessCli.js';
import { writeParquet } from '../helpers/formats.js';
import { createTextSigner } from '../../src/sketch/textSigner.js';
import { bruteForcePairs } from '../../src/similarity/bruteForce.js';
import { formatPair, formatSimilarity } from '../../src/io/write/write.js';
import { tempDirs } from '../../src/shard/files/commit.js';
import { faultEnv } from '../helpers/faults.js';

const FORMATS: ShardFormat[] = ['jsonl.gz', 'jsonl.zst', 'parquet', 'jsonl'];
const SHARDS = 24;

describe('sharded dedup jobs', () => {
  let dir: string;
  let docs: Doc[];
  let shardDir: string;
  let singlePairs: string[];
  let singleClusters: string[];

  before(async () => {
    ({ dir, docs, shardDir, singlePairs, singleClusters } = await shardedCorpus(SHARDS, FORMATS));
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('in one process (--local): the same pairs, clusters and deduplicated shards as neardup dedup', async () => {
    const r = await cliIn(['job', 'dedup', shardDir, '--local', '--work-dir', 'local', '--id-field', 'id', '--out', 'local.tsv'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`pairs +${singlePairs.length.toLocaleString('en-US')} `));
    assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 'local.tsv'), 'utf8')), singlePairs);
    const c = await cliIn(
      ['job', 'dedup', shardDir, '--local', '--work-dir', 'local-c', '--id-field', 'id', '--output', 'clusters', '--out', 'local.jsonl', '-q'],
      { cwd: dir },
    );
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 'local.jsonl'), 'utf8')), singleClusters);
    // dedup: the output shards, concatenated, are single-process dedup's output, in the input formats.
    const s = await cliIn(['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'dedup', '--out', 'single-dedup.jsonl', '-q'], { cwd: dir });
    assert.equal(s.code, 0, s.stderr);
    const d = await cliIn(['job', 'dedup', shardDir, '--local', '--work-dir', 'local-d', '--id-field', 'id', '--output', 'dedup', '--out-dir', 'out', '-q'], {
      cwd: dir,
    });
    assert.equal(d.code, 0, d.stderr);
    const outs = fs.readdirSync(path.join(dir, 'out')).sort();
    assert.deepEqual(
      outs,
      [...fs.readdirSync(shardDir), '_SUCCESS'].sort(),
      'one output shard per input shard, same names (format and compression), and the marker',
    );
    const kept = (await readDocs(path.join(dir, 'out'))).map((x) => JSON.stringify(x));
    assert.deepEqual(kept, fs.readFileSync(path.join(dir, 'single-dedup.jsonl'), 'utf8').split('\n').filter((l) => l !== ''));
    assert.equal(fs.readFileSync(path.join(dir, 'out', 'part-0001.jsonl.zst')).readUInt32LE(0), 0xfd2fb528, 'zstd output for zstd input');
    assert.equal(fs.readFileSync(path.join(dir, 'out', 'part-0002.parquet')).toString('latin1', 0, 4), 'PAR1', 'Parquet output for Parquet input');
  });

  it('as array jobs (neardup stage with Slurm / Kubernetes indices): the same pairs', async () => {
    const plan = await cliIn(['job', 'plan', shardDir, '--work-dir', 'array', '--id-field', 'id', '--partitions', '7', '--task-bytes', '3000'], { cwd: dir });
    assert.equal(plan.code, 0, plan.stderr);
    const run = async (stage: string, env: Record<string, string>, args: string[] = []): Promise<void> => {
      const r = await cliIn(['stage', stage, '--work-dir', 'array', ...args], { cwd: dir, env });
      assert.equal(r.code, 0, `${stage}: ${r.stderr}`);
    };
    // Slurm: an array of 3 members over the shards; Kubernetes: JOB_COMPLETION_INDEX with --tasks.
    for (let i = 0; i < 3; i++) await run('sign', { SLURM_ARRAY_TASK_ID: String(10 + i), SLURM_ARRAY_TASK_MIN: '10', SLURM_ARRAY_TASK_COUNT: '3' });
    // Before every join has run, later stages refuse.
    const early = await cliIn(['stage', 'gather', '--work-dir', 'array', '--task', '0'], { cwd: dir });
    assert.equal(early.code, 2, 'a stage run before the one it reads is a usage error');
    assert.match(early.stderr, /join task \d+ has not completed/);
    for (let i = 0; i < 2; i++) await run('join', { JOB_COMPLETION_INDEX: String(i) }, ['--tasks', '2']);
    await run('route', {}, ['--all']);
    await run('gather', {}, ['--all']);
    for (let i = 0; i < 3; i++) await run('verify', {}, ['--task', String(i), '--tasks', '3']);
    await run('link', {}, ['--all']);
    await run('decide', {}, ['--all']);
    await run('components', {}, ['--all']);
    const rep = await cliIn(['job', 'report', '--work-dir', 'array', '--out', 'array.tsv', '-q'], { cwd: dir });
    assert.equal(rep.code, 0, rep.stderr);
    assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 'array.tsv'), 'utf8')), singlePairs);
  });

  describe('on BullMQ workers', needsRedis(), () => {
    let redis: RedisChild;
    const workers: WorkerChild[] = [];
    before(async () => {
      redis = await startRedis();
    });
    after(async () => {
      for (const w of workers) await w.kill();
      await redis?.stop();
    });

    it('three workers in their own directories give the single-process pairs and clusters', async () => {
      for (let i = 0; i < 3; i++) workers.push(startWorker(redis.url, path.join(dir, `w${i}`), ['--lock-ms', '3000', '--stalled-ms', '500']));
      await Promise.all(workers.map((w) => w.waitFor(/worker ready/)));
      const work = path.join(dir, 'shared', 'job1');
      const r = await neardupAsync([
        'job',
        'dedup',
        shardDir,
        '--redis',
        redis.url,
        '--work-dir',
        work,
        '--id-field',
        'id',
        '--out',
        'q.tsv',
        '--partitions',
        '16',
        '--task-bytes',
        '1',
      ], dir);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 'q.tsv'), 'utf8')), singlePairs);
      // Every worker took part.
      for (const w of workers) assert.match(w.log(), /task done/);
      const c = await neardupAsync([
        'job',
        'dedup',
        shardDir,
        '--redis',
        redis.url,
        '--work-dir',
        path.join(dir, 'shared', 'job1c'),
        '--id-field',
        'id',
        '--output',
        'clusters',
        '--out',
        'q.jsonl',
      ], dir);
      assert.equal(c.code, 0, c.stderr);
      assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 'q.jsonl'), 'utf8')), singleClusters);
    });

    it("a worker SIGKILLed in the middle of a task: the job finishes with the same result, the killed task's files are never committed", async () => {
      // A fourth worker that pauses each task after writing its temp output, before committing.
      const slow = startWorker(redis.url, path.join(dir, 'w-slow'), ['--lock-ms', '2000', '--stalled-ms', '500'], faultEnv({ pauseMs: 60000 }));
      workers.push(slow);
      await slow.waitFor(/worker ready/);
      const work = path.join(dir, 'shared', 'job2');
      const done = neardupAsync(
        ['job', 'dedup', shardDir, '--redis', redis.url, '--work-dir', work, '--id-field', 'id', '--out', 'k.tsv', '--task-bytes', '1'],
        dir,
      );
      const m = await slow.waitFor(/task start (\w+) (\d+)/);
      // Wait until its temp directory exists (it has written output), then kill it.
      let leftovers: string[] = [];
      for (let i = 0; i < 200 && leftovers.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        leftovers = (await tempDirs(work)).filter((d) => d.includes(`${m[1]}${path.sep}.${m[2]!.padStart(5, '0')}.tmp-`));
      }
      assert.equal(leftovers.length, 1, `the slow worker's temp dir for ${m[1]} ${m[2]}`);
      // The worker runs its tasks in a task process of its own: the temp dir is named by its pid.
      const taskPid = Number(/\.tmp-(\d+)-/.exec(leftovers[0]!)![1]);
      assert.notEqual(taskPid, slow.child.pid);
      await slow.kill('SIGKILL');
      // Its task process does not outlive it (it would commit the task in a minute otherwise).
      const alive = (): boolean => {
        try {
          // A zombie (ended, not yet reaped by whoever adopted it) is not running.
          return !/^\d+ \(.*\) Z /.test(fs.readFileSync(`/proc/${taskPid}/stat`, 'utf8'));
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(!alive(), `task process ${taskPid} outlived its killed worker`);
      const r = await done;
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 'k.tsv'), 'utf8')), singlePairs);
      // The killed task's directory is still a temp directory; the task was committed by another worker.
      assert.ok(fs.existsSync(leftovers[0]!), 'the killed task left its temp directory');
      assert.ok(!fs.existsSync(path.join(leftovers[0]!, '_SUCCESS.json')));
      assert.ok(fs.existsSync(path.join(work, m[1]!, m[2]!.padStart(5, '0'), '_SUCCESS.json')));
      const redone = workers.slice(0, 3).some((w) => w.log().includes(`task start ${m[1]} ${m[2]} `));
      assert.ok(redone, 'another worker ran the killed task again');
    });

    it('--against: exactly the cross pairs of brute force, in one process and distributed', async () => {
      const { corpus, reference, expected } = againstCase();
      fs.mkdirSync(path.join(dir, 'ag', 'new'), { recursive: true });
      fs.mkdirSync(path.join(dir, 'ag', 'old'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'ag', 'new.jsonl'), jsonl(corpus));
      fs.writeFileSync(path.join(dir, 'ag', 'old.jsonl'), jsonl(reference));
      await writeShards(path.join(dir, 'ag', 'new'), corpus, 6, FORMATS);
      await writeShards(path.join(dir, 'ag', 'old'), reference, 5, FORMATS);
      const one = await cliIn(['dedup', 'ag/new.jsonl', '--against', 'ag/old.jsonl', '--id-field', 'id', '--out', 'ag1.tsv'], { cwd: dir });
      assert.equal(one.code, 0, one.stderr);
      assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 'ag1.tsv'), 'utf8')), expected);
      const dist = await neardupAsync([
        'job',
        'dedup',
        'ag/new',
        '--against',
        'ag/old',
        '--redis',
        redis.url,
        '--work-dir',
        path.join(dir, 'shared', 'ag'),
        '--id-field',
        'id',
        '--out',
        'ag2.tsv',
      ], dir);
      assert.equal(dist.code, 0, dist.stderr);
      assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 'ag2.tsv'), 'utf8')), expected);
      // dedup: NEW without its near duplicates of OLD, the same in both.
      const d1 = await cliIn(['dedup', 'ag/new.jsonl', '--against', 'ag/old.jsonl', '--id-field', 'id', '--output', 'dedup', '--out', 'ag1.jsonl', '-q'], {
        cwd: dir,
      });
      assert.equal(d1.code, 0, d1.stderr);
      const matched = new Set(expected.map((l) => l.split('\t')[0]));
      const kept = sortedLines(fs.readFileSync(path.join(dir, 'ag1.jsonl'), 'utf8'));
      assert.deepEqual(kept, sortedLines(jsonl(corpus.filter((c) => !matched.has(c.id)))));
      const d2 = await cliIn([
        'job',
        'dedup',
        'ag/new',
        '--against',
        'ag/old',
        '--local',
        '--work-dir',
        'shared/ag-d',
        '--id-field',
        'id',
        '--output',
        'dedup',
        '--out-dir',
        'ag-out',
        '-q',
      ], { cwd: dir });
      assert.equal(d2.code, 0, d2.stderr);
      assert.deepEqual(sortedLines(jsonl(await readDocs(path.join(dir, 'ag-out')))), kept);
      assert.equal(fs.readdirSync(path.join(dir, 'ag-out')).filter((f) => f !== '_SUCCESS').length, 6, 'no output for reference shards');
    });

    it('a bad shard: named with file and line; the job stops, or skips it and says so', async () => {
      const bad = path.join(dir, 'bad');
      await writeShards(bad, docs.slice(0, 300), 4, ['jsonl']);
      const victim = path.join(bad, 'part-0002.jsonl');
      const lines = fs.readFileSync(victim, 'utf8').split('\n');
      lines[4] = '{"id": "broken", "text": ';
      fs.writeFileSync(victim, lines.join('\n'));
      const stop = await neardupAsync([
        'job',
        'dedup',
        bad,
        '--redis',
        redis.url,
        '--work-dir',
        path.join(dir, 'shared', 'bad1'),
        '--id-field',
        'id',
        '--out',
        'bad1.tsv',
      ], dir);
      assert.equal(stop.code, 2, stop.stderr);
      assert.match(stop.stderr, new RegExp(`sign task \\d+: ${victim.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:5: `));
      assert.ok(!fs.existsSync(path.join(dir, 'bad1.tsv')), 'no output when the job stops');
      // A Parquet shard whose row group 1 holds a null id: named with its row group and row.
      const pq = path.join(bad, 'part-0004.parquet');
      const ids: (string | null)[] = docs.slice(300, 330).map((d) => d.id);
      ids[12] = null;
      await writeParquet(
        pq,
        [{ name: 'id', data: ids, type: 'STRING', nullable: true }, { name: 'text', data: docs.slice(300, 330).map((d) => d.text), type: 'STRING' }],
        'SNAPPY',
        10,
      );
      const pqStop = await cliIn(['job', 'dedup', pq, '--local', '--work-dir', 'shared/bad-pq', '--id-field', 'id', '-q'], { cwd: dir });
      assert.equal(pqStop.code, 2, pqStop.stderr);
      assert.match(pqStop.stderr, /part-0004\.parquet: row group 1, row 12: id column "id" is null/);
      const skip = await neardupAsync([
        'job',
        'dedup',
        bad,
        '--redis',
        redis.url,
        '--work-dir',
        path.join(dir, 'shared', 'bad2'),
        '--id-field',
        'id',
        '--on-bad-shard',
        'skip',
        '--out',
        'bad2.tsv',
      ], dir);
      assert.equal(skip.code, 0, skip.stderr);
      assert.match(skip.stderr, new RegExp(`skipped +shard ${victim.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*:5: `));
      assert.match(skip.stderr, /skipped +shard .*part-0004\.parquet: .*row group 1, row 12/);
      // The result is that of the other three shards.
      const others = [0, 1, 3].map((s) => fs.readFileSync(path.join(bad, `part-000${s}.jsonl`), 'utf8')).join('');
      fs.writeFileSync(path.join(dir, 'others.jsonl'), others);
      const ref = await cliIn(['dedup', 'others.jsonl', '--id-field', 'id', '--out', 'others.tsv', '-q'], { cwd: dir });
      assert.equal(ref.code, 0, ref.stderr);
      assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 'bad2.tsv'), 'utf8')), sortedLines(fs.readFileSync(path.join(dir, 'others.tsv'), 'utf8')));
    });
  });
});

/**
 * A corpus and a reference sharing planted near copies (both ways), each with near copies inside it
 * too (which must not be reported), and the brute-force cross pairs as TSV lines.
 */
function againstCase(): { corpus: Doc[]; reference: Doc[]; expected: string[] } {
  const pool = plantedDocs(900, 0.4, 23, 'x');
  const corpus: Doc[] = [];
  const reference: Doc[] = [];
  pool.forEach((d, i) => (i % 3 === 0 ? reference : corpus).push({ id: (i % 3 === 0 ? 'old' : 'new') + i, text: d.text }));
  const signer = createTextSigner();
  const all = [...corpus, ...reference];
  const sets = all.map((d) => signer.set(d.text));
  const n = corpus.length;
  const expected = bruteForcePairs(sets, 0.8)
    .filter((p) => p.a < n && p.b >= n)
    .map((p) => formatPair('tsv', corpus[p.a]!.id, reference[p.b - n]!.id, p.similarity));
  assert.ok(expected.length > 50, `only ${expected.length} cross pairs`);
  // And pairs within each side exist (so "none within one side" is tested).
  assert.ok(bruteForcePairs(sets.slice(0, n), 0.8).length > 10);
  void formatSimilarity;
  return { corpus, reference, expected: expected.map((l) => l.trimEnd()).sort() };
}
