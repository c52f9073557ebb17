/**
 * A sharded job run by real Slurm array jobs (a one-machine cluster the test starts: munged,
 * slurmctld, slurmd), one array member cancelled with scancel while it runs, the job submitted again
 * and finished: the deduplicated shards equal `neardup dedup` on the concatenation.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { mainJs, neardup, tmpDir } from './cliUtil.js';
import { jsonl, plantedDocs, readDocs, writeShards } from './helpers/shards.js';
import { REQUIRE_ALL } from './helpers/needs.js';
import { slurmMissing, startSlurm, type SlurmCluster } from './helpers/slurm.js';
import { getObjects, putObject, s3rverMissing, startS3rver, S3_ENV } from './helpers/s3.js';

const missing = REQUIRE_ALL ? undefined : slurmMissing();
let cluster: SlurmCluster;
let dir: string;

before(async () => {
  if (missing) return;
  cluster = await startSlurm();
  dir = tmpDir();
});

after(async () => {
  if (missing) return;
  await cluster.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Waits for `file` to exist (a job writes it). */
async function appears(file: string, log: () => string): Promise<void> {
  for (let i = 0; !fs.existsSync(file); i++) {
    if (i > 1200) throw new Error(`${file} never appeared\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a job run as Slurm array jobs chained afterok, one member cancelled mid-stage and resubmitted, equals neardup dedup', missing ? { skip: missing } : {}, async () => {
  const docs = plantedDocs(900, 0.35, 21);
  await writeShards(path.join(dir, 'shards'), docs, 8, ['jsonl.gz', 'jsonl.zst', 'parquet', 'jsonl']);
  fs.writeFileSync(path.join(dir, 'all.jsonl'), jsonl(docs));
  const single = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'dedup', '--out', 'single.jsonl', '-q'], { cwd: dir });
  assert.equal(single.code, 0, single.stderr);
  const plan = neardup(['job', 'plan', 'shards', '--work-dir', 'job', '--id-field', 'id', '--output', 'dedup', '--out-dir', 'out', '--task-bytes', '20000', '--partitions', '3'], { cwd: dir });
  assert.equal(plan.code, 0, plan.stderr);
  // Member 1 of the sign array blocks (as a slow task would) until the test cancels it; after that
  // the wrapper runs neardup as usual.
  const wrapper = path.join(dir, 'neardup.sh');
  fs.writeFileSync(wrapper, `#!/bin/sh
if [ "$2" = sign ] && [ "$SLURM_ARRAY_TASK_ID" = 1 ] && [ ! -e ${dir}/resume ]; then touch ${dir}/running; exec sleep 600; fi
exec ${process.execPath} ${mainJs} "$@"
`, { mode: 0o755 });
  const env = { ...cluster.env };
  const script = neardup(['job', 'submit', '--slurm', '--work-dir', 'job', '--neardup', wrapper, '--print'], { cwd: dir, env });
  assert.equal(script.code, 0, script.stderr);
  assert.match(script.stdout, /sbatch --parsable \$\{dep:\+--dependency=afterok:\$dep\} '?--job-name=neardup-\w+-sign'? '?--array=0-\d+'?/);
  const sub = neardup(['job', 'submit', '--slurm', '--work-dir', 'job', '--neardup', wrapper], { cwd: dir, env });
  assert.equal(sub.code, 0, sub.stderr);
  const ids = Object.fromEntries([...sub.stdout.matchAll(/^(\w+) +Slurm job (\d+)/gm)].map((m) => [m[1]!, m[2]!]));
  assert.deepEqual(Object.keys(ids), ['sign', 'join', 'route', 'gather', 'verify', 'components', 'filter']);
  const deps = cluster.run('squeue', ['-h', '-o', '%F %E', '-j', ids.join!]);
  assert.match(deps, new RegExp(`afterok:${ids.sign}`), 'join waits for the whole sign array');
  await appears(path.join(dir, 'running'), () => fs.readdirSync(path.join(dir, 'job/slurm')).join(' '));
  const twice = neardup(['job', 'submit', '--slurm', '--work-dir', 'job', '--neardup', wrapper], { cwd: dir, env });
  assert.equal(twice.code, 2, 'no second submission while the first is queued');
  assert.match(twice.stderr, /Slurm jobs of this job are still queued or running \(\d+_?\S* neardup-\w+-\w+/);
  cluster.run('scancel', [`${ids.sign}_1`]);
  await cluster.idle();
  // The cancelled member left its task undone; the stages after it never ran (kill_invalid_depend).
  const status = JSON.parse(neardup(['job', 'status', '--work-dir', 'job', '--json'], { cwd: dir }).stdout) as { stages: { stage: string; done: number; total: number }[] };
  const sign = status.stages.find((s) => s.stage === 'sign')!;
  assert.equal(sign.done, sign.total - 1, 'every sign task but the cancelled one is done');
  assert.equal(status.stages.find((s) => s.stage === 'join')!.done, 0);
  const early = neardup(['job', 'report', '--work-dir', 'job'], { cwd: dir });
  assert.equal(early.code, 2);
  fs.writeFileSync(path.join(dir, 'resume'), '');
  const again = neardup(['job', 'submit', '--slurm', '--work-dir', 'job', '--neardup', wrapper], { cwd: dir, env });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^sign +Slurm job \d+ \(1 task\)$/m, 'only the cancelled task is submitted again');
  await cluster.idle();
  const rep = neardup(['job', 'report', '--work-dir', 'job', '-q'], { cwd: dir });
  assert.equal(rep.code, 0, rep.stderr + fs.readdirSync(path.join(dir, 'job/slurm')).map((f) => f + ': ' + fs.readFileSync(path.join(dir, 'job/slurm', f), 'utf8')).join('\n') + fs.readFileSync(path.join(cluster.dir, 'log/slurmctld.log'), 'utf8').slice(-4000));
  const kept = (await readDocs(path.join(dir, 'out'))).map((x) => JSON.stringify(x));
  assert.deepEqual(kept, fs.readFileSync(path.join(dir, 'single.jsonl'), 'utf8').split('\n').filter((l) => l !== ''));
});

const s3Missing = missing ?? (REQUIRE_ALL ? undefined : s3rverMissing());

test('a job whose shards, work dir and output shards are in S3, run as Slurm array jobs: neardup dedup\'s output shards byte for byte', s3Missing ? { skip: s3Missing } : {}, async () => {
  const server = await startS3rver('corpus');
  try {
    const files = await writeShards(path.join(dir, 's3in'), plantedDocs(600, 0.35, 17), 6, ['jsonl.gz', 'jsonl', 'parquet']);
    for (const f of files) await putObject(server, 'corpus', `in/${path.basename(f)}`, fs.readFileSync(f));
    const single = neardup(['dedup', 's3in', '--id-field', 'id', '--output', 'dedup', '--out-dir', 's3single', '-q'], { cwd: dir });
    assert.equal(single.code, 0, single.stderr);
    // The members get the endpoint and credentials from the submitter's environment (sbatch exports it).
    const env = { ...cluster.env, ...S3_ENV };
    const ep = ['--s3-endpoint', server.endpoint];
    const plan = neardup(['job', 'plan', 's3://corpus/in/', '--work-dir', 's3://corpus/job', '--id-field', 'id', '--output', 'dedup', '--out-dir', 's3://corpus/out/', '--task-bytes', '20000', '--partitions', '2', '-q', ...ep], { cwd: dir, env });
    assert.equal(plan.code, 0, plan.stderr);
    const sub = neardup(['job', 'submit', '--slurm', '--work-dir', 's3://corpus/job', ...ep], { cwd: dir, env });
    assert.equal(sub.code, 0, sub.stderr);
    assert.deepEqual([...sub.stdout.matchAll(/^(\w+) +Slurm job \d+/gm)].map((m) => m[1]), ['sign', 'join', 'route', 'gather', 'verify', 'components', 'filter']);
    await cluster.idle();
    const logs = fs.readdirSync(dir).filter((d) => d.startsWith('slurm-'));
    assert.equal(logs.length, 1, 'the members\' logs are in the submitting directory');
    const rep = neardup(['job', 'report', '--work-dir', 's3://corpus/job', '-q', ...ep], { cwd: dir, env });
    assert.equal(rep.code, 0, rep.stderr + fs.readdirSync(path.join(dir, logs[0]!)).map((f) => f + ': ' + fs.readFileSync(path.join(dir, logs[0]!, f), 'utf8')).join('\n'));
    const got = await getObjects(server, 'corpus', 'out/');
    const want = fs.readdirSync(path.join(dir, 's3single')).sort();
    assert.deepEqual([...got.keys()].sort(), want);
    for (const name of want) assert.ok(got.get(name)!.equals(fs.readFileSync(path.join(dir, 's3single', name))), `${name}: the same bytes`);
  } finally {
    await server.stop();
  }
});

test('job submit without Slurm: --print writes the script, a missing sbatch or --slurm is a usage error', async () => {
  const d = tmpDir();
  try {
    await writeShards(path.join(d, 'shards'), plantedDocs(60, 0.3, 3), 2, ['jsonl']);
    const plan = neardup(['job', 'plan', 'shards', '--work-dir', 'job', '--id-field', 'id'], { cwd: d });
    assert.equal(plan.code, 0, plan.stderr);
    const script = neardup(['job', 'submit', '--slurm', '--work-dir', 'job', '--print', '--sbatch', '--partition=cpu --time=1:00:00'], { cwd: d });
    assert.equal(script.code, 0, script.stderr);
    // Pairs output of plain JSONL shards: sign, join, route, verify, components (no gather, no
    // filter), each after the previous.
    assert.deepEqual([...script.stdout.matchAll(/--job-name=neardup-\w+-(\w+)/g)].map((m) => m[1]), ['sign', 'join', 'route', 'verify', 'components']);
    assert.equal(script.stdout.match(/\$\{dep:\+--dependency=afterok:\$dep\}/g)?.length, 5);
    assert.match(script.stdout, /--partition=cpu --time=1:00:00 --wrap 'exec .* stage sign --work-dir \S+ --task "\$SLURM_ARRAY_TASK_ID" --tasks 1'/);
    const noSbatch = neardup(['job', 'submit', '--slurm', '--work-dir', 'job'], { cwd: d, env: { PATH: '/nonexistent' } });
    assert.equal(noSbatch.code, 2, noSbatch.stderr);
    assert.match(noSbatch.stderr, /^neardup: cannot run sbatch \(ENOENT\): is Slurm installed here\?/);
    const noScheduler = neardup(['job', 'submit', '--work-dir', 'job'], { cwd: d });
    assert.equal(noScheduler.code, 2);
    assert.match(noScheduler.stderr, /say where to submit: --slurm/);
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});
