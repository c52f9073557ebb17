/**
 * A sharded job run by real Slurm array jobs (a one-machine cluster the test starts: munged,
 * slurmctld, slurmd), one array member cancelled with scancel while it runs, the job submitted again
 * and finished: the deduplicated shards equal `neardup dedup` on the concatenation. A spans job
 * run as Slurm arrays writes the bytes of `neardup spans`.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { mainJs, neardup, tmpDir } from '../cliUtil.js';
import { jsonl, plantedDocs, readDocs, writeShards } from '../helpers/shards.js';
import { REQUIRE_ALL } from '../helpers/needs.js';
import { slurmMissing, startSlurm, type SlurmCluster } from '../helpers/slurm.js';
import { getObjects, putObject, s3rverMissing, startS3rver, S3_ENV } from '../helpers/s3.js';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { loadJob } from '../../src/shard/files/job.js';
import { planSlurm, slurmScript } from '../../src/distributed/slurm.js';
import type { WorkDir } from '../../src/shard/workdir/workDir.js';
import { assertSame, cli, corpus, drawOptions, jobArgs, oneProcess, rng, writeCorpus, type Case, type Layout } from '../helpers/spansSets.js';

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

test(
  'a job run as Slurm array jobs chained afterok, one member cancelled mid-stage and resubmitted, equals neardup dedup',
  missing ? { skip: missing } : {},
  async () => {
    const docs = plantedDocs(900, 0.35, 21);
    await writeShards(path.join(dir, 'shards'), docs, 8, ['jsonl.gz', 'jsonl.zst', 'parquet', 'jsonl']);
    fs.writeFileSync(path.join(dir, 'all.jsonl'), jsonl(docs));
    const single = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'dedup', '--out', 'single.jsonl', '-q'], { cwd: dir });
    assert.equal(single.code, 0, single.stderr);
    const plan = neardup([
      'job',
      'plan',
      'shards',
      '--work-dir',
      'job',
      '--id-field',
      'id',
      '--output',
      'dedup',
      '--out-dir',
      'out',
      '--task-bytes',
      '20000',
      '--partitions',
      '3',
    ], { cwd: dir });
    assert.equal(plan.code, 0, plan.stderr);
    // Member 1 of the sign array blocks (as a slow task would) until the test cancels it; after that
    // the wrapper runs neardup as usual.
    const wrapper = path.join(dir, 'neardup.sh');
    fs.writeFileSync(
      wrapper,
      `#!/bin/sh
if [ "$2" = sign ] && [ "$SLURM_ARRAY_TASK_ID" = 1 ] && [ ! -e ${dir}/resume ]; then touch ${dir}/running; exec sleep 600; fi
exec ${process.execPath} ${mainJs} "$@"
`,
      { mode: 0o755 },
    );
    const env = { ...cluster.env };
    const script = neardup(['job', 'submit', '--slurm', '--work-dir', 'job', '--neardup', wrapper, '--print'], { cwd: dir, env });
    assert.equal(script.code, 0, script.stderr);
    assert.match(script.stdout, /sbatch --parsable \$\{dep:\+--dependency=afterok:\$dep\} '?--job-name=neardup-\w+-sign'? '?--array=0-\d+'?/);
    const sub = neardup(['job', 'submit', '--slurm', '--work-dir', 'job', '--neardup', wrapper], { cwd: dir, env });
    assert.equal(sub.code, 0, sub.stderr);
    const ids = Object.fromEntries([...sub.stdout.matchAll(/^(\w+) +Slurm job (\d+)/gm)].map((m) => [m[1]!, m[2]!]));
    assert.deepEqual(Object.keys(ids), ['sign', 'join', 'route', 'gather', 'verify', 'link', 'decide', 'components', 'filter']);
    const deps = cluster.run('squeue', ['-h', '-o', '%F %E', '-j', ids.join!]);
    assert.match(deps, new RegExp(`afterok:${ids.sign}`), 'join waits for the whole sign array');
    await appears(path.join(dir, 'running'), () => fs.readdirSync(path.join(dir, 'job/slurm')).join(' '));
    const twice = neardup(['job', 'submit', '--slurm', '--work-dir', 'job', '--neardup', wrapper], { cwd: dir, env });
    assert.equal(twice.code, 2, 'no second submission while the first is queued');
    assert.match(twice.stderr, /Slurm jobs of this job are still queued or running \(\d+_?\S* neardup-\w+-\w+/);
    cluster.run('scancel', [`${ids.sign}_1`]);
    await cluster.idle();
    // The cancelled member left its task undone; the stages after it never ran (kill_invalid_depend).
    const status = JSON.parse(neardup(['job', 'status', '--work-dir', 'job', '--json'], { cwd: dir }).stdout) as {
      stages: { stage: string; done: number; total: number }[];
    };
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
    assert.equal(
      rep.code,
      0,
      rep.stderr + fs.readdirSync(path.join(dir, 'job/slurm')).map((f) => f + ': ' + fs.readFileSync(path.join(dir, 'job/slurm', f), 'utf8')).join('\n')
        + fs.readFileSync(path.join(cluster.dir, 'log/slurmctld.log'), 'utf8').slice(-4000),
    );
    const kept = (await readDocs(path.join(dir, 'out'))).map((x) => JSON.stringify(x));
    assert.deepEqual(kept, fs.readFileSync(path.join(dir, 'single.jsonl'), 'utf8').split('\n').filter((l) => l !== ''));
  },
);

const s3Missing = missing ?? (REQUIRE_ALL ? undefined : s3rverMissing());

test(
  "a job whose shards, work dir and output shards are in S3, run as Slurm array jobs: neardup dedup's output shards byte for byte",
  s3Missing ? { skip: s3Missing } : {},
  async () => {
    const server = await startS3rver('corpus');
    try {
      const files = await writeShards(path.join(dir, 's3in'), plantedDocs(600, 0.35, 17), 6, ['jsonl.gz', 'jsonl', 'parquet']);
      for (const f of files) await putObject(server, 'corpus', `in/${path.basename(f)}`, fs.readFileSync(f));
      const single = neardup(['dedup', 's3in', '--id-field', 'id', '--output', 'dedup', '--out-dir', 's3single', '-q'], { cwd: dir });
      assert.equal(single.code, 0, single.stderr);
      // The members get the endpoint and credentials from the submitter's environment (sbatch exports it).
      const env = { ...cluster.env, ...S3_ENV };
      const ep = ['--s3-endpoint', server.endpoint];
      const plan = neardup([
        'job',
        'plan',
        's3://corpus/in/',
        '--work-dir',
        's3://corpus/job',
        '--id-field',
        'id',
        '--output',
        'dedup',
        '--out-dir',
        's3://corpus/out/',
        '--task-bytes',
        '20000',
        '--partitions',
        '2',
        '-q',
        ...ep,
      ], { cwd: dir, env });
      assert.equal(plan.code, 0, plan.stderr);
      const sub = neardup(['job', 'submit', '--slurm', '--work-dir', 's3://corpus/job', ...ep], { cwd: dir, env });
      assert.equal(sub.code, 0, sub.stderr);
      assert.deepEqual([...sub.stdout.matchAll(/^(\w+) +Slurm job \d+/gm)].map((m) => m[1]), [
        'sign',
        'join',
        'route',
        'gather',
        'verify',
        'link',
        'decide',
        'components',
        'filter',
      ]);
      await cluster.idle();
      const logs = fs.readdirSync(dir).filter((d) => d.startsWith('slurm-'));
      assert.equal(logs.length, 1, "the members' logs are in the submitting directory");
      const rep = neardup(['job', 'report', '--work-dir', 's3://corpus/job', '-q', ...ep], { cwd: dir, env });
      assert.equal(
        rep.code,
        0,
        rep.stderr + fs.readdirSync(path.join(dir, logs[0]!)).map((f) => f + ': ' + fs.readFileSync(path.join(dir, logs[0]!, f), 'utf8')).join('\n'),
      );
      const got = await getObjects(server, 'corpus', 'out/');
      const want = fs.readdirSync(path.join(dir, 's3single')).sort();
      assert.deepEqual([...got.keys()].sort(), want);
      for (const name of want) assert.ok(got.get(name)!.equals(fs.readFileSync(path.join(dir, 's3single', name))), `${name}: the same bytes`);
    } finally {
      await server.stop();
    }
  },
);

test('job submit without Slurm: --print writes the script, a missing sbatch or --slurm is a usage error', async () => {
  const d = tmpDir();
  try {
    await writeShards(path.join(d, 'shards'), plantedDocs(60, 0.3, 3), 2, ['jsonl']);
    const plan = neardup(['job', 'plan', 'shards', '--work-dir', 'job', '--id-field', 'id'], { cwd: d });
    assert.equal(plan.code, 0, plan.stderr);
    const script = neardup(['job', 'submit', '--slurm', '--work-dir', 'job', '--print', '--sbatch', '--partition=cpu --time=1:00:00'], { cwd: d });
    assert.equal(script.code, 0, script.stderr);
    // Pairs output of plain JSONL shards: sign, join, route, verify, link, decide, components (no gather,
    // no filter), each after the previous.
    assert.deepEqual([...script.stdout.matchAll(/--job-name=neardup-\w+-(\w+)/g)].map((m) => m[1]), [
      'sign',
      'join',
      'route',
      'verify',
      'link',
      'decide',
      'components',
    ]);
    assert.equal(script.stdout.match(/\$\{dep:\+--dependency=afterok:\$dep\}/g)?.length, 7);
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

/** The argument lists the fake sbatch recorded in `log`, one per call. */
function sbatchCalls(log: string): string[][] {
  const parts = fs.readFileSync(log, 'utf8').split('\0');
  const calls: string[][] = [];
  for (let i = 0; i + 1 < parts.length;) {
    const n = Number(parts[i++]);
    calls.push(parts.slice(i, i + n));
    i += n;
  }
  return calls;
}

/** What sbatch makes of a file name pattern: `%%` is `%`, `%A` the array job, `%a` the member, any other `%x` something else. */
function sbatchExpand(pattern: string): string {
  return pattern.replace(/%(%|A|a|j|[a-zA-Z])/g, (_, c: string) => (c === '%' ? '%' : c === 'A' ? '<A>' : c === 'a' ? '<a>' : `<${c}?>`));
}

// #48: a work dir (or log directory) holding `%`, spaces, quotes or `$` reaches sbatch as itself: the
// --output pattern expands to the intended log file, and the printed script, run by sh, hands sbatch
// exactly the arguments neardup built.
test('sbatch arguments: --output names the log directory whatever it holds, and the script passes every argument as built', async () => {
  const d = tmpDir();
  try {
    await writeShards(path.join(d, 'shards'), plantedDocs(40, 0.3, 5), 2, ['jsonl']);
    assert.equal(neardup(['job', 'plan', 'shards', '--work-dir', 'job', '--id-field', 'id'], { cwd: d }).code, 0);
    const job = loadJob(path.join(d, 'job'));
    const bin = path.join(d, 'bin');
    fs.mkdirSync(bin);
    // A fake sbatch: records its arguments (their count, then each, NUL-terminated) and answers a job
    // id. A shell script, not a Node one: 25 runs of ~9 calls each took 20 s in Node start-ups.
    fs.writeFileSync(path.join(bin, 'sbatch'), '#!/bin/sh\nprintf \'%s\\0\' "$#" "$@" >> "$SBATCH_LOG"\necho 42\n', { mode: 0o755 });
    const name = fc.string({ unit: fc.constantFrom('a', 'b', '%', ' ', "'", '"', '$', '`', '\\', '-', '/', 'é', 'A'), minLength: 1, maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(name, name, async (work, logDir) => {
        const wd = { name: `/data/${work}`, isDone: async () => false } as unknown as WorkDir;
        const logs = `/logs/${logDir}`;
        const stages = await planSlurm(wd, job, { neardup: ['/usr/bin/node', '/opt/near dup/main.js'], cwd: `/c/${work}`, extra: ['--partition=a b'], logs });
        assert.ok(stages.length > 0);
        for (const s of stages) {
          const output = s.args.find((a) => a.startsWith('--output='))!.slice('--output='.length);
          assert.equal(sbatchExpand(output), `${logs}/${s.stage}-<A>_<a>.log`, output);
        }
        const log = path.join(d, `sbatch-${Math.random().toString(36).slice(2)}.log`);
        const script = path.join(d, 'submit.sh');
        fs.writeFileSync(script, slurmScript(stages));
        execFileSync('sh', [script], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, SBATCH_LOG: log } });
        const calls = sbatchCalls(log);
        assert.deepEqual(calls.map((c) => c.filter((a) => a !== '--parsable' && !a.startsWith('--dependency='))), stages.map((s) => s.args));
        fs.rmSync(log);
      }),
      { numRuns: 25 },
    );
    // The hints job submit prints name the work dir as a shell word.
    const odd = 'my job 50%';
    fs.renameSync(path.join(d, 'job'), path.join(d, odd));
    const log = path.join(d, 'submit.log');
    const r = neardup(['job', 'submit', '--slurm', '--work-dir', odd], { cwd: d, env: { PATH: `${bin}:${process.env.PATH}`, SBATCH_LOG: log } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /neardup job report --work-dir 'my job 50%' \(progress: neardup job status --work-dir 'my job 50%'\)/);
    const first = sbatchCalls(log)[0]!;
    assert.ok(first.includes(`--output=${path.join(d, 'my job 50%%', 'slurm')}/sign-%A_%a.log`), first.join(' '));
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});

// #50: job spans on Slurm arrays writes what `neardup spans` writes (drawn sets of test/e2e/job-spans's
// generator, a substring one among them, so that the anchor stages run as arrays too).
test('job spans run as Slurm array jobs: the one-process output, audit and summary', missing ? { skip: missing } : {}, async () => {
  const sets: Case[] = [];
  for (let k = 0; sets.length < 3 && k < 200; k++) {
    const r = rng(5000 + k);
    const o: Layout = { ids: r.chance(0.6), invalid: r.chance(0.2), format: r.pick(['jsonl', 'csv', 'tsvq'] as const) };
    const docs = corpus(r, 12 + r.int(30));
    const drawn = drawOptions(r, o);
    const substring = drawn.args.includes('substring');
    // The first two as drawn, the third a substring set.
    if (sets.length === 2 && !substring) continue;
    writeCorpus(r, path.join(dir, `spans-${k}`, 'in'), docs, 2 + r.int(3), o);
    sets.push(await oneProcess(path.join(dir, `spans-${k}`), drawn));
  }
  assert.ok(sets.some((c) => c.drawn.args.includes('substring')), 'a substring set drawn');
  for (const [k, c] of sets.entries()) {
    const work = path.join(c.dir, 'slurm-work');
    const plan = await cli(['job', 'spans', path.join(c.dir, 'in'), ...jobArgs(c, 'slurm'), '--task-bytes', '1', '--partitions', '2', '--plan-only']);
    assert.equal(plan.code, 0, plan.stderr);
    const sub = neardup(['job', 'submit', '--slurm', '--work-dir', work], { cwd: c.dir, env: cluster.env });
    assert.equal(sub.code, 0, sub.stderr);
    assert.ok([...sub.stdout.matchAll(/^(spans-\w+(?:-\w+)?) +Slurm job \d+/gm)].length >= 5, sub.stdout);
    await cluster.idle();
    const rep = await cli(['job', 'report', '--work-dir', work, '--json']);
    assert.equal(rep.code, 0, rep.stderr);
    assertSame(c, 'slurm', rep.stdout, `set ${k} (${c.drawn.args.join(' ')}), on Slurm`);
  }
});
